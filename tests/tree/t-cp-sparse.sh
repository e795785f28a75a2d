#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-sparse.sh - 'flushkit cp --sparse=auto|always|never' allocates
# as GNU cp does: auto keeps the source's holes and writes its zeros,
# always turns zero blocks into holes too, never writes holes as zeros.
# Content always equal; allocated size compared with cp's (small or
# full) per file and mode; --reflink=always with --sparse=never refused.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp-sparse.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir "$t/src"
truncate -s 4M "$t/src/holes"
printf 'x' | dd of="$t/src/holes" bs=1 seek=1048576 conv=notrunc 2>/dev/null
head -c 2097152 /dev/zero >"$t/src/zeros"
printf 'y' >>"$t/src/zeros"
sync -f "$t/src/zeros"	# allocated for real before SEEK_DATA looks

# "small" if less than a quarter of the size is allocated, else "full".
alloc() {
	local f=$1
	local b s
	b=$(stat -c %b "$f")
	s=$(stat -c %s "$f")
	[ $((b * 512)) -lt $((s / 4)) ] && echo small || echo full
}

for mode in auto always never; do
	cp -a --sparse=$mode "$t/src" "$t/gnu-$mode" || bad "cp --sparse=$mode"
	"$FLUSHKIT" cp --sparse=$mode "$t/src" "$t/fk-$mode" >/dev/null ||
		bad "flushkit cp --sparse=$mode"
	for f in holes zeros; do
		cmp "$t/src/$f" "$t/fk-$mode/$f" || bad "$mode: $f content"
		g=$(alloc "$t/gnu-$mode/$f")
		k=$(alloc "$t/fk-$mode/$f")
		echo "--sparse=$mode $f: cp $g, flushkit $k"
		[ "$g" = "$k" ] || bad "--sparse=$mode $f: cp $g, flushkit $k"
	done
done
# Refused as by cp (sparse.sh: returns_ 1), nothing copied.
"$FLUSHKIT" cp --sparse=never --reflink=always "$t/src" "$t/x" 2>/dev/null
[ $? -eq 1 ] && [ ! -e "$t/x" ] ||
	bad "--sparse=never --reflink=always not refused with exit 1"
"$FLUSHKIT" cp --sparse=sometimes "$t/src" "$t/x" 2>/dev/null
[ $? -eq 1 ] || bad "--sparse=sometimes accepted"

[ $fail -eq 0 ] && echo "t-cp-sparse: ok"
exit $fail
