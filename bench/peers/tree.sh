#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/peers/tree.sh - the tree benchmark: flushkit cp and flushkit sync on
# real trees, against cp -a + sync -f, rsync -a --fsync and sync -f.
#
# Trees: a copy of /usr/share, and a PostgreSQL data directory made by
# initdb + pgbench -i -s 10.  Caches are dropped before every run, the
# methods are alternated within each round, RUNS rounds (default 3).
# Needs root (drop_caches, initdb as postgres).  Results: a table on
# stdout and results/tree-*.csv.
#
#   RUNS=3 WORK=/var/tmp/fk-tree-bench TREES="share pgdata" bench/peers/tree.sh
#   DEVICE=hdd ...: WORK on a lab disk of that model (bench/peers/lib-disk.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
FK=${FLUSHKIT:-$PWD/build/flushkit}
RUNS=${RUNS:-3}
WORK=${WORK:-/var/tmp/fk-tree-bench}
TREES=${TREES:-"share pgdata"}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PGSCALE=${PGSCALE:-10}
mkdir -p results "$WORK"
csv=results/tree-$(date +%Y%m%d-%H%M%S).csv
echo "tree,op,method,run,seconds" >"$csv"

[ "$(id -u)" -eq 0 ] || { echo "bench/peers/tree.sh: needs root (drop_caches)" >&2; exit 1; }
[ -x "$FK" ] || { echo "bench/peers/tree.sh: build first ($FK missing)" >&2; exit 1; }

pgpid=""
cleanup() {
	if [ -n "$pgpid" ]; then
		su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $WORK/pgdata -m immediate stop" >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK/dst"
	fk_peer_device_release
}
trap cleanup EXIT INT TERM
# shellcheck source=lib-disk.sh
. "$(dirname "$0")/lib-disk.sh"
fk_peer_device "$FK"
[ -n "$fk_peer_mnt" ] && WORK=$fk_peer_mnt/work

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
now() { date +%s.%N; }

prepare() {
	if [ ! -d "$WORK/share" ]; then
		echo "preparing $WORK/share (copy of /usr/share)" >&2
		cp -a /usr/share "$WORK/share"
	fi
	if [[ " $TREES " == *" pgdata "* ]] && [ ! -d "$WORK/pgdata" ]; then
		echo "preparing $WORK/pgdata (initdb + pgbench -i -s $PGSCALE)" >&2
		mkdir -p "$WORK/pgdata" && chown postgres "$WORK/pgdata"
		su postgres -s /bin/sh -c "$PGBIN/initdb -D $WORK/pgdata" >/dev/null
		su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $WORK/pgdata -o '-p 54331 -k /tmp -c listen_addresses=' -w start" >/dev/null
		pgpid=1
		su postgres -s /bin/sh -c "$PGBIN/pgbench -h /tmp -p 54331 -i -s $PGSCALE postgres" >/dev/null 2>&1
		su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $WORK/pgdata -m fast -w stop" >/dev/null
		pgpid=""
	fi
	sync
}

# run TREE OP METHOD RUN CMD... : time CMD after dropping caches
timed() {
	local tree=$1 op=$2 method=$3 run=$4
	shift 4
	drop_caches
	local t0 t1
	t0=$(now)
	"$@" >/dev/null
	t1=$(now)
	local s
	s=$(echo "$t1 - $t0" | bc)
	echo "$tree,$op,$method,$run,$s" >>"$csv"
	printf '%-7s %-5s %-22s run %d: %7.2f s\n' "$tree" "$op" "$method" "$run" "$s" >&2
}

cp_methods=("flushkit-writeback" "flushkit-delayed" "flushkit-syncfs" "flushkit-fsync-each" "cp-a+sync-f" "rsync-fsync")
sync_methods=("flushkit-twopass" "flushkit-fsync" "flushkit-syncfs" "sync-f")

do_cp() {
	local tree=$1 m=$2 run=$3 src=$WORK/$1 dst=$WORK/dst
	rm -rf "$dst"; sync
	case $m in
	flushkit-*) timed "$tree" cp "$m" "$run" "$FK" cp --method="${m#flushkit-}" "$src" "$dst";;
	cp-a+sync-f) timed "$tree" cp "$m" "$run" sh -c 'cp -a "$1" "$2" && sync -f "$2"' sh "$src" "$dst";;
	rsync-fsync) timed "$tree" cp "$m" "$run" rsync -a --fsync "$src/" "$dst/";;
	esac
}

do_sync() {
	local tree=$1 m=$2 run=$3 src=$WORK/$1 dst=$WORK/dst
	rm -rf "$dst"; sync
	drop_caches
	cp -a "$src" "$dst"	# dirty, not yet written back
	local t0 t1
	t0=$(now)
	case $m in
	flushkit-*) "$FK" sync --method="${m#flushkit-}" "$dst" >/dev/null;;
	sync-f) sync -f "$dst";;
	esac
	t1=$(now)
	local s
	s=$(echo "$t1 - $t0" | bc)
	echo "$tree,sync,$m,$run,$s" >>"$csv"
	printf '%-7s %-5s %-22s run %d: %7.2f s\n' "$tree" sync "$m" "$run" "$s" >&2
}

prepare
for tree in $TREES; do
	for run in $(seq 1 "$RUNS"); do
		# Alternate: rotate the method order each round.
		for i in "${!cp_methods[@]}"; do
			m=${cp_methods[$(( (i + run) % ${#cp_methods[@]} ))]}
			do_cp "$tree" "$m" "$run"
		done
		for i in "${!sync_methods[@]}"; do
			m=${sync_methods[$(( (i + run) % ${#sync_methods[@]} ))]}
			do_sync "$tree" "$m" "$run"
		done
	done
done

echo
echo "results: $csv"
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((r["tree"], r["op"], r["method"]), []).append(float(r["seconds"]))
ref = {"cp": "cp-a+sync-f", "sync": "sync-f"}
print(f"{'tree':7} {'op':5} {'method':22} {'n':>2} {'mean s':>8} {'stddev':>7} {'ratio':>6}")
for (tree, op, m), v in sorted(groups.items()):
    base = groups.get((tree, op, ref[op]))
    ratio = statistics.mean(v) / statistics.mean(base) if base else float("nan")
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    print(f"{tree:7} {op:5} {m:22} {len(v):2d} {statistics.mean(v):8.2f} {sd:7.2f} {ratio:6.2f}")
print("ratio = mean / mean of the reference (cp -a + sync -f for cp, sync -f for sync)")
PY
