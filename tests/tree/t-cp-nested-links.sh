#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-nested-links.sh - hard links and a file system mounted inside the
# destination: an inode with two names outside DST/d0 and two inside it,
# where another file system is mounted.  No link can cross the mount, so
# flushkit cp copies the inode once per destination file system: the
# two outer names are one inode, the two inner names are one inode (its
# second copy), each with the source's content; the crossing is named
# as a warning.  (cp -a links the inner names to the outer copy, gets
# EXDEV, and leaves them out with exit 1.)  The same with a bind mount
# of the same file system inside the destination (same st_dev).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mount)"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-nested-links.XXXXXX)
cleanup() {
	mountpoint -q "$t/dst/src/d0" && umount "$t/dst/src/d0"
	mountpoint -q "$t/bdst/src/d0" && umount "$t/bdst/src/d0"
	rm -rf "$t"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$t/src/d0"
head -c 100000 /dev/urandom >"$t/src/a"
ln "$t/src/a" "$t/src/a2"
ln "$t/src/a" "$t/src/d0/b"
ln "$t/src/a" "$t/src/d0/c"
mkdir -p "$t/dst/src/d0"
truncate -s 64M "$t/inner.img"
mkfs.ext4 -q -F "$t/inner.img" >/dev/null 2>&1 || { echo "SKIP: mkfs.ext4 failed"; exit 77; }
mount -o loop "$t/inner.img" "$t/dst/src/d0" 2>/dev/null ||
	{ echo "SKIP: cannot loop-mount"; exit 77; }

"$FLUSHKIT" cp "$t/src" "$t/dst" >"$t/out" 2>"$t/err"
rc=$?
[ $rc -eq 0 ] || bad "exit $rc: $(cat "$t/err")"
grep -q "hard link across file systems" "$t/err" ||
	bad "the crossing is not reported: $(cat "$t/err")"
for n in a a2 d0/b d0/c; do
	cmp "$t/src/a" "$t/dst/src/$n" || bad "content of $n"
done
ino() { stat -c '%d:%i' "$1"; }
[ "$(ino "$t/dst/src/a")" = "$(ino "$t/dst/src/a2")" ] ||
	bad "outer names a, a2 are not one inode"
[ "$(ino "$t/dst/src/d0/b")" = "$(ino "$t/dst/src/d0/c")" ] ||
	bad "inner names d0/b, d0/c are not one inode ($(ino "$t/dst/src/d0/b") vs $(ino "$t/dst/src/d0/c"))"
[ "$(stat -c %h "$t/dst/src/d0/b")" = 2 ] || bad "inner link count $(stat -c %h "$t/dst/src/d0/b"), not 2"

# A bind mount inside the destination: the same file system (same
# st_dev) on both sides, yet linkat(2) across it is EXDEV too.  The
# names on each side of it must still be one inode per side (keyed by
# the mount, statx STATX_MNT_ID, not st_dev): two inodes in all, not one
# separate copy for each name that meets the crossing.
mkdir -p "$t/bdst/src/d0" "$t/bound"
mount --bind "$t/bound" "$t/bdst/src/d0" 2>/dev/null ||
	{ echo "SKIP: cannot bind-mount"; exit 77; }
[ "$(stat -c %d "$t/bdst/src")" = "$(stat -c %d "$t/bdst/src/d0")" ] ||
	bad "the bind mount has another st_dev: the case is not tested"
"$FLUSHKIT" cp "$t/src" "$t/bdst" >"$t/bout" 2>"$t/berr"
rc=$?
[ $rc -eq 0 ] || bad "bind mount: exit $rc: $(cat "$t/berr")"
for n in a a2 d0/b d0/c; do
	cmp "$t/src/a" "$t/bdst/src/$n" || bad "bind mount: content of $n"
done
echo "bind mount: a $(ino "$t/bdst/src/a"), a2 $(ino "$t/bdst/src/a2"), d0/b $(ino "$t/bdst/src/d0/b"), d0/c $(ino "$t/bdst/src/d0/c")"
[ "$(ino "$t/bdst/src/a")" = "$(ino "$t/bdst/src/a2")" ] ||
	bad "bind mount: outer names a, a2 are not one inode"
[ "$(ino "$t/bdst/src/d0/b")" = "$(ino "$t/bdst/src/d0/c")" ] ||
	bad "bind mount: inner names d0/b, d0/c are not one inode"
[ "$(stat -c %h "$t/bdst/src/a")" = 2 ] || bad "bind mount: outer link count $(stat -c %h "$t/bdst/src/a"), not 2"
[ "$(stat -c %h "$t/bdst/src/d0/b")" = 2 ] || bad "bind mount: inner link count $(stat -c %h "$t/bdst/src/d0/b"), not 2"
[ $fail -eq 0 ] && echo "ok: one copy per destination file system, links kept within each"
exit $fail
