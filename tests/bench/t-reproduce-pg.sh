#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit reproduce" with PostgreSQL 15 as the peer (seeds 000 and
# 003), on a fast throttled profile with --quick:
#   1. PostgreSQL absent (PG_BIN naming an empty directory): 000 says
#      "000 peer: PostgreSQL 15 not installed, left out" and writes no
#      peer table; 003 copies the generated tree and says so;
#   2. 003 with PostgreSQL: the tree copied is a fresh initdb data
#      directory, and the table says so;
#   3. SIGTERM and SIGHUP while the peer's pgbench runs: exit 1, and no
#      server, cluster directory, socket, mount or run directory is left;
#   4. a failing peer step (a pgbench that exits 3): 000 fails, exit 1,
#      and the cluster is stopped and removed all the same;
#   5. SIGKILL while the peer runs: the server outlives the run (nothing
#      ran to stop it), and "reproduce --cleanup", as the next start
#      does, stops it and removes the rest.
# A server of run PID is a process of user postgres whose working
# directory is below the run's directory (every PostgreSQL process
# works in its data directory).  Not root, no loop devices: skip (77);
# without PostgreSQL 15 and user postgres only case 1 runs.
set -u
if [ "$(id -u)" != 0 ]; then echo "SKIP: not root"; exit 77; fi
[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4"; exit 77; }
root=/var/tmp/flushkit-disks
pgbin=/usr/lib/postgresql/15/bin
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-reproduce-pg.XXXXXX)
trap 'rm -rf "$t"' EXIT
dev=throttle:400M:20000

# The PostgreSQL processes of run $1.
pg_procs() {
	local p c
	for p in $(pgrep -u postgres 2>/dev/null); do
		c=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue
		case $c in "$root/run-$1/"*) echo "$p $c" ;; esac
	done
}

# What run $1 left: PostgreSQL processes, mounts, loop devices, lab
# disks, its
# directory (the socket directories and records live in it).
leftovers() {
	pg_procs "$1"
	grep -F " $root/run-$1/" /proc/self/mountinfo
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] && grep -H -F "$root/run-$1/" "$f"
	done
	for d in /run/flushkit-disk/fkrun-"$1"-*; do
		[ -e "$d" ] && echo "lab disk $d"
	done
	[ -e "$root/run-$1" ] && echo "directory $root/run-$1: $(ls "$root/run-$1" 2>&1 | tr '\n' ' ')"
}

