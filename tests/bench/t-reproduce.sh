#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit reproduce all --quick" on each seed's own kind of lab disk
# (no --device: 000 and 001 ssd, 002-004 hdd; each table names it): every
# seed's table (table.md with the seed's figures beside ours, table.html)
# and plots (report/index.html with at least one plot), the seed-layout
# CSV of 002, one index.html with all five; with PostgreSQL 15 the
# peer's table in 000 and an initdb tree in 003; and afterwards nothing
# mounted or attached, no lab disk of the run in /run/flushkit-disk, and
# no PostgreSQL server, cluster or
# socket of the run.  Then the same after a SIGTERM in the
# middle of a run (exit 1, everything removed), and after a SIGKILL (the
# leftovers are there, and "reproduce --cleanup", as the next start
# does, removes them).  Checks that the tables are produced, not the
# effects.  Not root or no loop devices: skip (77).
set -u
if [ "$(id -u)" != 0 ]; then
	out=$("$FLUSHKIT" reproduce 000 --quick 2>&1)
	rc=$?
	[ $rc -eq 1 ] && echo "$out" | grep -q 'needs root' ||
		{ echo "FAIL: not root: exit $rc, '$out'"; exit 1; }
	echo "SKIP: not root"; exit 77
fi
[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4"; exit 77; }
root=/var/tmp/flushkit-disks
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-reproduce.XXXXXX)
trap 'rm -rf "$t"' EXIT
# The SIGTERM and SIGKILL runs: a fast lab disk (the throttle model).
dev=throttle:400M:20000
labroot=/run/flushkit-disk

# Lab disks made by process $1 (bench/lib/disk.c names them
# fkrun-PID-NAME), with their loop devices.
labdisks() {
	for d in "$labroot"/fkrun-"$1"-*; do
		[ -e "$d" ] || continue
		echo "lab disk $d"
		for f in /sys/block/loop*/loop/backing_file; do
			[ -r "$f" ] && grep -H -F "$d/" "$f"
		done
	done
}

# What a run with pid $1 left: mounts, loop devices, lab disks.
leftovers() {
	grep -F " $root/run-$1/" /proc/self/mountinfo
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] && grep -H -F "$root/run-$1/" "$f"
	done
	labdisks "$1"
	[ -e "$root/run-$1" ] && echo "directory $root/run-$1"
}

# Start "reproduce $@" in the background; wait until its disk is
# mounted and is a lab disk.  Sets $pid.
start_and_wait_mounted() {
	"$FLUSHKIT" reproduce "$@" >"$t/bg.out" 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		if grep -q -F " $root/run-$pid/" /proc/self/mountinfo &&
		   [ -n "$(labdisks $pid)" ]
		then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# 1. The whole quick run, on the seeds' own kinds of disk.
out=$("$FLUSHKIT" reproduce all --quick --progress --results "$t/r" 2>"$t/progress")
rc=$?
[ $rc -eq 0 ] || err "reproduce all --quick: exit $rc: $out $(tail -5 "$t/progress")"
# Long work shows progress (--progress; by default on a terminal): a
# line as each step starts and one with its time as it ends.
grep -q '^reproduce: 000: init.log: flushkit bench tpcb -i \.\.\. started$' "$t/progress" ||
	err "no progress line for 000's init: $(head -3 "$t/progress")"
grep -Eq '^reproduce: 003: .*: done in [0-9.]+ s$' "$t/progress" ||
	err "no 'done in' line for 003: $(grep 003 "$t/progress" | head -3)"
[ "$(grep -c ' started$' "$t/progress")" = "$(grep -Ec ': (done|failed) in ' "$t/progress")" ] ||
	err "progress: not one end line per start line"
for n in 000 001 002 003 004; do
	md="$t/r/$n/table.md"
	[ -s "$md" ] || { err "$n: no table.md"; continue; }
	grep -q '^| metric | seed ' "$md" || err "$n: no table header in $md"
	rows=$(grep -c '^| [^m-]' "$md")
	[ "$rows" -ge 2 ] || err "$n: $rows table rows in $md"
	grep -q 'Seed effects shown at 2σ: [0-9]* of [0-9]*' "$md" ||
		err "$n: no 'shown' count in $md"
	case $n in 000|001) want=ssd ;; *) want=hdd ;; esac
	grep -q "^Device: $want (modelled .*)\.  A: " "$md" ||
		err "$n: the table does not say it ran on the model $want: $(grep '^Device' "$md" | head -1)"
	grep -q "^seed $n .*(--device=$want, the seed's kind of disk" <<<"$out" ||
		err "$n: the run does not say it ran on $want"
	[ -s "$t/r/$n/table.html" ] || err "$n: no table.html"
	[ -s "$t/r/$n/report/index.html" ] || err "$n: no report/index.html"
	ls "$t/r/$n/report/"*.png >/dev/null 2>&1 ||
		ls "$t/r/$n/report/"*.svg >/dev/null 2>&1 ||
		err "$n: no plot in report/"
	grep -q "<h2>${n}:" "$t/r/index.html" 2>/dev/null ||
		err "$n: not in index.html"
