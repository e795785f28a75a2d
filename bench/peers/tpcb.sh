#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/tpcb.sh - the checkpoint-flushing benchmark: TPC-B (sort of)
# with checkpoints, flushkit's page store and PostgreSQL 15 + pgbench as
# the peer, at the same scale, clients, duration, shared_buffers and
# checkpoint settings, alternated round by round (A B C D A B C D ...).
#
# Configurations (CONFIGS, in this order each round):
#   naive          flushkit --flush=naive (no hints, unsorted, one fsync
#                  at a time, uncompressed full-page images)
#   smooth         flushkit --flush=smooth (the default: hints, sorted,
#                  spread batched fsyncs, full-page images lz4)
#   smooth-off     flushkit --flush=smooth --wal-compression=off
#   nockpt         flushkit --flush=smooth with no checkpoint in the run
#                  (--checkpoint-timeout 1h; not in the default CONFIGS):
#                  the control, what the stall ratio is on this machine
#                  with no checkpoint at all (CPU and disk noise)
#   smooth+OPT,OPT flushkit --flush=smooth with those bench tpcb options
#                  (comma-separated; not in the default CONFIGS), for
#                  tuning: "smooth+--checkpoint-flush-after=32kB"
#   pg-FA          PostgreSQL 15, checkpoint_flush_after=FA, one per
#                  PG_FLUSH_AFTER value (default 256kB)
#
# Each run is a result file (docs/report.md) in results/tpcb-DATE/CONFIG/
# (bench tpcb writes its own; the peer's is written here from pgbench's
# output, PostgreSQL's statistics views and its server log), so
#   flushkit compare results/tpcb-DATE/naive results/tpcb-DATE/smooth
#   flushkit compare results/tpcb-DATE/pg-256kB results/tpcb-DATE/smooth
#   flushkit report results/tpcb-DATE/*/*.jsonl -o results/tpcb-DATE/html
# read them.  The script ends with a table: per configuration the mean
# and min-max over the rounds of tps, p99, p99.9, max latency and stall
# ratio, and each configuration's ratios to naive (per round, then their
# median and min-max).
#
# The peer is measured as we are: pgbench's per-transaction log goes to
# a tmpfs (LOGDIR, default /dev/shm), not onto the disk under test, and
# is deleted after its percentiles are taken; PostgreSQL's backend
# fsyncs (pg_stat_bgwriter.buffers_backend_fsync) and full-page images
# (pg_stat_wal.wal_fpi) over the run are recorded, as the store's.
# Before each PostgreSQL run a CHECKPOINT, as the store starts each run
# at the redo point of the previous run's shutdown checkpoint: both
# start with the full-page-image burst after a redo point.
#
# Every parameter can be overridden from the environment, e.g. a short
# run:   SCALE=5 DURATION=20 RUNS=1 bench/peers/tpcb.sh
#
#   SCALE=50 CLIENTS=8 DURATION=60 RUNS=2 PROGRESS=1
#   SHARED_BUFFERS=1GB CHECKPOINT_TIMEOUT=30s MAX_WAL_SIZE=8GB
#   CHECKPOINT_COMPLETION_TARGET=0.9
#   CONFIGS="naive smooth smooth-off pg"  PG_FLUSH_AFTER="256kB"
#   FLUSHKIT=build/flushkit  WORK=/var/tmp/flushkit-bench-tpcb
#   LOGDIR=/dev/shm  RESULTS=results
#   PG_BIN=/usr/lib/postgresql/15/bin  PG_PORT=54329
#   KEEP=1 (keep data directories)
#
# The script installs nothing.  The peer needs Debian's postgresql-15
# (PG_BIN) and the user "postgres"; it runs as root and starts its own
# cluster (initdb in WORK, listening on 127.0.0.1:PG_PORT and a unix
# socket in WORK), stopped again on exit, also when interrupted.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
SCALE=${SCALE:-50}
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-60}
RUNS=${RUNS:-2}
PROGRESS=${PROGRESS:-1}
SHARED_BUFFERS=${SHARED_BUFFERS:-1GB}
CHECKPOINT_TIMEOUT=${CHECKPOINT_TIMEOUT:-30s}
MAX_WAL_SIZE=${MAX_WAL_SIZE:-8GB}
CHECKPOINT_COMPLETION_TARGET=${CHECKPOINT_COMPLETION_TARGET:-0.9}
CONFIGS=${CONFIGS:-"naive smooth smooth-off pg"}
PG_FLUSH_AFTER=${PG_FLUSH_AFTER:-256kB}
FLUSHKIT=${FLUSHKIT:-$here/build/flushkit}
WORK=${WORK:-/var/tmp/flushkit-bench-tpcb}
# DEVICE=MODEL: WORK on a lab disk of that model (bench/peers/lib-disk.sh)
# shellcheck source=lib-disk.sh
. "$(dirname "$0")/lib-disk.sh"
fk_peer_device "$FLUSHKIT"
[ -n "$fk_peer_mnt" ] && WORK=$fk_peer_mnt/work
LOGDIR=${LOGDIR:-/dev/shm}
RESULTS=${RESULTS:-$here/results}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_PORT=${PG_PORT:-54329}
KEEP=${KEEP:-0}