# Start "reproduce $@" in the background and wait until the peer's
# pgbench runs (its first run's output exists and a server of the run
# is up).  Sets $pid.
start_and_wait_peer() {
	local res=$1
	shift
	"$FLUSHKIT" reproduce "$@" --results "$res" >"$t/bg.out" 2>&1 &
	pid=$!
	for _ in $(seq 1 1200); do
		if [ -e "$res/000/pg-a-1.out" ] && [ -n "$(pg_procs $pid)" ]; then
			return 0
		fi
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# 1. Without PostgreSQL.
mkdir "$t/nopg"
PG_BIN=$t/nopg "$FLUSHKIT" reproduce 000 --quick --runs=1 --device=$dev \
	--results "$t/r1" >"$t/r1.out" 2>&1 ||
	err "000 without PostgreSQL: exit $?: $(cat "$t/r1.out")"
grep -q '^000 peer: PostgreSQL 15 not installed, left out$' "$t/r1.out" ||
	err "000 without PostgreSQL: no 'not installed' line: $(cat "$t/r1.out")"
grep -q '000 peer' "$t/r1/000/table.md" 2>/dev/null &&
	err "000 without PostgreSQL: a peer table in table.md"
[ -s "$t/r1/000/table.md" ] || err "000 without PostgreSQL: no table.md"
PG_BIN=$t/nopg "$FLUSHKIT" reproduce 003 --quick --runs=1 --device=$dev \
	--results "$t/r3n" >"$t/r3n.out" 2>&1 ||
	err "003 without PostgreSQL: exit $?: $(cat "$t/r3n.out")"
grep -q 'The tree: .*(a generated PostgreSQL-like data directory' \
	"$t/r3n/003/table.md" 2>/dev/null ||
	err "003 without PostgreSQL: the table does not say the tree is generated"

if ! [ -x $pgbin/initdb ] || ! [ -x $pgbin/pgbench ] ||
	! id postgres >/dev/null 2>&1; then
	echo "not checked: the PostgreSQL peer (no PostgreSQL 15 or user postgres)"
	[ $fail -eq 0 ] && echo "PASS"
	exit $fail
fi

# 2. 003's tree is a fresh initdb data directory.
"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=$dev \
	--results "$t/r3" >"$t/r3.out" 2>&1 ||
	err "003: exit $?: $(cat "$t/r3.out")"
grep -q 'The tree: .*(a fresh initdb data directory of postgres (PostgreSQL) 15' \
	"$t/r3/003/table.md" 2>/dev/null ||
	err "003: the table does not say the tree is a fresh initdb data directory: $(grep 'The tree' "$t/r3/003/table.md" 2>&1)"
grep -q 'pg_ctl .* stop' "$t/r3/003/commands.txt" 2>/dev/null ||
	err "003: the server was not stopped (no pg_ctl stop in commands.txt)"
l=$(leftovers "$(sed -n 's|.*/run-\([0-9]*\)/.*|\1|p' "$t/r3/003/commands.txt" | head -1)")
[ -z "$l" ] || err "003: left: $l"

# 3. SIGTERM, SIGHUP while pgbench runs.
for sig in TERM HUP; do
	if start_and_wait_peer "$t/s$sig" 000 --quick --device=$dev; then
		sleep 1
		kill -$sig $pid
		wait $pid
		rc=$?
		[ $rc -eq 1 ] || err "SIG$sig: exit $rc (want 1): $(cat "$t/bg.out")"
		grep -q 'interrupted' "$t/bg.out" || err "SIG$sig: no message"
		l=$(leftovers $pid)
		[ -z "$l" ] || err "after SIG$sig during the peer: left: $l"
	else
		err "SIG$sig: the peer never ran: $(cat "$t/bg.out")"
		kill -TERM $pid 2>/dev/null
		wait $pid
	fi
done

# 4. A peer step fails: PostgreSQL's programs, but a pgbench that exits 3.
mkdir -m 755 "$t/badpg"
chmod 711 "$t" # user postgres runs initdb and pg_ctl from there
for p in initdb pg_ctl postgres psql; do ln -s $pgbin/$p "$t/badpg/$p"; done
printf '#!/bin/sh\nexit 3\n' >"$t/badpg/pgbench"
chmod 755 "$t/badpg/pgbench"
PG_BIN=$t/badpg "$FLUSHKIT" reproduce 000 --quick --runs=1 --device=$dev \
	--results "$t/bad" >"$t/bad.out" 2>&1 &
pid=$!
wait $pid
rc=$?
[ $rc -eq 1 ] || err "failing pgbench: exit $rc (want 1): $(cat "$t/bad.out")"
grep -q "'pgbench' failed with status 3" "$t/bad.out" ||
	err "failing pgbench: no message naming it: $(cat "$t/bad.out")"
grep -q 'pg_ctl .* start' "$t/bad/000/commands.txt" 2>/dev/null ||
	err "failing pgbench: the server was never started (test is vacuous)"
l=$(leftovers $pid)
[ -z "$l" ] || err "after a failing pgbench: left: $l"

# 5. SIGKILL while pgbench runs: the server stays until --cleanup.
if start_and_wait_peer "$t/kill" 000 --quick --device=$dev; then
	kill -KILL $pid
	wait $pid 2>/dev/null
	# pgbench (PR_SET_PDEATHSIG) exits; a child exiting may hold the
	# run's lock for a moment.
	for _ in $(seq 50); do
		flock -n "$root/run-$pid/lock" true && break
		sleep 0.2
	done
	[ -n "$(pg_procs $pid)" ] ||
		err "after SIGKILL: no server left (test is vacuous)"
	out=$("$FLUSHKIT" reproduce --cleanup 2>&1)
	echo "$out" | grep -q 'removed [1-9][0-9]* leftovers' ||
		err "--cleanup: '$out'"
	l=$(leftovers $pid)
	[ -z "$l" ] || err "after SIGKILL and --cleanup: left: $l"
else
	err "SIGKILL: the peer never ran: $(cat "$t/bg.out")"
	kill -KILL $pid 2>/dev/null
	wait $pid
fi
# Whatever a failed check above left behind.
"$FLUSHKIT" reproduce --cleanup >/dev/null 2>&1
[ $fail -eq 0 ] && echo "PASS"
exit $fail