done
# The power of every row: the 2σ threshold (and as a share of A), and
# where the seed gave both figures the runs its relative effect needs.
grep -q "^| metric | seed .* | detectable (2σ) | runs for the seed's effect |$" "$t/r/000/table.md" ||
	err "000: no power columns in the table header"
grep -Eq '^\| tps \| 7871\.887 \| 9369\.212 \| \+ \|.*\| ±[0-9.e+]+ \([0-9.]+%\) \| seed \+19%: [0-9]+ a side \(ran 2\) \|$' "$t/r/000/table.md" ||
	err "000: the tps row has no power cells: $(grep '^| tps' "$t/r/000/table.md" | head -1)"
grep -q '^Power: "detectable (2σ)"' "$t/r/003/table.md" ||
	err "003: no power note under the table"
grep -q '"scale","clients","tps","max_latency"' "$t/r/002/seed-layout.csv" ||
	err "002: no seed-layout.csv in the seed's CSV layout"
grep -q '| test 1: 4 syncs, nothing to write' "$t/r/004/table.md" ||
	err "004: test 1's row does not give the count of syncs run (4 with --quick)"
grep -q 'progress: .* tps, lat .* ms stddev' "$t/r/000/table.md" ||
	err "000: no worst progress seconds"
# 000's A is the seed's before (WAIT_BEFORE|WRITE), and the hints that
# wait for their own writes too are a third configuration in a table of
# their own, counting no seed effect.
grep -q '^Device: .*A: bench tpcb .*--checkpoint-flush-wait=before\.  B: .*--checkpoint-flush-wait=off\.$' "$t/r/000/table.md" ||
	err "000: A is not --checkpoint-flush-wait=before beside B off"
sed -n '/^### 000, a third configuration/,/^###/p' "$t/r/000/table.md" >"$t/c.md"
grep -q 'A: bench tpcb .*--checkpoint-flush-wait=all\.  B: .*--checkpoint-flush-wait=off\.$' "$t/c.md" ||
	err "000: no third table of --checkpoint-flush-wait=all beside off"
grep -q '^| tps | seed — | seed — |\|^| tps | — | — | — |' "$t/c.md" ||
	grep -q '^| tps | — | — |' "$t/c.md" || err "000: the third table's tps row: $(grep '^| tps' "$t/c.md")"
grep -q 'Seed effects shown' "$t/c.md" && err "000: the third table counts seed effects"
ls "$t/r/000/c/"*.jsonl >/dev/null 2>&1 || err "000: no result files of C"
grep -q 'dirty.png\|dirty.svg' "$t/r/index.html" ||
	err "index.html shows no Dirty/Writeback plot"
