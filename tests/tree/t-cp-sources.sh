#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-sources.sh - 'flushkit cp' with a source named more than once
# ("x x", "x ./x", "d d", "d ./d/ x"), against GNU cp
# -a: the same warning ("source file 'x' specified more than once",
# "source directory ..."), the source copied once, the same tree, exit 0
# as GNU cp.  A source given once gets no such warning.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
cp --version 2>/dev/null | grep -q 'GNU coreutils' || { echo "SKIP: no GNU cp"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-sources.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$t" || exit 1
mkdir d && echo one >d/f && echo x >x && echo y >y
listing() { (cd "$1" && find . -printf '%p %y %s %m\n' | LC_ALL=C sort); }

for srcs in "x x" "x ./x" "d d" "x y x" "d ./d/ x"; do
	rm -rf gnu fk && mkdir gnu fk
	# shellcheck disable=SC2086
	cp -a $srcs gnu/ 2>gnu.err
	grc=$?
	# shellcheck disable=SC2086
	"$FLUSHKIT" cp $srcs fk/ >fk.out 2>fk.err
	frc=$?
	echo "cp -a $srcs DIR/: GNU exit $grc: $(cat gnu.err); flushkit exit $frc: $(cat fk.err)"
	[ $frc -eq $grc ] || bad "'$srcs': exit $frc, GNU cp $grc"
	# The same warnings, in the same order (GNU: "cp: warning: W",
	# flushkit: "flushkit cp: warning: W").
	want=$(sed -n 's/^cp: warning: //p' gnu.err)
	got=$(sed -n 's/^flushkit cp: warning: //p' fk.err)
	[ -n "$want" ] || bad "'$srcs': GNU cp gave no warning: $(cat gnu.err)"
	[ "$got" = "$want" ] || bad "'$srcs': warnings '$got', GNU cp '$want'"
	[ "$(listing gnu)" = "$(listing fk)" ] ||
		bad "'$srcs': trees differ: $(diff <(listing gnu) <(listing fk))"
done
# Given once each: no warning.
rm -rf fk && mkdir fk
"$FLUSHKIT" cp x y d fk/ >fk.out 2>fk.err || bad "x y d: exit $?: $(cat fk.err)"
grep -q "specified more than once" fk.err && bad "x y d: a warning: $(cat fk.err)"
# The closing error of a failed run with several sources (--summary)
# names them by count, not with a placeholder.
rm -rf fk && mkdir fk
"$FLUSHKIT" cp --summary x no-such-source fk/ >fk.out 2>fk.err && bad "missing source: exit 0"
grep -q "^flushkit cp: 2 sources to 'fk/' failed" fk.err ||
	bad "missing source: closing line: $(cat fk.err)"
[ $fail -eq 0 ] && echo ok
exit $fail
