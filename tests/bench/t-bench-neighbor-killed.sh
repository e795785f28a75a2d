#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-killed.sh - what a SIGKILLed "flushkit bench
# neighbor" leaves is undone by the next run: killed while the bdi has
# strict_limit=1 and max_bytes set, the next run (a plain one) restores
# strict_limit and the max ratio to what they were, and says so
# ("restored bdi MAJ:MIN strict_limit 0 ... left by a killed run").
# Killed in a blkio run of the PostgreSQL victim (when PostgreSQL 15 is
# installed), "bench neighbor --cleanup" removes the blkio group, stops
# the cluster's postmaster if it still runs and removes the cluster,
# its socket and log directories.  Runs on a loop-mounted ext4 of its
# own, so the bdi is the test's.  Not root: skip (77).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
[ -d /sys/fs/cgroup/blkio ] || { echo "SKIP: no cgroup v1 blkio"; exit 77; }
# shellcheck source=lib/fkloop.sh
. "$(dirname "$0")/../lib/fkloop.sh"
fkt_loop_require
fail=0
err() { echo "FAIL: $*"; fail=1; }
# 755: the PostgreSQL server runs as postgres
fkt_loop_setup t-bench-neighbor-killed 755
dir=$t/mnt/fs
mkdir -p "$dir"
fkt_loop_bdi "$dir"

# 1. SIGKILL while strict_limit is set; the next run restores it.
"$FLUSHKIT" bench neighbor --quick --config=strict --neighbor=tree \
	--tree-src=/usr/share --dir "$dir" --results "$t/k1" >"$t/k1.out" 2>&1 &
pid=$!
fkt_loop_wait_strict $pid ||
	err "strict_limit was never set: $(cat "$t/k1.out")"
kill -KILL $pid
wait $pid 2>/dev/null
sleep 0.5 # the children's PDEATHSIG
killed=$(knobs)
echo "after SIGKILL: bdi $mm knobs $killed (before: $before)"
"$FLUSHKIT" bench neighbor --quick --config=plain --dir "$dir" \
	--results "$t/k2" >"$t/k2.out" 2>"$t/k2.err"
rc=$?
[ $rc -eq 0 ] || err "the next run: exit $rc: $(tail -3 "$t/k2.err")"
[ "$(knobs)" = "$before" ] ||
	err "after the next run: bdi $mm knobs $(knobs), were $before (SIGKILLed run left $killed)"
grep -q "restored bdi $mm strict_limit ${before%% *} .* left by a killed run (pid $pid)" "$t/k2.err" ||
	err "the next run did not say what it restored: $(cat "$t/k2.err")"

# 2. SIGKILL in a blkio run of the PostgreSQL victim; --cleanup.
pgbin=/usr/lib/postgresql/15/bin
if [ -x $pgbin/postgres ] && [ -x $pgbin/pgbench ] && id postgres >/dev/null 2>&1; then
	"$FLUSHKIT" bench neighbor --quick --victim=pg-rate --config=blkio \
		--neighbor=tree --tree-src=/usr/share -T 20 --dir "$dir" \
		--results "$t/k3" >"$t/k3.out" 2>&1 &
	pid=$!
	seen=0
	for _ in $(seq 1 900); do
		[ -e /sys/fs/cgroup/blkio/flushkit-neighbor-$pid ] && { seen=1; break; }
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	[ $seen = 1 ] || err "the blkio group never appeared: $(cat "$t/k3.out")"
	sock=$(sed -n 's/^bench neighbor: victims pg-\*: .*, socket \(.*\), logs .*$/\1/p' "$t/k3.out")
	kill -KILL $pid
	wait $pid 2>/dev/null
	sleep 0.5
	left=""
	[ -e /sys/fs/cgroup/blkio/flushkit-neighbor-$pid ] && left="$left blkio group,"
	[ -e "$dir/pg" ] && left="$left cluster,"
	echo "after SIGKILL:${left:- nothing} left"
	"$FLUSHKIT" bench neighbor --cleanup >"$t/c.out" 2>"$t/c.err"
	rc=$?
	[ $rc -eq 0 ] || err "--cleanup: exit $rc: $(cat "$t/c.err")"
	[ -e /sys/fs/cgroup/blkio/flushkit-neighbor-$pid ] &&
		err "after --cleanup: blkio group flushkit-neighbor-$pid"
	[ -e "$dir/pg" ] && err "after --cleanup: cluster $dir/pg"
	[ -n "$sock" ] && [ -e "$sock" ] && err "after --cleanup: socket directory $sock"
	for c in /proc/[0-9]*/cwd; do
		case $(readlink "$c" 2>/dev/null) in "$dir"/pg*)
			err "after --cleanup: process ${c%/cwd} in the cluster" ;;
		esac
	done
	grep -q "removed blkio group /sys/fs/cgroup/blkio/flushkit-neighbor-$pid left by a killed run" "$t/c.err" ||
		err "--cleanup did not say it removed the group: $(cat "$t/c.err")"
	grep -q "removed the PostgreSQL cluster $dir/pg left by a killed run" "$t/c.err" ||
		err "--cleanup did not say it removed the cluster: $(cat "$t/c.err")"
	"$FLUSHKIT" bench neighbor --cleanup >"$t/c2.out" 2>&1
	grep -q 'nothing left by killed runs' "$t/c2.out" ||
		err "a second --cleanup: $(cat "$t/c2.out")"
else
	echo "not checked: a killed PostgreSQL victim's cleanup (no PostgreSQL 15)"
fi
[ $fail = 0 ] && echo PASS
exit $fail
