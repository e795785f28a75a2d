#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench sync --device=hdd" runs on lab disks (flushkit disk):
#   1. a bad --device (an unknown model, a model with an argument it
#      does not take, an unknown suffix, native with a suffix) is one
#      clear error line, exit 2, and nothing runs;
#   2. a short ext4 run on 1 and 4 file systems: while it runs,
#      "flushkit disk list" shows its lab disks of model hdd (one for 1
#      file system; two for 4, each with two parts, the file systems
#      mounted from the parts' loop devices); the table says
#      "device hdd (modelled ...)" and "two to a disk";
#   3. afterwards nothing of it is attached, mounted or in
#      /run/flushkit-disk.
# Not root, no loop devices, no mkfs.ext4 or no flushkit-diskd: skip (77).
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
[ -e /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4"; exit 77; }
[ -x "$(dirname "$FLUSHKIT")/flushkit-diskd" ] || [ -n "${FLUSHKIT_DISKD:-}" ] ||
	{ echo "SKIP: no flushkit-diskd"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-bench-sync-device.XXXXXX)
trap 'rm -rf "$t"' EXIT
lab=/run/flushkit-disk

# 1. Bad values: one line naming the value and the Try line of a usage
# error, exit 2, nothing made.
for d in floppy hdd:7 ssd,fast native,slowdown=2 'nvme,slowdown=0.5' 1k:1; do
	out=$("$FLUSHKIT" bench sync --fs ext4 --fs-count 1 --runs 1 \
		--device="$d" --dir "$t" --no-results 2>&1)
	rc=$?
	[ $rc -eq 2 ] || err "--device=$d: exit $rc (want 2): $out"
	[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] ||
		err "--device=$d: not two lines: $out"
	[ "$(printf '%s\n' "$out" | tail -1)" = "Try 'flushkit bench sync --help' for more information." ] ||
		err "--device=$d: no Try line: $out"
	printf '%s\n' "$out" | head -1 | grep -q -F -- "flushkit bench sync: invalid value '$d' for --device" ||
		err "--device=$d: the message does not name the value: $out"
done
[ -z "$(ls -A "$t")" ] || err "a bad --device made something: $(ls -A "$t")"

# 2. The run, watched.
"$FLUSHKIT" bench sync --fs ext4 --fs-count 1,4 --runs 1 --empty-syncs 2 \
	--big-size 16M --image-size 320M --sleep-scale 0.02 --device=hdd \
	--dir "$t" --no-results >"$t/out" 2>"$t/err" &
pid=$!
max=0 parts_max=0 partmounts=0
: >"$t/seen"
while kill -0 $pid 2>/dev/null; do
	"$FLUSHKIT" disk list 2>/dev/null | grep "^fkrun-$pid-" >>"$t/seen"
	n=$(ls -d $lab/fkrun-$pid-* 2>/dev/null | wc -l)
	[ "$n" -gt "$max" ] && max=$n
	p=$(cat $lab/fkrun-$pid-*/info 2>/dev/null | grep -c '^part ')
	[ "$p" -gt "$parts_max" ] && parts_max=$p
	# A file system of the run mounted from a part's loop device.
	for dev in $(sed -n 's/^part //p' $lab/fkrun-$pid-*/info 2>/dev/null); do
		[ -b "$dev" ] || continue
		mm=$(printf '%d:%d' "0x$(stat -c %t "$dev")" "0x$(stat -c %T "$dev")")
		awk -v m="$mm" -v r="$t/" '$3 == m && index($5, r) == 1' \
			/proc/self/mountinfo | grep -q . && partmounts=$((partmounts + 1))
	done
	sleep 0.2
done
wait $pid
rc=$?
[ $rc -eq 0 ] || err "bench sync --device=hdd: exit $rc: $(tail -5 "$t/err")"
grep -q " hdd " "$t/seen" ||
	err "flushkit disk list never showed a lab disk of model hdd: $(sort -u "$t/seen")"
[ "$max" -ge 2 ] || err "at most $max lab disks at once (want 2 for 4 file systems)"
[ "$parts_max" -eq 4 ] || err "at most $parts_max parts recorded at once (want 2 per disk, 4)"
[ "$partmounts" -gt 0 ] || err "no file system seen mounted from a part's loop device"
grep -q '^ext4, 1 file system, 1 run' "$t/out" || err "no table of 1 file system: $(cat "$t/out")"
grep -q '^ext4, 4 file systems, two to a disk, 1 run' "$t/out" ||
	err "no table of 4 file systems two to a disk: $(cat "$t/out")"
[ "$(grep -c '^device hdd (modelled 7200 rpm' "$t/out")" = 2 ] ||
	err "the tables do not say 'device hdd (modelled ...)': $(grep '^device' "$t/out")"

# 2b. btrfs, four file systems two to a disk: every part is made before
# any is mounted (mkfs.btrfs refused the second part of a disk once the
# first was mounted: "/dev/loopN is mounted", the same backing file).
if command -v mkfs.btrfs >/dev/null 2>&1; then
	"$FLUSHKIT" bench sync --fs btrfs --fs-count 4 --runs 1 --empty-syncs 2 \
		--big-size 16M --image-size 320M --sleep-scale 0.02 --device=hdd \
		--dir "$t" --no-results >"$t/out4" 2>"$t/err4"
	rc=$?
	[ $rc -eq 0 ] || err "bench sync --fs btrfs --fs-count 4 --device=hdd: exit $rc: $(tail -3 "$t/err4")"
	grep -q '^btrfs, 4 file systems, two to a disk, 1 run' "$t/out4" ||
		err "no table of btrfs x 4 two to a disk: $(tail -5 "$t/out4")"
else
	echo "no mkfs.btrfs: the btrfs x 4 case skipped"
fi

# 3. Nothing left.
ls -d $lab/fkrun-$pid-* 2>/dev/null && err "lab disks left in $lab"
grep -F -l "$lab/fkrun-$pid-" /sys/block/loop*/loop/backing_file 2>/dev/null &&
	err "loop devices left on its lab disks"
grep -F " $t/" /proc/self/mountinfo && err "mounts left under $t"
[ $fail -eq 0 ] && echo "PASS"
exit $fail
