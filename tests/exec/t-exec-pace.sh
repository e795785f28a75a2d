#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-exec-pace.sh - "flushkit exec --pace=50" on a lab disk of
# throttle:40M:2000 (40 MB/s of writes): the shim measures its own
# writeback bandwidth (wb_bandwidth in --stats within 0.5-2x the model's
# 40 MB/s), and the writer sleeps in the pacer (pace_sleeps, pace_ms),
# so dd's rate is below that bandwidth; without --pace it never sleeps
# there.  The data written is the same.  Root (a lab disk); skipped
# otherwise.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (a lab disk)"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "skip: no mkfs.ext4"; exit 77; }
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-exec-pace.XXXXXX") || exit 1
name=tpace-$$
dev=
cleanup() {
	umount "$t/mnt" 2>/dev/null
	[ -n "$dev" ] && "$FLUSHKIT" disk destroy "$name" >/dev/null 2>&1
	rm -rf "$t"
}
trap cleanup EXIT
err() {
	echo "FAIL: $*"
	fail=1
}
dev=$("$FLUSHKIT" disk create --model=throttle:40M:2000 --size 256M --name "$name") ||
	{ echo "skip: cannot create a lab disk"; exit 77; }
mkfs.ext4 -q -F "$dev" || { echo "FAIL: mkfs"; exit 1; }
mkdir "$t/mnt" && mount "$dev" "$t/mnt" || { echo "FAIL: mount"; exit 1; }

kv() { # kv KEY FILE: the value of KEY= in the stats line
	grep -o " $1=[0-9]*" "$2" | head -1 | cut -d= -f2
}
for pace in 0 50; do
	s0=$(date +%s%N)
	"$FLUSHKIT" exec --stats="$t/stats$pace" --pace=$pace -- \
		dd if=/dev/zero of="$t/mnt/f$pace" bs=1M count=96 status=none ||
		err "dd under --pace=$pace failed"
	s1=$(date +%s%N)
	wall=$(((s1 - s0) / 1000000))
	echo "pace=$pace: ${wall} ms: $(cat "$t/stats$pace")"
	[ "$(stat -c %s "$t/mnt/f$pace")" -eq $((96 << 20)) ] || err "pace=$pace: size"
	sleeps=$(kv pace_sleeps "$t/stats$pace")
	if [ $pace -eq 0 ]; then
		[ "$sleeps" -eq 0 ] || err "pace=0 slept in the pacer: $sleeps"
		continue
	fi
	bw=$(kv wb_bandwidth "$t/stats$pace")
	[ "$(kv pace_samples "$t/stats$pace")" -ge 1 ] || err "no bandwidth sample"
	[ "$bw" -ge 20000000 ] && [ "$bw" -le 80000000 ] ||
		err "wb_bandwidth $bw B/s, want 20-80 MB/s (the model's 40)"
	[ "$sleeps" -ge 1 ] && [ "$(kv pace_ms "$t/stats$pace")" -ge 200 ] ||
		err "pace=50 hardly slept: $(cat "$t/stats$pace")"
	# dd's own rate (bytes / its wall time) below the measured bandwidth.
	rate=$(((96 << 20) * 1000 / (wall > 0 ? wall : 1)))
	[ "$rate" -lt "$bw" ] || err "pace=50: dd at $rate B/s, not below $bw"
done
exit $fail