stamp=$(date +%Y%m%d-%H%M%S)
out=$RESULTS/tpcb-$stamp
mkdir -p "$out"
summary=$out/runs.tsv

die() { log "error: $*"; exit 1; }
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$out/bench.log" >&2; }

# The configurations, PostgreSQL's expanded to one per flush_after.
configs=()
want_fk=0 want_pg=0
for c in $CONFIGS; do
	case $c in
	naive | smooth | smooth-off | nockpt | smooth+?*) configs+=("$c"); want_fk=1 ;;
	pg) for fa in $PG_FLUSH_AFTER; do configs+=("pg-$fa"); done; want_pg=1 ;;
	*) echo "unknown configuration '$c' (naive, smooth, smooth-off, nockpt, pg)" >&2; exit 2 ;;
	esac
done

pg_running=0
pgdata=$WORK/pg
pgsock=$WORK/pgsock
pglog=$(mktemp -d "$LOGDIR/flushkit-tpcb-pglog.XXXXXX")
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
	rm -rf -- "$pglog"
	if [ "$KEEP" != 1 ]; then
		rm -rf -- "$pgdata" "$pgsock" "$WORK/fk"
		rmdir -- "$WORK" 2>/dev/null || true
	fi
	fk_peer_device_release
	exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

mkdir -p "$WORK"
{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) cpus, $(free -g | awk '/Mem:/ {print $2}') GiB"
	echo "filesystem: $(df -T "$WORK" | awk 'NR == 2 {print $1, $2}')"
	echo "pgbench logs: $LOGDIR ($(df -T "$LOGDIR" | awk 'NR == 2 {print $2}'))"
	echo "scale=$SCALE clients=$CLIENTS duration=$DURATION runs=$RUNS configs=${configs[*]}"
	echo "shared_buffers=$SHARED_BUFFERS checkpoint_timeout=$CHECKPOINT_TIMEOUT max_wal_size=$MAX_WAL_SIZE checkpoint_completion_target=$CHECKPOINT_COMPLETION_TARGET"
	[ -x "$FLUSHKIT" ] && echo "flushkit: $("$FLUSHKIT" --version)"
	[ -x "$PG_BIN/postgres" ] && echo "postgres: $("$PG_BIN/postgres" --version)"
} >"$out/setup.txt"
cat "$out/setup.txt" >&2
printf 'config\trun\ttps\tlat_avg_ms\tp99_ms\tp999_ms\tmax_ms\tstall_ratio\tstall_ckpt\tstall_outside\tckpt_s\tbackend_fsyncs\tfpi\tresult_file\n' >"$summary"

# One row of runs.tsv from a result file's summary, as flushkit's one
# reader of result files has it ("flushkit compare --json" of the file
# against itself: the peer's stall figures are computed there, as bench
# tpcb's are, from its progress lines).
tsv_row() {	# CONFIG RUN RESULT_FILE
	"$FLUSHKIT" compare --json "$3" "$3" | python3 -c '
import json, sys
cfg, run, path = sys.argv[1:4]
su = {m["metric"]: m["a"]["avg"] for m in json.load(sys.stdin)["metrics"]}
def f(k, fmt="%.3f"):
    v = su.get(k)
    return fmt % v if isinstance(v, (int, float)) else "n/a"
print("\t".join([cfg, run, f("tps", "%.1f"), f("lat_avg_ms"),
                 f("lat_p99_ms"), f("lat_p999_ms"), f("lat_max_ms"),
                 f("stall_ratio"), f("stall_ratio_checkpoint"),
                 f("stall_ratio_outside"), f("checkpoint_seconds", "%d"),
                 f("backend_fsyncs", "%d"), f("wal_fpi", "%d"), path]))
' "$@" >>"$summary"
	tail -n 1 "$summary" | cut -f 1-13 >&2
}

# ---- flushkit ----
fk_opts=(--shared-buffers "$SHARED_BUFFERS"
	--checkpoint-timeout "$CHECKPOINT_TIMEOUT"
	--max-wal-size "$MAX_WAL_SIZE"
	--checkpoint-completion-target "$CHECKPOINT_COMPLETION_TARGET")

