#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench neighbor --quick": every configuration (plain, exec,
# nocache, strict, blkio) gets its line on stdout, its rows in the table
# and the ratio table, and a result file with a summary ("status": "ok")
# and the neighbour's window that "flushkit report" reads and shades;
# afterwards nothing is left behind: the bdi's strict_limit and max
# ratio as before, no blkio group, the neighbour's and the victim's
# files removed.  Then the same after a SIGTERM in the middle of a
# strict run (the bdi knobs restored, exit 143), and after a SIGHUP in
# the middle of a blkio run on a lab disk (--device=throttle:400M:20000:
# the group removed, the file system unmounted, the lab disk and its
# loop device gone, exit 129).  Checks that the
# benchmark runs and cleans up, not the effects (those are benchmarks).
# Runs on a loop-mounted ext4 of its own.  Not root: skip (77).
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
[ -d /sys/fs/cgroup/blkio ] || { echo "SKIP: no cgroup v1 blkio"; exit 77; }
for p in dd cp nocache; do
	command -v $p >/dev/null || { echo "SKIP: no $p"; exit 77; }
done
fail=0
err() { echo "FAIL: $*"; fail=1; }
# shellcheck source=lib/fkloop.sh
. "$(dirname "$0")/../lib/fkloop.sh"
fkt_loop_require
# The file system under test is the test's own (a loop device), so the
# strict runs change the knobs of its bdi only, not the machine's disk.
fkt_loop_setup t-bench-neighbor
root=/var/tmp/flushkit-disks

# 0. A --dir on tmpfs (no writeback, nothing to measure) is refused
# before anything runs.
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	out=$("$FLUSHKIT" bench neighbor --quick --dir "/dev/shm/${t##*/}" \
		--results "$t/shm" 2>&1)
	rc=$?
	rmdir "/dev/shm/${t##*/}" 2>/dev/null
	[ $rc -eq 1 ] && echo "$out" | grep -q 'no writeback' ||
		err "--dir on tmpfs: exit $rc, '$out' (want 1, 'no writeback')"
	[ -e "$t/shm" ] && err "--dir on tmpfs: results written to $t/shm"
fi

dir=$t/mnt/fs
mkdir -p "$dir"
fkt_loop_bdi "$dir"

# What a run with pid $1 left on the machine (beyond the bdi knobs).
leftovers() {
	[ -e /sys/fs/cgroup/blkio/flushkit-neighbor-$1 ] &&
		echo "blkio group flushkit-neighbor-$1"
	grep -F " $root/run-$1/" /proc/self/mountinfo
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] && grep -H -F "$root/run-$1/" "$f"
	done
	[ -e "$root/run-$1" ] && echo "directory $root/run-$1"
	for d in /run/flushkit-disk/fkrun-"$1"-*; do
		[ -e "$d" ] && echo "lab disk $d"
	done
	ls -A "$dir"
}

# 1. A normal run: every configuration's line, table rows, result file.
"$FLUSHKIT" bench neighbor --quick --dir "$dir" --results "$t/r" \
	>"$t/out" 2>"$t/err" &
pid=$!
wait $pid
rc=$?
[ $rc -eq 0 ] || err "bench neighbor --quick: exit $rc: $(tail -5 "$t/err")"
for c in plain exec nocache strict blkio; do
	grep -Eq "^rate stream $c +r1 +tps +[0-9.]+ .*neighbour +[0-9.]+ s +drained +([0-9.]+|-) s" \
		"$t/out" || err "no line for $c: $(grep "$c" "$t/out")"
	grep -q "FAILED" "$t/out" && err "a failed run: $(grep FAILED "$t/out")"
	grep -Eq "^\| $c \| [0-9.]+ \|" "$t/r/table.md" ||
		err "no table row for $c"
	[ $c = plain ] || grep -Eq "^\| $c/plain \| [0-9.]+ \|" "$t/r/table.md" ||
		err "no ratio row for $c"
	f=$(ls "$t/r/rate-stream-$c-r1"/neighbor-*.jsonl 2>/dev/null)
	if [ -z "$f" ]; then
		err "no result file for $c"
		continue
	fi
	grep -q '"type":"summary".*"status":"ok"' "$f" ||
		err "$c: no good summary in $f"
	grep -q '"type":"window","start_s":[0-9.]*,"end_s":[0-9.]*' "$f" ||
		err "$c: no window line in $f"
	grep -q '"type":"progress"' "$f" || err "$c: no progress line in $f"
	# written back: never before the neighbour's exit
	python3 - "$f" <<'PY' || err "$c: bad neighbor_drain_s in $f"
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j.get("type") == "summary":
        d, w = j["neighbor_drain_s"], j["neighbor_wall_s"]
        sys.exit(0 if d is None or d >= w else 1)
