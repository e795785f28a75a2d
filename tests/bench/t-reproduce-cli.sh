#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit reproduce": what its command line must refuse or survive,
# each checked on a short run with a fast profile:
#   1. a --device below the floor (1 MB/s, 10 IOPS) is refused, exit 2,
#      before anything runs (checked without ever setting such a
#      throttle: the refusal must come at option parsing);
#   2. the former BPS:IOPS is throttle:BPS:IOPS on a lab disk, BPS
#      decimal: 50M:1000 runs on a lab disk of model throttle:50M:1000
#      and the table says 50 MB/s, 1000 write IOPS;
#   3. --cleanup with a seed (or any other option) is refused, exit 2,
#      and runs nothing;
#   4. --results naming a file fails before anything runs, exit 2,
#      naming the path, and prints no report;
#   5. --results naming a directory that is not empty (a second
#      invocation's, or anyone's) is refused, exit 2, and what is there
#      is left as it was;
#   6. stdout closed under it ("| head -1"): the run stops, cleans up
#      (nothing mounted, attached, no lab disk, nothing left in its run
#      directory) and exits 1, instead of dying of SIGPIPE;
#   7. a run directory is never seen without its held lock: a
#      "reproduce --cleanup" while a starting run waits on its flock
#      (strace delays it) does not remove the starting run's directory;
#   8. a run killed while it traced block events (seed 003) leaves a
#      tracefs instance; the next --cleanup removes it with the rest.
# Not root or no loop devices: skip (77).
set -u
if [ "$(id -u)" != 0 ]; then echo "SKIP: not root"; exit 77; fi
[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4"; exit 77; }
root=/var/tmp/flushkit-disks
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-reproduce-cli.XXXXXX)
trap 'rm -rf "$t"' EXIT
dev=throttle:400M:20000

# What the run with pid $1 left: mounts, loop devices, lab disks, its
# directory.
leftovers() {
	grep -F " $root/run-$1/" /proc/self/mountinfo
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] && grep -H -F "$root/run-$1/" "$f"
	done
	for d in /run/flushkit-disk/fkrun-"$1"-*; do
		[ -e "$d" ] && echo "lab disk $d"
	done
	[ -e "$root/run-$1" ] && echo "directory $root/run-$1"
	[ -e "$root/.new-$1" ] && echo "directory $root/.new-$1"
}

# 1. The floor.  "--runs=0" after it is a usage error too: the floor
# must be what is reported (it is checked where the option is parsed),
# and nothing can run either way.
for d in 1k:1 999999:100 400M:9; do
	out=$("$FLUSHKIT" reproduce 003 --device=$d --runs=0 2>&1)
	rc=$?
	[ $rc -eq 2 ] && echo "$out" | grep -q 'below the floor' ||
		err "--device=$d: exit $rc, '$out' (want 2, 'below the floor')"
done
# 0:0 is no emulated disk at all (a throttle of 0 is no limit): refused
# as a bad value (say native), not as below the floor.
out=$("$FLUSHKIT" reproduce 003 --device=0:0 --runs=0 2>&1)
rc=$?
[ $rc -eq 2 ] && ! echo "$out" | grep -q 'below the floor' ||
	err "--device=0:0 (no limits): exit $rc, '$out' (want 2, a bad value)"

# 2. BPS:IOPS is the throttle model, BPS decimal.
"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=50M:1000 \
	--results "$t/units" >"$t/units.out" 2>&1 &
pid=$!
model=
for _ in $(seq 1 300); do
	i=$(ls /run/flushkit-disk/fkrun-$pid-*/info 2>/dev/null | head -1)
	[ -n "$i" ] && model=$(sed -n 's/^model //p' "$i") && [ -n "$model" ] && break
	sleep 0.1
done
wait $pid || err "--device=50M:1000: exit $?: $(tail -3 "$t/units.out")"
[ "$model" = throttle:50M:1000 ] ||
	err "--device=50M:1000 ran on a lab disk of model '$model' (want throttle:50M:1000)"
grep -q '^Device: 50M:1000 (modelled the cgroup v1 blkio write throttle .*; write 50 MB/s, 1000 write IOPS)\.' \
	"$t/units/003/table.md" ||
	err "--device=50M:1000: table heading $(grep '^Device' "$t/units/003/table.md" | head -1)"

# 3. --cleanup with a seed.
(cd "$t" && "$FLUSHKIT" reproduce 000 --cleanup --quick --device=$dev \
	>"$t/cl.out" 2>&1)
rc=$?
[ $rc -eq 2 ] || err "000 --cleanup: exit $rc (want 2): $(cat "$t/cl.out")"
grep -q '^seed 000' "$t/cl.out" && err "000 --cleanup ran the seed"
[ -e "$t/results" ] && err "000 --cleanup made $t/results"

# 4. --results naming a file.
out=$("$FLUSHKIT" reproduce 003 --quick --device=$dev --results /etc/passwd 2>&1)
rc=$?
[ $rc -eq 2 ] || err "--results /etc/passwd: exit $rc (want 2): $out"
echo "$out" | grep -q "'/etc/passwd'" ||
	err "--results /etc/passwd: the message does not name it: $out"
