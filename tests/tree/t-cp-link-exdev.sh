#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-link-exdev.sh - 'flushkit cp -l' with -f, -i (answered y) or -b onto
# an existing file on another file system: the hard link cannot be made
# (EXDEV), and the existing file must stay as it was, name and content,
# as GNU cp leaves it (exit 1).  A data-loss bug: the destination was
# removed (or backed up) before the link was tried.  Also: -lf onto a
# file of the same file system replaces it by the link, and no
# temporary name is left behind.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a tmpfs mount)"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-link-exdev.XXXXXX)
mkdir "$t/m" "$t/src"
mount -t tmpfs tmpfs "$t/m" || { rm -rf "$t"; echo "SKIP: no tmpfs mount"; exit 77; }
trap 'umount "$t/m"; rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
echo new >"$t/src/f"
for how in -lf -lb -li; do
	echo KEEP >"$t/m/f"
	rm -f "$t/m/f~"
	echo y | "$FLUSHKIT" cp "$how" "$t/src/f" "$t/m/f" 2>"$t/err"
	rc=$?
	[ $rc -eq 1 ] || bad "cp $how across file systems: exit $rc, not 1"
	[ "$(cat "$t/m/f" 2>/dev/null)" = KEEP ] ||
		bad "cp $how across file systems: the existing file was lost"
	grep -q "cannot create hard link" "$t/err" || bad "cp $how: $(cat "$t/err")"
	left=$(find "$t/m" -mindepth 1 ! -name f ! -name 'f~' | wc -l)
	[ "$left" = 0 ] || bad "cp $how left $(find "$t/m" -mindepth 1)"
done
echo old >"$t/src/g"
"$FLUSHKIT" cp -lf "$t/src/f" "$t/src/g" || bad "cp -lf on one file system failed"
[ "$(stat -c %i "$t/src/f")" = "$(stat -c %i "$t/src/g")" ] || bad "cp -lf: g is not a link of f"
[ "$(find "$t/src" -mindepth 1 | wc -l)" = 2 ] || bad "cp -lf left $(ls -a "$t/src")"
[ $fail = 0 ] && echo "ok"
exit $fail