sys.exit(1)
PY
done
[ "$(grep -c $'\tok$' "$t/r/runs.tsv")" = 5 ] || err "runs.tsv: $(cat "$t/r/runs.tsv")"
grep -q 'flushkit-preload: pid=.*hints=[1-9]' "$t/r/rate-stream-exec-r1/exec-stats" ||
	err "exec: the shim gave no hints: $(cat "$t/r/rate-stream-exec-r1/exec-stats")"
if command -v gnuplot >/dev/null; then
	"$FLUSHKIT" report "$t"/r/*/neighbor-*.jsonl -o "$t/rep" >"$t/rep.out" 2>&1 ||
		err "report: $(cat "$t/rep.out")"
	grep -q 'pattern 4' "$t/rep/plots.gp" || err "report: no window shaded"
else
	echo "not checked: the report's shading (no gnuplot)"
fi
[ "$(knobs)" = "$before" ] || err "bdi knobs $(knobs), were $before"
l=$(leftovers $pid)
[ -z "$l" ] || err "left behind after a normal exit: $l"

# 2. SIGTERM while strict_limit is set: the knobs are restored.
"$FLUSHKIT" bench neighbor --quick --config=strict --neighbor=tree \
	--tree-src=/usr/share --dir "$dir" --results "$t/s" >"$t/s.out" 2>&1 &
pid=$!
fkt_loop_wait_strict $pid ||
	err "strict_limit was never set: $(cat "$t/s.out")"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || err "SIGTERM during strict: exit $rc"
[ "$(knobs)" = "$before" ] || err "after SIGTERM: bdi knobs $(knobs), were $before"
l=$(leftovers $pid)
[ -z "$l" ] || err "left behind after SIGTERM (strict): $l"

# 3. SIGHUP (the terminal closed) in a blkio run on a lab disk: a stop
# signal as SIGTERM is.
if [ -e /dev/loop-control ] && command -v mkfs.ext4 >/dev/null; then
	"$FLUSHKIT" bench neighbor --quick --config=blkio --neighbor=tree \
		--tree-src=/usr/share --device=throttle:400M:20000 --results "$t/b" \
		>"$t/b.out" 2>&1 &
	pid=$!
	seen=0
	for _ in $(seq 1 900); do
		[ -e /sys/fs/cgroup/blkio/flushkit-neighbor-$pid ] &&
			{ seen=1; break; }
		# its lab disk, to check it goes
		lab=$(ls -d /run/flushkit-disk/fkrun-$pid-* 2>/dev/null | head -1)
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	[ $seen = 1 ] || err "the blkio group never appeared: $(cat "$t/b.out")"
	kill -HUP $pid
	wait $pid
	rc=$?
	[ $rc -eq 129 ] || err "SIGHUP during blkio: exit $rc"
	l=$(leftovers $pid)
	[ -z "$l" ] || err "left behind after SIGHUP (blkio, loop): $l"
	[ -n "${lab:-}" ] || err "the run had no lab disk: $(cat "$t/b.out")"
	if [ -n "${lab:-}" ] && grep -q -F "$lab/" /sys/block/loop*/loop/backing_file 2>/dev/null; then
		err "a loop device is still on $lab"
	fi
else
	echo "not checked: SIGHUP on a loop device (no loop devices or mkfs.ext4)"
fi
[ $fail = 0 ] && echo "PASS"
exit $fail
