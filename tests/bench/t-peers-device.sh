#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-peers-device.sh - the peer scripts take DEVICE=MODEL
# (bench/peers/lib-disk.sh): bench/peers/fsmark.sh with DEVICE=ram runs
# on a lab disk of its own (said on stderr, the run's directory on it),
# a bad DEVICE suffix is refused (exit 2), and afterwards the disk is
# gone: not listed, not mounted.  Root (loop devices); 77 otherwise.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
src=${FK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
[ -e /dev/fuse ] && [ -e /dev/loop-control ] || { echo "SKIP: no /dev/fuse or loop devices"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-peers-device.XXXXXX")
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
before=$("$FLUSHKIT" disk list | awk 'NR > 1 {print $2}' | sort)
FLUSHKIT=$FLUSHKIT DEVICE=ram DEVICE_SIZE=512M FILES=40 RUNS=1 THREADS=1 \
	FIO_SECONDS=0 VARIANTS="fk-S1 fk-uring" \
	bash "$src/bench/peers/fsmark.sh" >"$t/out" 2>"$t/err" || bad "fsmark.sh exit $?: $(tail -3 "$t/err")"
grep -q '^device: ram, a lab disk (/dev/loop[0-9]*, 512M ext4) mounted on ' "$t/err" ||
	bad "no device line: $(cat "$t/err")"
mnt=$(sed -n 's/^device: .* mounted on //p' "$t/err")
grep -q "^# directory 0: $mnt" "$t/out" || bad "the run was not on the lab disk: $(head -3 "$t/out")"
grep -q 'fk-uring' "$t/out" || bad "no fk-uring row: $(cat "$t/out")"
after=$("$FLUSHKIT" disk list | awk 'NR > 1 {print $2}' | sort)
new=$(comm -13 <(echo "$before") <(echo "$after"))
[ -z "$new" ] || bad "left a lab disk: $new"
[ -n "$mnt" ] && grep -q " $mnt " /proc/mounts && bad "left $mnt mounted"
[ -n "$mnt" ] && [ -e "$mnt" ] && bad "left $mnt"
DEVICE=ram,fast FLUSHKIT=$FLUSHKIT bash "$src/bench/peers/fsmark.sh" >/dev/null 2>"$t/err2"
[ $? -eq 2 ] || bad "DEVICE=ram,fast not refused with 2"
grep -q "unknown suffix 'fast'" "$t/err2" || bad "DEVICE=ram,fast: $(cat "$t/err2")"
exit $fail