echo "$out" | grep -q '^seed \|^report:' &&
	err "--results /etc/passwd: it ran or printed a report: $out"

# 5. A reused --results directory.
"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=$dev \
	--results "$t/re" >"$t/re1.out" 2>&1 ||
	err "003 --quick: exit $?: $(cat "$t/re1.out")"
if [ -s "$t/re/003/commands.txt" ]; then
	before=$(cat "$t/re/003/commands.txt")
	n_before=$(ls "$t/re/003/a" "$t/re/003/b" | wc -l)
	"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=$dev \
		--results "$t/re" >"$t/re2.out" 2>&1
	rc=$?
	[ $rc -eq 2 ] || err "reused --results: exit $rc (want 2): $(cat "$t/re2.out")"
	grep -q "not empty" "$t/re2.out" ||
		err "reused --results: no 'not empty' message: $(cat "$t/re2.out")"
	[ "$(cat "$t/re/003/commands.txt")" = "$before" ] ||
		err "reused --results: commands.txt changed (appended to)"
	[ "$(ls "$t/re/003/a" "$t/re/003/b" | wc -l)" = "$n_before" ] ||
		err "reused --results: result files added to the first run's"
else
	err "003 --quick wrote no commands.txt"
fi
mkdir "$t/other" && echo keep >"$t/other/x"
"$FLUSHKIT" reproduce 003 --quick --device=$dev --results "$t/other" \
	>"$t/o.out" 2>&1
rc=$?
[ $rc -eq 2 ] || err "non-empty --results: exit $rc (want 2): $(cat "$t/o.out")"
[ "$(cat "$t/other/x")" = keep ] && [ "$(ls "$t/other")" = x ] ||
	err "non-empty --results: its contents changed: $(ls "$t/other")"

# 6. stdout closed under it.
mkfifo "$t/fifo"
"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=$dev --results "$t/p" \
	>"$t/fifo" 2>"$t/p.err" &
pid=$!
first=$(head -1 <"$t/fifo")
wait $pid
rc=$?
echo "$first" | grep -q '^seed 003' || err "| head -1: first line '$first'"
[ $rc -eq 1 ] || err "| head -1: exit $rc (want 1; 141 is death by SIGPIPE): $(cat "$t/p.err")"
grep -q 'broken pipe' "$t/p.err" || err "| head -1: no message: $(cat "$t/p.err")"
l=$(leftovers $pid)
[ -z "$l" ] || err "| head -1: left: $l"

# 7. The run directory appears only with its lock held.
if command -v strace >/dev/null; then
	ls -a "$root" 2>/dev/null | sort >"$t/root0"
	# (LeakSanitizer cannot run under ptrace: off for this run.)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -o /dev/null -e trace=flock \
		-e inject=flock:delay_enter=3000000 \
		"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=$dev \
		--results "$t/race" >"$t/race.out" 2>&1 &
	spid=$!
	seen=
	for _ in $(seq 1 600); do
		seen=$(ls -a "$root" 2>/dev/null | sort | comm -13 "$t/root0" - |
			grep '^run-\|^\.new-' | head -1)
		[ -n "$seen" ] && break
		sleep 0.05
	done
	if [ -n "$seen" ]; then
		"$FLUSHKIT" reproduce --cleanup >"$t/race-cl.out" 2>&1
		wait $spid
		rc=$?
		[ $rc -eq 0 ] ||
			err "a run starting during --cleanup (saw $seen): exit $rc: $(cat "$t/race.out")"
	else
		err "strace'd run made no run directory: $(cat "$t/race.out")"
		kill -TERM $spid 2>/dev/null
		wait $spid
	fi
fi
# 8. A killed run's tracefs instance (003's block events) goes with
# the next --cleanup, not only its mount.
"$FLUSHKIT" reproduce 003 --quick --runs=200 --device=$dev \
	--results "$t/tr" >"$t/tr.out" 2>&1 &
pid=$!
inst=$root/run-$pid/tracefs/instances/flushkit-$pid
for _ in $(seq 1 300); do
	[ -d "$inst" ] && break
	sleep 0.1
done
if [ -d "$inst" ]; then
	kill -KILL $pid
	wait $pid 2>/dev/null
	for _ in $(seq 50); do
		[ -z "$(pgrep -f "$root/run-$pid/")" ] && break
		sleep 0.2
	done
	"$FLUSHKIT" reproduce --cleanup >/dev/null 2>&1
	mkdir "$t/tracefs"
	if mount -t tracefs nodev "$t/tracefs"; then
		[ -e "$t/tracefs/instances/flushkit-$pid" ] &&
			err "after --cleanup: the killed run's tracefs instance flushkit-$pid is left"
		umount "$t/tracefs"
	fi
	l=$(leftovers $pid)
	[ -z "$l" ] || err "after SIGKILL and --cleanup: left: $l"
else
	echo "not checked: no tracefs instance (block events unavailable): $(cat "$t/tr.out")"
	kill -TERM $pid 2>/dev/null
	wait $pid
fi
# Whatever a failed check above left behind.
"$FLUSHKIT" reproduce --cleanup >/dev/null 2>&1
[ $fail -eq 0 ] && echo "PASS"
exit $fail
