#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Result files of "flushkit bench tpcb" and "flushkit bench fsmark": a
# short run writes one (its path on stderr) whose lines parse and hold
# settings, env, per-second progress, monitor samples, checkpoints and
# the summary the report reads; -i, --check alone and --no-results
# write none; an unusable --results DIR fails the run; and
# "flushkit report" on the files draws the page and its plots.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
t=$(mktemp -d /var/tmp/fk-t-results.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
d=$t/data
res=$t/res
small=(--shared-buffers 2M --checkpoint-timeout 1s)

err() { echo "FAIL: $*"; fail=1; }

# -i writes no result file, not even with --results.
"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" --results "$res" \
	"${small[@]}" >init.out 2>&1 || err "init exit $?: $(cat init.out)"
[ ! -e "$res" ] || err "-i wrote a result file: $(ls "$res")"

# Two short runs, naive and smooth (with --sync-io and --jobs).
"$FLUSHKIT" bench tpcb -c 2 -j 2 -T 2 -l --flush=naive --data-dir "$d" \
	--results "$res" "${small[@]}" >naive.out 2>naive.err ||
	err "naive run exit $?: $(cat naive.err)"
"$FLUSHKIT" bench tpcb -c 2 -j 2 -T 2 --flush=smooth --sync-io=threads \
	--jobs 4 --data-dir "$d" --results "$res" "${small[@]}" \
	>smooth.out 2>smooth.err || err "smooth run exit $?: $(cat smooth.err)"
grep -q "^checkpoint sync: threads, up to 4 fsyncs in flight$" smooth.out ||
	err "no sync backend line: $(cat smooth.out)"
grep -q "^checkpoint sync: sequential, one fsync at a time$" naive.out ||
	err "naive is not sequential: $(cat naive.out)"
naive=$(sed -n 's/^result file: //p' naive.err)
smooth=$(sed -n 's/^result file: //p' smooth.err)
[ -f "$naive" ] && [ -f "$smooth" ] ||
	err "result file paths: '$naive' '$smooth': $(ls "$res")"
[ "$(ls "$res" | wc -l)" -eq 2 ] || err "files in $res: $(ls "$res")"
case $naive in "$res"/tpcb-*.jsonl) ;; *) err "name: $naive" ;; esac
[ "$(tail -n1 naive.err)" = "result file: $naive" ] ||
	err "the path is not the last line on stderr: $(tail -n1 naive.err)"

