#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/peers/tpcb-pg-result.py: the peer's run (pgbench against
# PostgreSQL) becomes a result file that "flushkit compare" and
# "flushkit report" read like bench tpcb's.  From a pgbench summary, its
# -P lines, per-transaction logs of two threads (latencies 1..1000 ms,
# so p99.9 is 999 ms and max 1000 ms), a server log with one checkpoint,
# and pg_stat_bgwriter/pg_stat_wal before and after: the summary has
# tps, the log's percentiles, backend_fsyncs (buffers_backend_fsync
# after minus before), wal_fpi, checkpoints, and no stall ratio of its
# own; the checkpoint line sits on the run's clock and the progress lines
# say which ones a checkpoint ran in (the -P lines end 2.5, 3.5 and 4.5 s
# after t0, the checkpoint ran 1.5-2.75 s: the first two); compare reads
# it with the stall figures flushkit's reader computes from those lines
# (the first second the warm-up, then tps 50 and 100: median 75, worst
# 50 during the checkpoint: 0.667, 100 outside it: 1.333); an aborted
# pgbench makes a failed run that compare refuses.
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-tpcb-peer.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
helper=$FK_SRC/bench/peers/tpcb-pg-result.py
[ -f "$helper" ] || { err "no $helper"; exit 1; }

t0=1796128000 # 2026-12-01 12:26:40 UTC, the server log's clock
cat >pgbench.out <<'OUT'
pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 50
query mode: simple
number of clients: 8
number of threads: 2
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 1000
number of failed transactions: 0 (0.000%)
latency average = 500.500 ms
latency stddev = 288.819 ms
initial connection time = 10.000 ms
tps = 333.333333 (without initial connection time)
OUT
cat >pgbench.err <<'OUT'
progress: 1.0 s, 100.0 tps, lat 10.000 ms stddev 1.000, 0 failed
progress: 2.0 s, 50.0 tps, lat 20.000 ms stddev 2.000, 0 failed
progress: 3.0 s, 100.0 tps, lat 10.000 ms stddev 1.000, 0 failed
OUT
mkdir logs
# client transaction latency_us script epoch us: 500 per thread log
for k in 0 1; do
	for i in $(seq 1 500); do
		lat=$(( (2 * i - 1 + k) * 1000 ))
		echo "$k $i $lat 0 $((t0 + 2)) $((i * 1000))"
	done >"logs/pgbench_log.4242$([ $k = 1 ] && echo .1)"
done
cat >server.log <<'OUT'
2026-12-01 12:26:41.500 UTC [77] LOG:  checkpoint starting: time
2026-12-01 12:26:42.750 UTC [77] LOG:  checkpoint complete: wrote 1234 buffers (0.9%); 0 WAL file(s) added, 0 removed, 3 recycled; write=1.100 s, sync=0.100 s, total=1.250 s; sync files=11, longest=0.050 s, average=0.009 s; distance=100 kB, estimate=100 kB
OUT
before='{"buffers_backend_fsync": 3, "buffers_backend": 10, "buffers_checkpoint": 5, "checkpoints": 2, "wal_fpi": 100, "wal_bytes": 1000, "wal_sync": 7}'
after='{"buffers_backend_fsync": 5, "buffers_backend": 30, "buffers_checkpoint": 1239, "checkpoints": 3, "wal_fpi": 1100, "wal_bytes": 9000, "wal_sync": 17}'
# 2026-12-01 12:26:40 UTC
start=$(date -u -d '2026-12-01 12:26:40' +%s)
python3 "$helper" --out ok.jsonl --pgbench-out pgbench.out \
	--pgbench-err pgbench.err --logs logs --server-log server.log \
	--stats-before "$before" --stats-after "$after" --t0 "$start" \
	--t1 "$((start + 3))" --version "postgres (PostgreSQL) 15.20" \
	--setting checkpoint_flush_after=256kB --setting scale=50 \
	--command "pgbench -c 8 -j 2 -T 3" >helper.out 2>&1 ||
	err "helper exit $?: $(cat helper.out)"
out=$(python3 - ok.jsonl <<'PY'
import json, sys
types = []
marks = []
su = ck = st = None
for line in open(sys.argv[1]):
    o = json.loads(line)
    types.append(o["type"])
    if o["type"] == "summary": su = o
    if o["type"] == "checkpoint": ck = o
    if o["type"] == "settings": st = o
    if o["type"] == "progress": marks.append(o.get("checkpoint"))
bad = []
if marks != [True, True, False]:
    bad.append("checkpoint marks %r, not [True, True, False]" % marks)
def want(k, v, o):
    if o is None or o.get(k) != v:
        bad.append("%s=%r, not %r" % (k, None if o is None else o.get(k), v))
want("tps", 333.333, su); want("transactions", 1000, su)
want("lat_p999_ms", 999.0, su); want("lat_max_ms", 1000.0, su)
want("lat_p50_ms", 500.0, su); want("lat_p99_ms", 990.0, su)
want("backend_fsyncs", 2, su)
if "stall_ratio" in su:
    bad.append("the peer computes a stall ratio of its own")
want("buffers_backend", 20, su); want("wal_fpi", 1000, su)
want("checkpoints", 1, su); want("status", "ok", su)
want("logged_transactions", 1000, su)
want("buffers", 1234, ck); want("start_s", 1.5, ck); want("end_s", 2.75, ck)
want("checkpoint_flush_after", "256kB", st); want("scale", 50, st)
if types[0] != "flushkit" or types.count("progress") != 3 or types[-1] != "summary":
    bad.append("line types %r" % types)
print("; ".join(bad))
PY
)
[ -z "$out" ] || err "result file: $out"
"$FLUSHKIT" compare --json ok.jsonl ok.jsonl >cmp.json 2>cmp.err ||
	err "compare exit $?: $(cat cmp.err)"
grep -q '"lat_p999_ms"' cmp.json || err "compare has no lat_p999_ms: $(head -c 300 cmp.json)"
grep -q '"backend_fsyncs"' cmp.json || err "compare has no backend_fsyncs"
out=$(python3 - cmp.json <<'PY'
import json, sys
m = {x["metric"]: x["a"]["avg"] for x in json.load(open(sys.argv[1]))["metrics"]}
want = {"stall_ratio": 0.667, "stall_ratio_checkpoint": 0.667,
        "stall_ratio_outside": 1.333, "checkpoint_seconds": 1,
        "stall_seconds": 2, "stall_warmup_s": 1, "worst_second_tps": 50,
        "median_second_tps": 75}
def near(x, v):
    return isinstance(x, (int, float)) and abs(x - v) < 0.0005
print("; ".join("%s=%r, not %r" % (k, m.get(k), v)
                for k, v in want.items() if not near(m.get(k), v)))
PY
)
[ -z "$out" ] || err "compare's stall figures: $out"

# An aborted pgbench: a failed run, refused.
echo "Run was aborted; the above results are incomplete." >>pgbench.err
python3 "$helper" --out failed.jsonl --pgbench-out pgbench.out \
	--pgbench-err pgbench.err --logs logs --server-log server.log \
	--stats-before "$before" --stats-after "$after" --t0 "$start" \
	--t1 "$((start + 3))" >helper.out 2>&1 && err "aborted run: helper exit 0"
grep -q '"status":"failed"' failed.jsonl || err "aborted run not failed: $(tail -1 failed.jsonl)"
"$FLUSHKIT" compare failed.jsonl ok.jsonl >cmp.out 2>&1 &&
	err "compare took a failed run"
grep -q "failed run" cmp.out || err "compare: $(cat cmp.out)"
exit $fail
