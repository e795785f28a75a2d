#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit disk: create, list, stats and destroy disks of models ram and
# throttle; a bad model, size or option is exit 2 with a clear message, a
# disk too big for memory exit 1; a daemon killed by SIGKILL (its disk's
# loop device and a file system on it left behind) is removed by the next
# create and by `disk cleanup`; nothing of ours stays mounted or attached.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -c /dev/fuse ] && [ -e /dev/loop-control ] || skip "needs /dev/fuse and loop devices"
fk=${FLUSHKIT:?}
[ -x "$(dirname "$fk")/flushkit-diskd" ] || skip "no flushkit-diskd"
tmp=${TMPDIR:-/tmp}/t-disk.$$
mkdir -p "$tmp"
n=t-disk-$$
ours() {	# what of ours is attached or mounted: lines
	losetup -a | grep "/run/flushkit-disk/$n" || true
	grep -E "/run/flushkit-disk/$n|$tmp/mnt" /proc/mounts || true
}
cleanup() {
	umount -l "$tmp/mnt" 2>/dev/null
	for d in "$n-a" "$n-b" "$n-k" "$n-c"; do
		"$fk" disk destroy "$d" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# usage errors: 2, with the reason
"$fk" disk create --model=nosuch --name "$n-x" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad model: exit $rc"
grep -q "^flushkit disk create: invalid value 'nosuch' for --model" "$tmp/err" || fail "bad model message: $(cat "$tmp/err")"
"$fk" disk create --model=throttle:fast:1 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad throttle: exit $rc"
"$fk" disk create --model=ram --size 12q 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad size: exit $rc"
grep -q "^flushkit disk create: invalid value '12q' for --size" "$tmp/err" || fail "bad size message: $(cat "$tmp/err")"
"$fk" disk create 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "no --model: exit $rc"
"$fk" disk frobnicate 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "bad subcommand: exit $rc"
# too big for memory: 1
"$fk" disk create --model=ram --size 64T --name "$n-x" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "too big: exit $rc"
grep -q "does not fit in memory" "$tmp/err" || fail "too big message: $(cat "$tmp/err")"
[ ! -e "/run/flushkit-disk/$n-x" ] || fail "a refused disk left its directory"
"$fk" disk --help | grep -q "disk create --model=MODEL" || fail "--help"

# ram and throttle disks
da=$("$fk" disk create --model=ram --size 64M --name "$n-a") || fail "create ram"
db=$("$fk" disk create --model=throttle:150M:150 --size 32M --name "$n-b") || fail "create throttle"
[[ $da == /dev/loop* && $db == /dev/loop* ]] || fail "create printed '$da' '$db'"
[ "$(cat "/sys/block/${da#/dev/}/loop/dio")" = 1 ] || fail "$da: no direct I/O"
[ "$(blockdev --getsize64 "$da")" = $((64 << 20)) ] || fail "$da size"
"$fk" disk list >"$tmp/list" || fail "list"
grep -Eq "^$n-a +$da +ram .* alive" "$tmp/list" || fail "list: $(cat "$tmp/list")"
grep -Eq "^$n-b +$db +throttle:150M:150 .* alive" "$tmp/list" || fail "list: $(cat "$tmp/list")"
# 20 writes of 4 KiB at 150 IOPS: about 0.13 s; counted by the daemon
dd if=/dev/zero of="$db" bs=4k count=20 oflag=direct status=none || fail "write $db"
"$fk" disk stats "$db" >"$tmp/st" || fail "stats"
grep -q "^writes 20$" "$tmp/st" || fail "stats writes: $(grep ^writes "$tmp/st")"
grep -q "^model throttle:150M:150$" "$tmp/st" || fail "stats model"
"$fk" disk stats "$n-b" --json >"$tmp/st.json" || fail "stats --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["writes"]==20 and d["model"]=="throttle:150M:150", d' "$tmp/st.json" ||
	fail "stats --json: $(cat "$tmp/st.json")"
# a fault rule fires, and clears
"$fk" disk fault "$da" fail w EIO 0 0 || fail "fault"
dd if=/dev/zero of="$da" bs=4k count=1 oflag=direct status=none 2>/dev/null && fail "write under a fail rule"
"$fk" disk fault "$da" clear || fail "fault clear"
dd if=/dev/zero of="$da" bs=4k count=1 oflag=direct status=none || fail "write after clear"
"$fk" disk fault "$da" bogus 2>/dev/null && fail "a bad rule accepted"
"$fk" disk destroy "$db" || fail "destroy $db"
"$fk" disk list | grep -q "^$n-b " && fail "destroyed disk still listed"

# a killed daemon, with a file system mounted from its disk
dk=$("$fk" disk create --model=ram --size 64M --name "$n-k") || fail "create"
mkfs.ext4 -q "$dk" || fail "mkfs"
mkdir -p "$tmp/mnt" && mount "$dk" "$tmp/mnt" || fail "mount"
pid=$(awk '$1 == "pid" {print $2}' "/run/flushkit-disk/$n-k/info")
kill -9 "$pid"
# The lock goes when the process is gone, which under load can take a
# while after SIGKILL (its threads leave FUSE and loop waits first):
# wait up to 30 s for the list to say so.
for _ in $(seq 300); do
	"$fk" disk list 2>/dev/null | grep -Eq "^$n-k .* stale" && break
	sleep 0.1
done
"$fk" disk list | grep -Eq "^$n-k .* stale" || fail "killed disk not listed stale (pid $pid: $(ps -o stat= -p "$pid" 2>/dev/null || echo gone))"
dc=$("$fk" disk create --model=ram --size 16M --name "$n-c" 2>"$tmp/err") || fail "create after a kill"
# (Another user's create or cleanup on this machine may remove it
# first: then it is gone all the same, which is what is checked.)
grep -q "removing stale disk $n-k" "$tmp/err" || [ ! -e "/run/flushkit-disk/$n-k" ] ||
	fail "create did not clean: $(cat "$tmp/err")"
[ ! -e "/run/flushkit-disk/$n-k" ] || fail "stale dir left"
grep -q " $tmp/mnt " /proc/mounts && fail "the stale disk's file system is still mounted"
# and `disk cleanup` does the same
"$fk" disk destroy "$dc" || fail "destroy $dc"
dk=$("$fk" disk create --model=ram --size 16M --name "$n-k") || fail "create"
pid=$(awk '$1 == "pid" {print $2}' "/run/flushkit-disk/$n-k/info")
kill -9 "$pid"
for _ in $(seq 300); do
	"$fk" disk list 2>/dev/null | grep -Eq "^$n-k .* stale" && break
	sleep 0.1
done
"$fk" disk cleanup >"$tmp/out" 2>&1 || fail "cleanup"
grep -q "removing stale disk $n-k" "$tmp/out" || [ ! -e "/run/flushkit-disk/$n-k" ] ||
	fail "cleanup: $(cat "$tmp/out")"
[ ! -e "/run/flushkit-disk/$n-k" ] || fail "cleanup left /run/flushkit-disk/$n-k"
"$fk" disk destroy "$da" || fail "destroy $da"
left=$(ours)
[ -z "$left" ] || fail "left behind: $left"
echo "ok: ram and throttle disks, usage errors, a killed daemon cleaned by create and cleanup"
