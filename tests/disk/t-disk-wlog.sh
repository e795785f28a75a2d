#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit disk's write log and replay (docs/disk.md "Write log and
# replay"): a disk made with --write-log logs its writes, FLUSHes and ctl
# marks to a new 0600 file; `disk replay` rebuilds the image at a mark
# and at a FLUSH (an unflushed write whole, or with --subset either old
# or new); an existing log file is refused; a full log ends with FULL,
# stat log_full 1 and a mark that fails with ENOSPC; the usage errors.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
fk=${FLUSHKIT:?}
tmp=${TMPDIR:-/tmp}/t-disk-wlog.$$
mkdir -p "$tmp"
n=t-disk-wlog-$$
cleanup() {
	for d in "$n-a" "$n-b"; do
		"$fk" disk destroy "$d" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# replay needs no root: its usage errors first
"$fk" disk replay 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "replay without LOG: exit $rc"
"$fk" disk replay "$tmp/x" --seed 3 "$tmp/img" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "--seed without --subset: exit $rc"
"$fk" disk replay "$tmp/x" --to-flush 1 --to-entry 2 "$tmp/img" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "two points: exit $rc"
echo "not a log" >"$tmp/notlog"
"$fk" disk replay "$tmp/notlog" "$tmp/img" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "a foreign file: exit $rc"
grep -q "not a flushkit write log" "$tmp/err" || fail "foreign file message: $(cat "$tmp/err")"

[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -c /dev/fuse ] && [ -e /dev/loop-control ] || skip "needs /dev/fuse and loop devices"
[ -x "$(dirname "$fk")/flushkit-diskd" ] || skip "no flushkit-diskd"
"$fk" disk create --model=ram --size 16M --backing "$tmp/notlog" \
	--write-log "$tmp/w" --name "$n-x" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "--write-log with --backing: exit $rc"
"$fk" disk create --model=ram --write-log-max 1M --name "$n-x" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "--write-log-max alone: exit $rc"

log=$tmp/a.wlog
da=$("$fk" disk create --model=ram --size 16M --name "$n-a" --write-log "$log") ||
	fail "create with a log"
[ "$(stat -c %a "$log")" = 600 ] || fail "log mode $(stat -c %a "$log")"
ctl=/run/flushkit-disk/$n-a/fuse/ctl
head -c 4096 /dev/zero | tr '\0' a >"$tmp/A"
head -c 4096 /dev/zero | tr '\0' b >"$tmp/B"
dd if="$tmp/A" of="$da" bs=4096 oflag=direct conv=fsync status=none || fail "write A"
echo "log mark m1" >"$ctl" || fail "mark m1"
dd if="$tmp/B" of="$da" bs=4096 oflag=direct status=none || fail "write B"
echo "log mark m2" >"$ctl" || fail "mark m2"
"$fk" disk stats "$n-a" | grep -q "^write_log 1" || fail "stat write_log"
"$fk" disk destroy "$da" || fail "destroy"

"$fk" disk replay "$log" --list >"$tmp/list" || fail "list"
grep -Eq "^[0-9]+ +MARK .* m1" "$tmp/list" || fail "no mark m1: $(cat "$tmp/list")"
"$fk" disk replay "$log" --to-mark m1 "$tmp/img" >/dev/null || fail "replay m1"
[ "$(stat -c %a "$tmp/img")" = 600 ] || fail "image mode"
[ "$(stat -c %s "$tmp/img")" = $((16 << 20)) ] || fail "image size"
cmp -s -n 4096 "$tmp/img" "$tmp/A" || fail "at m1 the block is not A"
"$fk" disk replay "$log" --to-mark m2 "$tmp/img" >/dev/null || fail "replay m2"
cmp -s -n 4096 "$tmp/img" "$tmp/B" || fail "at m2 (whole) the block is not B"
# The last FLUSH before m2 is A's: its flush point holds A.
f=$(awk '/flushes,/ {print $3}' "$tmp/list")
"$fk" disk replay "$log" --to-flush "$f" "$tmp/img" >/dev/null || fail "replay flush $f"
cmp -s -n 4096 "$tmp/img" "$tmp/A" || fail "at the last FLUSH the block is not A"
na=0 nb=0
for s in 1 2 3 4 5 6 7 8 9 10 11 12; do
	"$fk" disk replay "$log" --to-mark m2 --subset --seed $s "$tmp/img" >"$tmp/out" ||
		fail "subset $s"
	grep -q "seed $s" "$tmp/out" || fail "seed not printed: $(cat "$tmp/out")"
	if cmp -s -n 4096 "$tmp/img" "$tmp/A"; then na=$((na + 1))
	elif cmp -s -n 4096 "$tmp/img" "$tmp/B"; then nb=$((nb + 1))
	else fail "subset seed $s: the block is neither A nor B"
	fi
done
[ $na -gt 0 ] && [ $nb -gt 0 ] || fail "12 subsets: $na A, $nb B (both expected)"
"$fk" disk replay "$log" --to-flush 999 "$tmp/img" 2>/dev/null && fail "flush 999 accepted"

# an existing log file is never overwritten
"$fk" disk create --model=ram --size 16M --name "$n-b" --write-log "$log" \
	>/dev/null 2>"$tmp/err" && fail "an existing log file accepted"
grep -q "File exists" "$tmp/err" || fail "existing log message: $(cat "$tmp/err")"

# a full log
db=$("$fk" disk create --model=ram --size 16M --name "$n-b" \
	--write-log "$tmp/b.wlog" --write-log-max 8K) || fail "create small log"
dd if=/dev/zero of="$db" bs=16K count=1 oflag=direct status=none || fail "write to a full log's disk"
echo "log mark late" >"/run/flushkit-disk/$n-b/fuse/ctl" 2>"$tmp/err" && fail "mark on a full log accepted"
grep -q "No space left" "$tmp/err" || fail "full mark message: $(cat "$tmp/err")"
"$fk" disk stats "$n-b" | grep -q "^log_full 1" || fail "stat log_full"
grep -q "write log full" "/run/flushkit-disk/$n-b/log" || fail "daemon log: $(cat "/run/flushkit-disk/$n-b/log")"
"$fk" disk destroy "$db" || fail "destroy b"
"$fk" disk replay "$tmp/b.wlog" --list | grep -q "the log is full" || fail "list: full not said"
echo "ok: write log, marks, replay at marks, flushes and subsets, refusals, a full log"