check_tpcb() { # FILE STDOUT FLUSH SYNC_IO JOBS LOGGED
	python3 - "$@" <<'PY'
import json, sys, os
path, out, flush, sync_io, jobs, logged = sys.argv[1:]
lines = [json.loads(l) for l in open(path)]
types = [l["type"] for l in lines]
for t in ("clock", "settings", "env", "progress", "monitor", "summary"):
    assert t in types, (t, types)
assert types.count("settings") == 1 and types.count("summary") == 1
assert types[-1] == "summary", types[-5:]
st = lines[types.index("settings")]
assert st["bench"] == "tpcb" and st["flush"] == flush, st
assert st["clients"] == 2 and st["duration_s"] == 2, st
assert st["shared_buffers"] == "2MB" and st["checkpoint_timeout"] == "1s", st
assert st["store"]["sync_io"] == ("sequential" if flush == "naive" else sync_io), st
assert st["store"]["sync_jobs"] == int(jobs) == st["sync_jobs"], st
assert st["store"]["checkpoint_sorted"] == (flush == "smooth"), st
# preset knobs are labels only when given
assert "checkpoint_sorted" not in st, st
assert ("sync_io" in st) == (flush == "smooth"), st
env = lines[types.index("env")]
assert env["paths"][0]["path"].endswith("/data"), env
prog = [l for l in lines if l["type"] == "progress"]
assert len(prog) >= 2, prog
ts = [p["t_s"] for p in prog]
assert all(0.9 < b - a < 1.1 for a, b in zip(ts, ts[1:])), ts
assert 0.9 < ts[0] < 1.1, ts
for p in prog:
    for k in ("tps", "lat_avg_ms", "lat_stddev_ms", "lat_max_ms"):
        assert p[k] >= 0, p
    assert p["lat_max_ms"] >= p["lat_avg_ms"], p
    # the fsync request queue's fill and the backend fsyncs so far
    assert 0 <= p["fsyncq_queued"] <= p["fsyncq_capacity"], p
    assert p["fsyncq_capacity"] > 0 and p["backend_fsyncs"] >= 0, p
bf = [p["backend_fsyncs"] for p in prog]
assert bf == sorted(bf), bf
mon = [l for l in lines if l["type"] == "monitor"]
assert len(mon) >= 2 and "dirty_kb" in mon[-1], mon[-1:]
ck = [l for l in lines if l["type"] == "checkpoint"]
assert len(ck) >= 1, types
for c in ck:
    assert c["start_s"] <= c["end_s"] and c["error"] == 0, c
    assert c["reason"] != "shutdown", c     # not part of the run
sm = lines[-1]
for k in ("tps", "lat_avg_ms", "lat_p99_ms", "lat_max_ms", "stall_ratio",
          "checkpoints", "backend_fsyncs", "duration_s", "transactions"):
    assert k in sm, (k, sm)
assert sm["sync_io"] == sync_io and sm["sync_jobs"] == int(jobs), sm
# the stall ratio over the seconds after the warm-up (a 2-s run: 1 s
# left), and the seconds a checkpoint ran in (every progress line says
# whether one did; checkpoint_timeout 1s: some did)
assert all(isinstance(p.get("checkpoint"), bool) for p in prog), prog
assert any(p["checkpoint"] for p in prog), prog
assert sm["stall_warmup_s"] == 1 and sm["stall_seconds"] == 1, sm
assert 0 <= sm["checkpoint_seconds"] <= sm["stall_seconds"], sm
for k in ("stall_ratio_checkpoint", "stall_ratio_outside",
          "worst_second_tps_checkpoint", "worst_second_tps_outside"):
    assert k in sm, (k, sm)
if sm["checkpoint_seconds"]:
    assert sm["stall_ratio_checkpoint"] == sm["stall_ratio"], sm
    assert sm["stall_ratio_outside"] is None, sm
assert sm["checkpoints"] >= len(ck) - 1 and sm["exit_status"] == 0, sm
processed = [l for l in open(out) if l.startswith("number of transactions actually processed: ")]
assert int(processed[0].split(": ")[1]) == sm["transactions"], (processed, sm)
# the per-second counts add up to the run's transactions (but for the
# ones in flight at the end)
n = sum(p["tps"] * (b - a) for p, a, b in zip(prog, [0.0] + ts, ts))
assert 0.9 * sm["transactions"] <= n <= sm["transactions"] + 1, (n, sm)
logs = st.get("latency_log")
if logged == "1":
    # one per thread, relative to the result file's directory
    here = os.path.dirname(path)
    assert len(logs) == 2 and all(not os.path.isabs(x) and os.path.exists(os.path.join(here, x)) for x in logs), logs
else:
    assert logs is None, logs
PY
}
check_tpcb "$naive" naive.out naive sequential 32 1 || err "naive result file"
check_tpcb "$smooth" smooth.out smooth threads 4 0 || err "smooth result file"

# --check alone and --no-results: no file.
"$FLUSHKIT" bench tpcb --check --data-dir "$d" --results "$t/none" \
	>check.out 2>&1 || err "check exit $?: $(cat check.out)"
"$FLUSHKIT" bench tpcb -t 10 --no-results --data-dir "$d" \
	>nores.out 2>nores.err || err "--no-results exit $?"
[ ! -e "$t/none" ] && [ ! -e "$t/results" ] ||
	err "result file without a run or with --no-results"
grep -q "result file" nores.err && err "--no-results printed a path"

# A --results DIR that cannot be made: exit 1, nothing run.
"$FLUSHKIT" bench tpcb -t 10 --data-dir "$d" --results /proc/no/such \
	>bad.out 2>bad.err
