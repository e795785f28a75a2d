#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-links-sources.sh - hard links between different sources of one
# 'flushkit cp' run are kept, as GNU cp -a keeps them: the link map
# lives across all the sources of one invocation.  Against GNU cp -a on
# the same trees, for: two directory sources holding names of one inode
# (SRC... DIR/ and -t DIR), a file source and a directory source holding
# another name of it (both orders), two names of one file as two
# sources (no "specified more than once"), a group spanning three
# sources, a hard-linked symlink, and a name whose other link is outside every
# source (one copy, link count 1, as cp -a).  Compared: the link groups
# (which destination names share an inode), each name's link count,
# types, modes, sizes and content, and the exit status.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
cp --version 2>/dev/null | grep -q 'GNU coreutils' || { echo "SKIP: no GNU cp"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-links-sources.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# One line per name (type, mode, size, link count), then one line per
# inode of more than one name: its names, sorted.  Inode numbers differ
# between two copies; the groups they form do not.
describe() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %n\n' | LC_ALL=C sort
	 find . -mindepth 1 ! -type d -printf '%i %p\n' | LC_ALL=C sort -k2 |
		awk '{ g[$1] = g[$1] " " $2; n[$1]++ }
		     END { for (i in g) if (n[i] > 1) print "link:" g[i] }' |
		LC_ALL=C sort
	 find . -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum)
}

# The sources, the same in both trees: a/f ~ b/g ~ c/h (one inode over
# three directories), a/x ~ a/sub/y (within one source), f1 ~ d/f2 (a
# file source and a directory holding its other name), a/l ~ b/l2 (a
# hard-linked symlink), a/out ~ outside/o (the other name in no source).
setup() {
	local w=$t/$1
	rm -rf "$w"
	mkdir -p "$w/a/sub" "$w/b" "$w/c" "$w/d" "$w/outside" "$w/DST"
	echo shared >"$w/a/f"
	ln "$w/a/f" "$w/b/g"
	ln "$w/a/f" "$w/c/h"
	echo within >"$w/a/x"
	ln "$w/a/x" "$w/a/sub/y"
	echo filesrc >"$w/f1"
	ln "$w/f1" "$w/d/f2"
	ln -s target "$w/a/l"
	ln -P "$w/a/l" "$w/b/l2"
	echo alone >"$w/a/out"
	ln "$w/a/out" "$w/outside/o"
	echo plain >"$w/b/p"
	chmod 0640 "$w/a/f"
}

# compare NAME ARGS...: "cp -a ARGS" and "flushkit cp ARGS", each in its
# own copy of the setup; same exit (0 or not), same description of DST.
compare() {
	local name=$1
	shift
	setup gnu
	setup fk
	(cd "$t/gnu" && cp -a "$@" >"$t/gnu.out" 2>"$t/gnu.err")
	local grc=$?
	(cd "$t/fk" && "$FLUSHKIT" cp "$@" >"$t/fk.out" 2>"$t/fk.err")
	local frc=$?
	[ $((grc != 0)) -eq $((frc != 0)) ] ||
		bad "$name: cp -a exit $grc, flushkit exit $frc: $(cat "$t/gnu.err") / $(cat "$t/fk.err")"
	local want got
	want=$(describe "$t/gnu/DST")
	got=$(describe "$t/fk/DST")
	if [ "$want" != "$got" ]; then
		bad "$name: DST differs (< cp -a, > flushkit)"
		diff <(echo "$want") <(echo "$got") | head -20
	fi
	# Not vacuous: cp -a itself made a link across sources here.
	grep -q '^link:' <<<"$want" || bad "$name: cp -a made no link group"
	echo "$name: $(grep -c '^link:' <<<"$want") link groups in cp -a's copy, $(grep -c '^link:' <<<"$got") in flushkit's"
}

compare "two dirs" a b DST/
compare "three dirs" a b c DST/
compare "-t DIR" -t DST c b
compare "file then dir" f1 d DST/
compare "dir then file" d f1 DST/
compare "all" f1 a b c d DST/
# Two names of one file given as sources are two sources (cp -a warns
# "specified more than once" only for the same name: x and ./x).
compare "two names of one file" a/x a/sub/y DST/
grep -q "more than once" "$t/fk.err" && bad "two names of one file: a warning: $(cat "$t/fk.err")"

# The other name outside every source: copied once, link count 1.
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp a DST/ >/dev/null 2>"$t/fk.err") ||
	bad "a DST/: exit $?: $(cat "$t/fk.err")"
n=$(stat -c %h "$t/fk/DST/a/out")
[ "$n" = 1 ] || bad "DST/a/out: link count $n, want 1 (its other name is outside the source)"
[ "$(cat "$t/fk/DST/a/out")" = alone ] || bad "DST/a/out: wrong content"

# The summary counts a link made across sources as a hard link, not a file.
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp --json a b DST/ >"$t/fk.json" 2>"$t/fk.err") ||
	bad "--json a b DST/: exit $?: $(cat "$t/fk.err")"
if command -v python3 >/dev/null; then
	python3 - "$t/fk.json" <<'EOF' || bad "JSON counts: $(cat "$t/fk.json")"
import json, sys
j = json.load(open(sys.argv[1]))
# a: f, x, out (3 files, y a link), l (a symlink); b: g (a link to a/f),
# l2 (a link to a/l), p (a file).
assert j["files"] == 4, j["files"]
assert j["hardlinks"] == 3, j["hardlinks"]
EOF
fi
[ $fail -eq 0 ] && echo ok
exit $fail