fk_run() {	# CONFIG RUN
	local cfg=$1 run=$2 dir=$out/$1 extra=()
	case $cfg in
	naive) extra=(--flush=naive) ;;
	smooth) extra=(--flush=smooth) ;;
	smooth-off) extra=(--flush=smooth --wal-compression=off) ;;
	nockpt) extra=(--flush=smooth --checkpoint-timeout 1h) ;;
	smooth+*)
		local more
		IFS=, read -ra more <<<"${cfg#smooth+}"
		extra=(--flush=smooth "${more[@]}") ;;
	esac
	mkdir -p "$dir"
	log "flushkit ${extra[*]} run $run: ${DURATION}s"
	"$FLUSHKIT" bench tpcb -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" \
		-P "$PROGRESS" --data-dir "$WORK/fk" "${fk_opts[@]}" \
		"${extra[@]}" --results "$dir" >"$dir/run$run.out" \
		2>"$dir/run$run.log" ||
		die "flushkit failed: see $dir/run$run.log"
	local rf
	rf=$(sed -n 's/^result file: //p' "$dir/run$run.log" | tail -n 1)
	[ -f "$rf" ] || die "no result file in $dir/run$run.log"
	tsv_row "$cfg" "$run" "$rf"
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
log_line_prefix = '%m [%p] '
log_timezone = 'UTC'
max_connections = $((CLIENTS + 20))
EOF
	pg_start
	log "pgbench -i -s $SCALE"
	"$PG_BIN/pgbench" -h "$pgsock" -p "$PG_PORT" -U postgres -i \
		-s "$SCALE" postgres >"$out/pg-init.log" 2>&1 ||
		die "pgbench -i failed: see $out/pg-init.log"
	pg_stop
}

# PostgreSQL runs only for its own runs: stopped (a shutdown
# checkpoint) after the load and after each run, so that its timed
# checkpoint of what the load or its run left dirty does not write into
# the store's runs on the same disk (on a lab disk it did: the store's
# worst seconds were PostgreSQL's checkpoint of pgbench -i).
pg_start() {
	pg_running=1	# from here on, cleanup stops it (no-op if down)
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata" -w \
		-l "$pgdata/server.log" start >/dev/null 2>&1 || {
		tail -n 5 "$pgdata/server.log" >&2
		die "PostgreSQL did not start"
	}
}

pg_stop() {
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata" -m fast -w \
		stop >/dev/null 2>&1 || die "PostgreSQL did not stop"
	pg_running=0
}

pg_sql() {
	"$PG_BIN/psql" -h "$pgsock" -p "$PG_PORT" -U postgres -X -q -At \
		-c "$1" postgres
}

# The counters a result file records, as one JSON object.
pg_stats() {
	pg_sql "SELECT json_build_object(
	  'buffers_backend_fsync', b.buffers_backend_fsync,
	  'buffers_backend', b.buffers_backend,
	  'buffers_checkpoint', b.buffers_checkpoint,
	  'checkpoints', b.checkpoints_timed + b.checkpoints_req,
	  'wal_fpi', w.wal_fpi, 'wal_bytes', w.wal_bytes,
	  'wal_sync', w.wal_sync)
	  FROM pg_stat_bgwriter b, pg_stat_wal w"
}