[ $? -eq 1 ] || err "unusable --results: exit not 1"
grep -q "transaction type" bad.out && err "ran without its result file"
"$FLUSHKIT" bench tpcb --results= --data-dir "$d" >/dev/null 2>&1
[ $? -eq 2 ] || err "empty --results: not a usage error"

# fsmark: the same lines; tps is files per second.
mkdir "$t/fs"
"$FLUSHKIT" bench fsmark -d "$t/fs" -t 2 -n 200 -s 4096 -L 2 -S batch \
	--results "$t/fsres" >fsmark.out 2>fsmark.err ||
	err "fsmark exit $?: $(cat fsmark.err)"
fsm=$(sed -n 's/^result file: //p' fsmark.err)
python3 - "$fsm" <<'PY' || err "fsmark result file: $(cat "$fsm")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
types = [l["type"] for l in lines]
for t in ("clock", "settings", "env", "progress", "monitor", "summary"):
    assert t in types, (t, types)
assert types[-1] == "summary"
st = lines[types.index("settings")]
assert st["bench"] == "fsmark" and st["sync_method"] == "batch", st
assert st["threads"] == 2 and st["files_per_thread"] == 200, st
sm = lines[-1]
assert sm["files"] == 800 and sm["tps"] > 0 and sm["errors"] == 0, sm
assert sm["sync_io"] in ("uring", "threads"), sm
assert 0 < sm["lat_avg_ms"] <= sm["lat_p99_ms"] <= sm["lat_max_ms"], sm
prog = [l for l in lines if l["type"] == "progress"]
# every completed file is in exactly one progress interval
ts = [p["t_s"] for p in prog]
n = sum(p["tps"] * (b - a) for p, a, b in zip(prog, [0.0] + ts, ts))
assert abs(n - 800) < 4, (n, prog)
PY
"$FLUSHKIT" bench fsmark -d "$t/fs" -n 5 --no-results >/dev/null 2>fs2.err ||
	err "fsmark --no-results exit $?"
grep -q "result file" fs2.err && err "fsmark --no-results printed a path"
[ ! -e "$t/results" ] || err "fsmark --no-results wrote $t/results"

# The report draws the page from them.
if command -v gnuplot >/dev/null; then
	"$FLUSHKIT" report "$naive" "$smooth" -o "$t/rep" >rep.out 2>rep.err ||
		err "report exit $?: $(cat rep.err)"
	[ -f "$t/rep/index.html" ] || err "no index.html"
	for p in tps latency scatter dirty iops mbps; do
		[ "$(head -c 4 "$t/rep/$p.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
			err "$p.png is not a PNG"
	done
	grep -q "flush=naive" "$t/rep/index.html" &&
		grep -q "flush=smooth" "$t/rep/index.html" ||
		err "runs not labelled by flush"
	# labelled by what was given (flush, --sync-io, --jobs), not by the
	# knobs the preset implies, nor by the "store" object
	grep -q "title 'flush=naive sync_jobs=32 sync_io=-'" "$t/rep/plots.gp" &&
		grep -q "title 'flush=smooth sync_jobs=4 sync_io=threads'" "$t/rep/plots.gp" &&
		! grep -q "checkpoint_sorted\|store=" "$t/rep/plots.gp" ||
		err "labels: $(grep -o "title '[^']*'" "$t/rep/plots.gp" | sort -u)"
	"$FLUSHKIT" report "$fsm" -o "$t/frep" >frep.out 2>frep.err ||
		err "fsmark report exit $?: $(cat frep.err)"
	[ -f "$t/frep/index.html" ] && [ -s "$t/frep/tps.png" ] ||
		err "fsmark report: no page or tps plot"
	grep -q "set ylabel 'files per second'" "$t/frep/plots.gp" ||
		err "fsmark tps axis is not files per second"
	grep -q "<td>uring</td>\|<td>threads</td>" "$t/frep/index.html" ||
		err "fsmark report: no sync I/O in the table"
	grep -q "<td>sequential</td>" "$t/rep/index.html" &&
		grep -q "<td>threads</td>" "$t/rep/index.html" ||
		err "tpcb report: sync I/O column"
else
	echo "gnuplot not installed: report not checked"
fi

[ $fail -eq 0 ] && echo ok
exit $fail
