#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-pg.sh - the PostgreSQL victim of "flushkit bench
# neighbor": with PostgreSQL 15 installed, --quick --victim=pg-rate
# initdb's a private cluster on the file system under test, runs pgbench
# -R next to the stream neighbour under plain and exec, and gives each
# run its line, its table and ratio rows, a runs.tsv row and a result
# file (summary "status":"ok", the window line, progress lines from
# pgbench -P, the per-transaction logs txlog.* beside it); afterwards no
# postgres process of the cluster, no cluster directory, no socket or
# log directory is left.  Then the same cleanup after a SIGTERM while
# pgbench runs (exit 143).  Runs on a loop-mounted ext4 of its own.
# Not root, no loop devices or no PostgreSQL 15: skip (77).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
pgbin=/usr/lib/postgresql/15/bin
for p in initdb postgres pgbench pg_isready psql; do
	[ -x $pgbin/$p ] || { echo "SKIP: no $pgbin/$p"; exit 77; }
done
id postgres >/dev/null 2>&1 || { echo "SKIP: no user postgres"; exit 77; }
# shellcheck source=lib/fkloop.sh
. "$(dirname "$0")/../lib/fkloop.sh"
fkt_loop_require
fail=0
err() { echo "FAIL: $*"; fail=1; }
# 755: the server runs as postgres: it must reach its cluster
fkt_loop_setup t-bench-neighbor-pg 755
dir=$t/mnt/fs

# What a run whose output is $1 left behind: processes in the cluster,
# the cluster, its socket and log directories.
leftovers() {
	local c p
	for c in /proc/[0-9]*/cwd; do
		p=$(readlink "$c" 2>/dev/null) || continue
		case $p in "$dir"/pg | "$dir"/pg/*)
			c=${c%/cwd}
			echo "process ${c#/proc/} in $p: $(tr '\0' ' ' <"$c/cmdline")" ;;
		esac
	done
	[ -e "$dir/pg" ] && echo "cluster directory $dir/pg"
	local s l
	s=$(sed -n 's/^bench neighbor: victims pg-\*: .*, socket \(.*\), logs .*$/\1/p' "$1")
	l=$(sed -n 's/^bench neighbor: victims pg-\*: .*, logs \(.*\)$/\1/p' "$1")
	[ -n "$s" ] || echo "no socket directory named in $1"
	[ -n "$s" ] && [ -e "$s" ] && echo "socket directory $s"
	[ -n "$l" ] && [ -e "$l" ] && echo "log directory $l"
	ls -A "$dir" 2>/dev/null
}

# 1. A normal run.
"$FLUSHKIT" bench neighbor --quick --victim=pg-rate --config=plain,exec \
	--dir "$dir" --results "$t/r" >"$t/out" 2>"$t/err"
rc=$?
[ $rc -eq 0 ] || err "bench neighbor --victim=pg-rate: exit $rc: $(tail -5 "$t/err")"
grep -q '^bench neighbor: victims pg-\*: postgres (PostgreSQL) 15' "$t/out" ||
	err "no PostgreSQL line: $(head -5 "$t/out")"
grep -q FAILED "$t/out" && err "a failed run: $(grep FAILED "$t/out")"
for c in plain exec; do
	grep -Eq "^pg-rate stream $c +r1 +tps +[0-9.]+ .*neighbour +[0-9.]+ s" \
		"$t/out" || err "no line for $c: $(grep "$c" "$t/out")"
	grep -Eq "^\| $c \| [0-9.]+ \|" "$t/r/table.md" || err "no table row for $c"
	grep -Eq "^pg-rate	stream	$c	1	[0-9.]+	.*	ok$" "$t/r/runs.tsv" ||
		err "no runs.tsv row for $c: $(cat "$t/r/runs.tsv")"
	run=$t/r/pg-rate-stream-$c-r1
	f=$(ls "$run"/neighbor-*.jsonl 2>/dev/null)
	if [ -z "$f" ]; then
		err "no result file for $c"
		continue
	fi
	grep -q '"type":"summary".*"transactions":[1-9][0-9]*,"status":"ok"' "$f" ||
		err "$c: no good summary in $f: $(grep summary "$f")"
	grep -q '"type":"settings","victim":"pg-rate".*"victim_program":"postgres (PostgreSQL) 15' "$f" ||
		err "$c: settings do not name the PostgreSQL victim"
	grep -q '"type":"window","start_s":[0-9.]*,"end_s":[0-9.]*' "$f" ||
		err "$c: no window line in $f"
	grep -q '"type":"progress"' "$f" || err "$c: no progress line (pgbench -P) in $f"
	ls "$run"/txlog.* >/dev/null 2>&1 || err "$c: no per-transaction logs in $run"
done
grep -Eq "^\| exec/plain \| [0-9.]+ \|" "$t/r/table.md" || err "no ratio row for exec"
l=$(leftovers "$t/out")
[ -z "$l" ] || err "left behind after a normal exit: $l"

# 2. SIGTERM while pgbench runs: the cluster stopped and removed.
"$FLUSHKIT" bench neighbor --quick --victim=pg-full --config=plain \
	-T 20 --dir "$dir" --results "$t/s" >"$t/s.out" 2>"$t/s.err" &
pid=$!
seen=0
for _ in $(seq 1 600); do
	[ -s "$t/s/pg-full-stream-plain-r1/victim.err" ] && { seen=1; break; }
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
[ $seen = 1 ] || err "pgbench never ran: $(cat "$t/s.out" "$t/s.err")"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || err "SIGTERM during pgbench: exit $rc: $(tail -3 "$t/s.err")"
l=$(leftovers "$t/s.out")
[ -z "$l" ] || err "left behind after SIGTERM: $l"
[ $fail = 0 ] && echo PASS
exit $fail