pg_run() {	# CONFIG RUN
	local cfg=$1 run=$2 fa=${1#pg-} dir=$out/$1
	mkdir -p "$dir"
	log "PostgreSQL checkpoint_flush_after=$fa run $run: ${DURATION}s"
	pg_start
	if ! pg_sql "ALTER SYSTEM SET checkpoint_flush_after = '$fa'" \
		>/dev/null || ! pg_sql "SELECT pg_reload_conf()" >/dev/null ||
		! pg_sql "CHECKPOINT" >/dev/null; then
		die "psql failed"
	fi
	local logs=$pglog/run
	rm -rf -- "$logs"
	mkdir "$logs"
	chmod 700 "$logs"
	local before after t0 t1 loglines
	before=$(pg_stats)
	loglines=$(wc -l <"$pgdata/server.log")
	t0=$(date +%s.%N)
	"$PG_BIN/pgbench" -h "$pgsock" -p "$PG_PORT" -U postgres \
		-c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" -P "$PROGRESS" \
		-l --log-prefix="$logs/pgbench_log" postgres \
		>"$dir/run$run.out" 2>"$dir/run$run.log" ||
		die "pgbench failed: see $dir/run$run.log"
	t1=$(date +%s.%N)
	after=$(pg_stats)
	tail -n +"$((loglines + 1))" "$pgdata/server.log" >"$dir/run$run.server.log"
	local walc
	walc=$(pg_sql 'SHOW wal_compression')
	pg_stop
	local rf
	rf=$dir/tpcb-$(date +%Y%m%d-%H%M%S)-pg-$run.jsonl
	python3 "$here/bench/peers/tpcb-pg-result.py" \
		--out "$rf" --pgbench-out "$dir/run$run.out" \
		--pgbench-err "$dir/run$run.log" --logs "$logs" \
		--server-log "$dir/run$run.server.log" \
		--stats-before "$before" --stats-after "$after" \
		--t0 "$t0" --t1 "$t1" --version "$("$PG_BIN/postgres" --version)" \
		--setting scale="$SCALE" --setting clients="$CLIENTS" \
		--setting duration_s="$DURATION" --setting progress_s="$PROGRESS" \
		--setting shared_buffers="$SHARED_BUFFERS" \
		--setting checkpoint_timeout="$CHECKPOINT_TIMEOUT" \
		--setting max_wal_size="$MAX_WAL_SIZE" \
		--setting checkpoint_completion_target="$CHECKPOINT_COMPLETION_TARGET" \
		--setting checkpoint_flush_after="$fa" \
		--setting wal_compression="$walc" \
		--command "pgbench -c $CLIENTS -j $CLIENTS -T $DURATION -P $PROGRESS -l --log-prefix=$logs/pgbench_log" ||
		die "cannot write the result file of $dir/run$run.out"
	rm -rf -- "$logs"	# the per-transaction logs are large
	tsv_row "$cfg" "$run" "$rf"
}

if [ "$want_fk" = 1 ]; then
	[ -x "$FLUSHKIT" ] || { echo "no flushkit at $FLUSHKIT (build first)" >&2; exit 1; }
	log "flushkit bench tpcb -i -s $SCALE"
	"$FLUSHKIT" bench tpcb -i -s "$SCALE" --data-dir "$WORK/fk" \
		"${fk_opts[@]}" >"$out/fk-init.log" 2>&1 ||
		die "flushkit bench tpcb -i failed: see $out/fk-init.log"
fi
have_pg=0
if [ "$want_pg" = 1 ] && pg_setup; then
	have_pg=1
fi

for run in $(seq 1 "$RUNS"); do
	for cfg in "${configs[@]}"; do
		case $cfg in
		pg-*) [ "$have_pg" = 1 ] && pg_run "$cfg" "$run" ;;
		*) fk_run "$cfg" "$run" ;;
		esac
	done
done

python3 - "$summary" <<'EOF' | tee "$out/summary.txt"
import sys, statistics as st
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
head, rows = rows[0], rows[1:]
col = {k: i for i, k in enumerate(head)}
def num(r, k):
    try:
        return float(r[col[k]])
    except ValueError:
        return None
order = []
for r in rows:
    if r[0] not in order:
        order.append(r[0])
keys = ["tps", "p99_ms", "p999_ms", "max_ms", "stall_ratio", "stall_ckpt",
        "stall_outside", "ckpt_s", "backend_fsyncs"]
print("mean [min-max] over rounds")
print("%-14s %4s " % ("config", "runs") + " ".join("%22s" % k for k in keys))
for c in order:
    rs = [r for r in rows if r[0] == c]
    cells = []
    for k in keys:
        v = [x for x in (num(r, k) for r in rs) if x is not None]
        cells.append("%22s" % ("%.3g [%.3g-%.3g]" % (st.mean(v), min(v), max(v)) if v else "n/a"))
    print("%-14s %4d " % (c, len(rs)) + " ".join(cells))
if "naive" in order:
    print()
    print("ratio to naive in the same round: median [min-max]")
    rk = ["tps", "p999_ms", "max_ms", "stall_ratio", "stall_ckpt"]
    print("%-14s " % "config" + " ".join("%22s" % k for k in rk))
    for c in order:
        if c == "naive":
            continue
        cells = []
        for k in rk:
            v = []
            for r in rows:
                if r[0] != c:
                    continue
                base = [b for b in rows if b[0] == "naive" and b[1] == r[1]]
                x, y = num(r, k), num(base[0], k) if base else None
                if x is not None and y:
                    v.append(x / y)
            cells.append("%22s" % ("%.2f [%.2f-%.2f]" % (st.median(v), min(v), max(v)) if v else "n/a"))
        print("%-14s " % c + " ".join(cells))
EOF
log "results in $out (flushkit compare $out/naive $out/smooth)"