# 000's peer: with PostgreSQL 15 its own table beside the store's, else
# the line saying it was left out.
run=$(sed -n 's|.*/run-\([0-9]*\)/.*|\1|p' "$t/r/000/commands.txt" | head -1)
if [ -x /usr/lib/postgresql/15/bin/initdb ] &&
	[ -x /usr/lib/postgresql/15/bin/pgbench ] && id postgres >/dev/null 2>&1; then
	md=$t/r/000/table.md
	grep -q '^### 000 peer: PostgreSQL 15$' "$md" ||
		err "000: no peer table in $md"
	for m in transactions 'latency average' 'latency stddev' tps \
		'worst second' 'max latency'; do
		[ "$(grep -c "^| $m" "$md")" = 3 ] ||
			err "000: '$m' is not in the three tables of $md"
	done
	sed -n '/^### 000 peer/,$p' "$md" | grep -q '| [0-9.e+]* ± [0-9.e+]* (n=2) | [0-9.e+]* ± [0-9.e+]* (n=2) | [-+0] |' ||
		err "000: the peer table has no rows with two runs a side and a marker"
	sed -n '/^### 000 peer/,$p' "$md" | grep -q 'progress: .* tps, lat .* ms stddev' ||
		err "000: no worst progress seconds of the peer"
	grep -q 'Seed effects shown by PostgreSQL at 2σ: [0-9]* of [0-9]*' "$md" ||
		err "000: no 'shown' count of the peer"
	ls "$t/r/000/pg-a/"*.jsonl "$t/r/000/pg-b/"*.jsonl >/dev/null 2>&1 ||
		err "000: no peer result files"
	grep -q 'a fresh initdb data directory' "$t/r/003/table.md" ||
		err "003: the tree copied is not an initdb data directory"
else
	grep -q '^000 peer: PostgreSQL 15 not installed, left out' <<<"$out" ||
		err "000: no PostgreSQL 15 and no line saying the peer was left out"
	echo "not checked: the PostgreSQL peer's table (no PostgreSQL 15)"
fi
# No PostgreSQL process of the run (they all work in their data
# directory, below the run's), no cluster or socket directory.
for p in $(pgrep -u postgres 2>/dev/null); do
	c=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue
	case $c in "$root/run-$run/"*) err "after the run: PostgreSQL process $p in $c" ;; esac
done
[ -n "$run" ] && [ -e "$root/run-$run" ] &&
	err "after the run: $root/run-$run (cluster records, sockets): $(ls "$root/run-$run")"
