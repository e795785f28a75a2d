#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/tpcb.sh - the checkpoint-flushing benchmark: TPC-B (sort of) with checkpoints,
# flushkit's page store with --flush=naive and --flush=smooth alternated,
# and PostgreSQL 15 + pgbench as the peer with checkpoint_flush_after 0
# and 256kB, all at the same scale, clients, duration, shared_buffers and
# checkpoint settings.  Prints a table (tps, latency avg/stddev/p99/max,
# stall ratio = worst one-second tps / median one-second tps) and keeps
# every output file under results/tpcb-DATE/.
#
# Every parameter can be overridden from the environment, e.g. a short
# run:   SCALE=5 DURATION=20 RUNS=1 bench/peers/tpcb.sh
#
#   SCALE=50 CLIENTS=8 DURATION=120 RUNS=3 PROGRESS=1
#   SHARED_BUFFERS=1GB CHECKPOINT_TIMEOUT=30s MAX_WAL_SIZE=8GB
#   CHECKPOINT_COMPLETION_TARGET=0.9
#   FLUSHKIT=build/flushkit  WORK=/var/tmp/flushkit-bench-tpcb
#   PG_BIN=/usr/lib/postgresql/15/bin  PG_PORT=54329  PG=1 (0: skip peer)
#   FK=1 (0: skip flushkit)  KEEP=1 (keep data directories)
#
# The script installs nothing.  The peer needs Debian's postgresql-15
# (PG_BIN) and the user "postgres"; it runs as root and starts its own
# cluster (initdb in WORK, listening on 127.0.0.1:PG_PORT and a unix
# socket in WORK), stopped again on exit, also when interrupted.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
SCALE=${SCALE:-50}
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-120}
RUNS=${RUNS:-3}
PROGRESS=${PROGRESS:-1}
SHARED_BUFFERS=${SHARED_BUFFERS:-1GB}
CHECKPOINT_TIMEOUT=${CHECKPOINT_TIMEOUT:-30s}
MAX_WAL_SIZE=${MAX_WAL_SIZE:-8GB}
CHECKPOINT_COMPLETION_TARGET=${CHECKPOINT_COMPLETION_TARGET:-0.9}
FLUSHKIT=${FLUSHKIT:-$here/build/flushkit}
WORK=${WORK:-/var/tmp/flushkit-bench-tpcb}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_PORT=${PG_PORT:-54329}
PG=${PG:-1}
FK=${FK:-1}
KEEP=${KEEP:-0}

stamp=$(date +%Y%m%d-%H%M%S)
out=$here/results/tpcb-$stamp
mkdir -p "$out"
summary=$out/runs.tsv

die() { log "error: $*"; exit 1; }
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$out/bench.log" >&2; }

pg_running=0
pgdata=$WORK/pg
pgsock=$WORK/pgsock
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ "$pg_running" = 1 ]; then
		log "stopping PostgreSQL"
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata" -m fast \
			-w stop >/dev/null 2>&1 || true
		pg_running=0
	fi
	[ -f "$pgdata/server.log" ] &&
		cp -- "$pgdata/server.log" "$out/pg-server.log"
	if [ "$KEEP" != 1 ]; then
		rm -rf -- "$pgdata" "$pgsock" "$WORK/fk"
		rmdir -- "$WORK" 2>/dev/null || true
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# Unit conversion for flushkit's knobs: PostgreSQL's "1GB" is 1 GiB, as
# flushkit's "1GB"; both accept the same strings.
mkdir -p "$WORK"
{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) cpus, $(free -g | awk '/Mem:/ {print $2}') GiB"
	echo "filesystem: $(df -T "$WORK" | awk 'NR == 2 {print $1, $2}')"
	echo "scale=$SCALE clients=$CLIENTS duration=$DURATION runs=$RUNS"
	echo "shared_buffers=$SHARED_BUFFERS checkpoint_timeout=$CHECKPOINT_TIMEOUT max_wal_size=$MAX_WAL_SIZE checkpoint_completion_target=$CHECKPOINT_COMPLETION_TARGET"
	[ -x "$FLUSHKIT" ] && echo "flushkit: $("$FLUSHKIT" --version)"
	[ -x "$PG_BIN/postgres" ] && echo "postgres: $("$PG_BIN/postgres" --version)"
} >"$out/setup.txt"
cat "$out/setup.txt" >&2
printf 'system\tconfig\trun\ttps\tlat_avg_ms\tlat_stddev_ms\tp99_ms\tmax_ms\tstall_ratio\n' >"$summary"