# Any run directory left is a leftover of this run (it held the lock).
ls -d "$root"/run-* 2>/dev/null | while read -r d; do
	p=${d##*/run-}
	kill -0 "$p" 2>/dev/null || echo "left: $d"
done >"$t/dirs"
[ -s "$t/dirs" ] && err "after the run: $(cat "$t/dirs")"
# Mounts of runs that are gone (other runs may be going on).
grep -o -F " $root/run-" /proc/self/mountinfo >/dev/null &&
	grep -F " $root/run-" /proc/self/mountinfo |
	sed -n "s|.* $root/run-\([0-9]*\)/.*|\1|p" | sort -u |
	while read -r p; do
		kill -0 "$p" 2>/dev/null || echo "run $p"
	done >"$t/mnts"
[ -s "$t/mnts" ] && err "after the run: still mounted: $(cat "$t/mnts")"
# Lab disks of makers that are gone (the run, its bench sync child).
for d in "$labroot"/fkrun-*; do
	[ -e "$d" ] || continue
	p=${d##*/fkrun-}
	p=${p%%-*}
	kill -0 "$p" 2>/dev/null || err "after the run: lab disk $d"
done

# 2. SIGTERM in the middle of a run: exit 1, nothing left.
if start_and_wait_mounted 000 --quick --device=$dev --results "$t/term"; then
	sleep 2
	kill -TERM $pid
	wait $pid
	rc=$?
	[ $rc -eq 1 ] || err "SIGTERM: exit $rc (want 1): $(cat "$t/bg.out")"
	grep -q 'interrupted' "$t/bg.out" || err "SIGTERM: no message"
	l=$(leftovers $pid)
	[ -z "$l" ] || err "after SIGTERM: left: $l"
else
	err "SIGTERM: the run never mounted its disk: $(cat "$t/bg.out")"
	kill -TERM $pid 2>/dev/null; wait $pid
fi

# 3. SIGKILL: its children stop too, the leftovers of its own disks
# stay (they must: nothing ran to remove them), and --cleanup removes
# them.
if start_and_wait_mounted 000 --quick --device=$dev --results "$t/kill"; then
	sleep 1
	kill -KILL -- $pid
	wait $pid 2>/dev/null
	# Its benchmark children (their own process group) get SIGTERM
	# when it dies (PR_SET_PDEATHSIG): none of them goes on running.
	for _ in $(seq 20); do
		[ -z "$(pgrep -f "$root/run-$pid/")" ] && break
		sleep 0.5
	done
	orphans=$(pgrep -f "$root/run-$pid/")
	if [ -n "$orphans" ]; then
		err "after SIGKILL: its children still run: $(ps -o pid,args -p "$(echo $orphans | tr ' ' ,)" 2>/dev/null | tail -n +2)"
		for p in $orphans; do kill -KILL "$p"; done
		sleep 1
	fi
	# A child that is exiting (its command line already gone) may
	# still hold the run's lock for a moment: wait until it is free.
	for _ in $(seq 50); do
		[ -e "$root/run-$pid/lock" ] || break
		flock -n "$root/run-$pid/lock" true && break
		sleep 0.2
	done
	l=$(leftovers $pid)
	[ -n "$l" ] || err "after SIGKILL: nothing left (test is vacuous)"
	out=$("$FLUSHKIT" reproduce --cleanup 2>&1)
	echo "$out" | grep -q 'removed [1-9][0-9]* leftovers' ||
		err "--cleanup: '$out'"
	l=$(leftovers $pid)
	[ -z "$l" ] || err "after --cleanup: left: $l"
else
	err "SIGKILL: the run never mounted its disk: $(cat "$t/bg.out")"
	kill -KILL $pid 2>/dev/null; wait $pid
fi
# 4. A throttle someone else set on a loop device that is not attached
# is not flushkit's: --cleanup leaves it.
# The device is one of our own far above the ones in use (LOOP_CTL_ADD),
# so that no concurrent run is handed it (LOOP_CTL_GET_FREE takes the
# lowest free one): a shared free device could be given to another run,
# which would then lose its throttle when this test resets it.
bpsf=/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
loopctl() { # ADD|REMOVE N: LOOP_CTL_ADD / LOOP_CTL_REMOVE; prints N
	python3 -c 'import fcntl, os, sys
fd = os.open("/dev/loop-control", os.O_RDWR)
print(fcntl.ioctl(fd, 0x4C80 if sys.argv[1] == "ADD" else 0x4C81, int(sys.argv[2])))' "$@" 2>/dev/null
}
fmin=
if [ -w "$bpsf" ] && command -v python3 >/dev/null; then
	for n in 243 244 245 246 247; do
		[ -e /sys/block/loop$n ] && continue
		[ "$(loopctl ADD $n)" = $n ] && { fmin=$n; break; }
	done
fi
if [ -n "$fmin" ]; then
	echo "7:$fmin 12345678" >"$bpsf"
	"$FLUSHKIT" reproduce --cleanup >/dev/null 2>&1
	grep -q "^7:$fmin 12345678\$" "$bpsf" ||
		err "--cleanup reset a throttle it did not set (7:$fmin)"
	echo "7:$fmin 0" >"$bpsf"
	loopctl REMOVE $fmin >/dev/null
else
	echo "not checked: a foreign throttle survives --cleanup (no blkio throttle, python3 or spare loop number)"
fi
[ $fail -eq 0 ] && echo "PASS"
exit $fail