# ---- flushkit ----
fk_opts=(--shared-buffers "$SHARED_BUFFERS"
	--checkpoint-timeout "$CHECKPOINT_TIMEOUT"
	--max-wal-size "$MAX_WAL_SIZE"
	--checkpoint-completion-target "$CHECKPOINT_COMPLETION_TARGET")

fk_run() {	# MODE RUN
	local mode=$1 run=$2 base=$out/fk-$1-$2
	log "flushkit --flush=$mode run $run: ${DURATION}s"
	"$FLUSHKIT" bench tpcb -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" \
		-P "$PROGRESS" --flush="$mode" --data-dir "$WORK/fk" \
		"${fk_opts[@]}" --json >"$base.json" 2>"$base.log" ||
		die "flushkit failed: see $base.log"
	python3 - "$base.json" "$mode" "$run" >>"$summary" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
l = d["latency_ms"]
sr = d["stall_ratio"]
print("flushkit\t%s\t%s\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%s" % (
    sys.argv[2], sys.argv[3], d["tps"], d["latency_avg_ms"],
    d["latency_stddev_ms"], l["p99"], l["max"],
    "%.3f" % sr if sr is not None else "n/a"))
EOF
	tail -n 1 "$summary" >&2
}

# ---- PostgreSQL ----
pg_setup() {
	if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pgbench" ]; then
		log "no PostgreSQL 15 under $PG_BIN: skipping the peer"
		return 1
	fi
	if ! id postgres >/dev/null 2>&1; then
		log "no user postgres: skipping the peer"
		return 1
	fi
	rm -rf -- "$pgdata" "$pgsock"
	mkdir -p "$pgdata" "$pgsock"
	chown postgres: "$pgdata" "$pgsock"
	chmod 700 "$pgdata"
	log "initdb $pgdata"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$pgdata" -A trust \
		-U postgres >"$out/pg-initdb.log" 2>&1 ||
		die "initdb failed: see $out/pg-initdb.log"
	cat >>"$pgdata/postgresql.conf" <<EOF
# bench/peers/tpcb.sh
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$pgsock'
shared_buffers = '$SHARED_BUFFERS'
checkpoint_timeout = '$CHECKPOINT_TIMEOUT'
max_wal_size = '$MAX_WAL_SIZE'
checkpoint_completion_target = $CHECKPOINT_COMPLETION_TARGET
log_checkpoints = on
max_connections = $((CLIENTS + 20))
EOF
	pg_running=1	# from here on, cleanup stops it (no-op if down)
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata" -w \
		-l "$pgdata/server.log" start >/dev/null 2>&1 || {
		tail -n 5 "$pgdata/server.log" >&2
		die "PostgreSQL did not start"
	}
	log "pgbench -i -s $SCALE"
	"$PG_BIN/pgbench" -h "$pgsock" -p "$PG_PORT" -U postgres -i \
		-s "$SCALE" postgres >"$out/pg-init.log" 2>&1 ||
		die "pgbench -i failed: see $out/pg-init.log"
}

pg_sql() {
	"$PG_BIN/psql" -h "$pgsock" -p "$PG_PORT" -U postgres -X -q -At \
		-c "$1" postgres
}

pg_run() {	# FLUSH_AFTER RUN
	local fa=$1 run=$2 base=$out/pg-$1-$2
	log "PostgreSQL checkpoint_flush_after=$fa run $run: ${DURATION}s"
	if ! pg_sql "ALTER SYSTEM SET checkpoint_flush_after = '$fa'" \
		>/dev/null || ! pg_sql "SELECT pg_reload_conf()" >/dev/null ||
		! pg_sql "CHECKPOINT" >/dev/null; then
		die "psql failed"
	fi
	mkdir -p "$base.d"
	(cd "$base.d" && "$PG_BIN/pgbench" -h "$pgsock" -p "$PG_PORT" \
		-U postgres -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" \
		-P "$PROGRESS" -l postgres >"$base.out" 2>"$base.log") ||
		die "pgbench failed: see $base.log"
	python3 - "$base" "$fa" "$run" "$PROGRESS" >>"$summary" <<'EOF'
import glob, re, sys
base, fa, run, prog = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
text = open(base + ".out").read()
def val(pat):
    m = re.search(pat, text)
    return float(m.group(1)) if m else float("nan")
tps = val(r"tps = ([0-9.]+)")
avg = val(r"latency average = ([0-9.]+) ms")
sd = val(r"latency stddev = ([0-9.]+) ms")
lat = []
for f in glob.glob(base + ".d/pgbench_log.*"):
    for line in open(f):
        p = line.split()
        if len(p) >= 3 and p[2] != "skipped":
            lat.append(int(p[2]))
lat.sort()
p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] / 1000 if lat else float("nan")
mx = lat[-1] / 1000 if lat else float("nan")
# one-second tps from the -P lines (all but a final partial one)
sec = [float(m.group(1)) for m in
       re.finditer(r"^progress: [0-9.]+ s, ([0-9.]+) tps", open(base + ".log").read(), re.M)]
sr = "n/a"
if sec:
    s = sorted(sec)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    sr = "%.3f" % (s[0] / med) if med > 0 else "0.000"
print("postgresql-15\tflush_after=%s\t%s\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%s" % (
    fa, run, tps, avg, sd, p99, mx, sr))
EOF
	rm -rf -- "$base.d"	# the per-transaction logs are large
	tail -n 1 "$summary" >&2
}

if [ "$FK" = 1 ]; then
	[ -x "$FLUSHKIT" ] || { echo "no flushkit at $FLUSHKIT (build first)" >&2; exit 1; }
	log "flushkit bench tpcb -i -s $SCALE"
	"$FLUSHKIT" bench tpcb -i -s "$SCALE" --data-dir "$WORK/fk" \
		"${fk_opts[@]}" >"$out/fk-init.log" 2>&1 ||
		die "flushkit bench tpcb -i failed: see $out/fk-init.log"
fi
have_pg=0
if [ "$PG" = 1 ] && pg_setup; then
	have_pg=1
fi

for run in $(seq 1 "$RUNS"); do
	if [ "$FK" = 1 ]; then
		fk_run naive "$run"
		fk_run smooth "$run"
	fi
	if [ "$have_pg" = 1 ]; then
		pg_run 0 "$run"
		pg_run 256kB "$run"
	fi
done

# ---- the table: mean (and spread) per configuration ----
python3 - "$summary" <<'EOF' | tee "$out/summary.txt"
import sys, statistics as st
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
groups = {}
for r in rows:
    groups.setdefault((r[0], r[1]), []).append(r)
cols = ["tps", "lat avg ms", "lat stddev ms", "p99 ms", "max ms", "stall ratio"]
print("%-14s %-18s %4s " % ("system", "config", "runs") +
      " ".join("%15s" % c for c in cols))
for (system, cfg), rs in groups.items():
    cells = []
    for i in range(3, 9):
        v = [float(r[i]) for r in rs if r[i] not in ("n/a", "nan")]
        if not v:
            cells.append("%15s" % "n/a")
        elif len(v) == 1:
            cells.append("%15.3f" % v[0] if i != 3 else "%15.1f" % v[0])
        else:
            m, s = st.mean(v), st.stdev(v)
            cells.append("%8.1f ±%6.1f" % (m, s) if i == 3 else
                         "%8.3f ±%6.3f" % (m, s))
    print("%-14s %-18s %4d " % (system, cfg, len(rs)) + " ".join(cells))
EOF
log "results in $out"
