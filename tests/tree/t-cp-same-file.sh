#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-same-file.sh - 'flushkit cp' onto an existing destination that is
# the source, stands for it, or must not be written through, checked
# against GNU cp on the same trees (the cases of coreutils' tests
# cp/same-file.sh, no-deref-link1-3.sh, thru-dangling.sh, dir-rm-dest.sh,
# abuse.sh and symlink-slash.sh, with cp -a's never-dereferencing
# semantics, which flushkit cp always has).  Compared: the exact exit
# status and the resulting trees (names, types, link counts, symlink
# targets, content).
#
# The first case is a data-loss bug: with symlink -> foo, 'flushkit cp
# symlink foo' used to exit 0 leaving foo -> foo (foo's data gone).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
GNU_CP=${GNU_CP:-/bin/cp}
"$GNU_CP" --version 2>/dev/null | grep -q GNU ||
	{ echo "SKIP: no GNU cp at $GNU_CP to compare with"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-same-file.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

describe() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %n %l\n' | LC_ALL=C sort
	 find . -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum)
}

# Starting trees, made in the current directory.
setup_symlink() { echo XYZ >foo; ln -s foo symlink; }
setup_hardlink() { echo XYZ >foo; ln foo hardlink; }
setup_hlsl() { echo XYZ >foo; ln -s foo sl2; ln sl2 hlsl; }
setup_foo() { echo XYZ >foo; }
setup_noderef() { mkdir a b; echo bar >a/foo; ln -s ../a/foo b/foo; }
setup_noderef_deep() {
	mkdir -p A/d B/A/d
	echo data >A/d/f
	ln -s ../../../A/d/f B/A/d/f
}
setup_dangle() { echo hi >f; ln -s no-such dangle; ln -s loop loop; }
setup_abuse_dangling() { mkdir a b c; ln -s ../t a/1; echo payload >b/1; }
setup_abuse_existing() { setup_abuse_dangling; echo i >t; }
setup_abuse_files() { mkdir a b c; echo one >a/1; echo two >b/1; }
setup_slash() { mkdir dir; echo in >dir/f; ln -s dir symlink; }

# compare SETUP ARGS...: run GNU cp and flushkit cp with ARGS on two
# copies of the tree SETUP makes; the same exit status, the same trees.
# Prints flushkit's diagnostics into $t/fk.err.
compare() {
	local setup=$1
	shift
	rm -rf "$t/gnu" "$t/fk"
	mkdir "$t/gnu" "$t/fk"
	(cd "$t/gnu" && "setup_$setup") && (cd "$t/fk" && "setup_$setup") ||
		{ bad "$setup: setup failed"; return; }
	(cd "$t/gnu" && "$GNU_CP" "$@" >"$t/gnu.out" 2>"$t/gnu.err")
	local grc=$?
	(cd "$t/fk" && "$FLUSHKIT" cp "$@" >"$t/fk.out" 2>"$t/fk.err")
	local frc=$?
	if [ "$grc" -ne "$frc" ]; then
		bad "$setup: cp $*: GNU cp exit $grc, flushkit exit $frc: $(cat "$t/gnu.err") / $(cat "$t/fk.err")"
	fi
	if [ "$(describe "$t/gnu")" != "$(describe "$t/fk")" ]; then
		bad "$setup: cp $*: trees differ (< GNU cp, > flushkit)"
		diff <(describe "$t/gnu") <(describe "$t/fk") | head -20
	fi
}

# GNU cp's message for the same mistake, after the program's name
# ("cp: " and "flushkit cp: ").
same_msgs() {
	[ "$(sed 's/^flushkit cp: /cp: /' "$t/fk.err")" = "$(sed 's|^[^ :]*cp: |cp: |' "$t/gnu.err")" ] ||
		bad "$1: message '$(cat "$t/fk.err")', GNU cp '$(cat "$t/gnu.err")'"
}

# The data-loss case, first: refused, foo keeps its data.
for o in "" -a -f -af --remove-destination "-a --remove-destination"; do
	# shellcheck disable=SC2086 # $o: zero or more options
	compare symlink $o symlink foo
	same_msgs "cp $o symlink foo"
	[ "$(cat "$t/fk/foo" 2>/dev/null)" = XYZ ] ||
		bad "cp $o symlink foo: foo lost its data"
done
# Its library form: fk_tree_copy gives -EEXIST (test-tree-copy covers
# the plain file onto itself).

# same-file.sh: onto a symlink to the source; onto another hard link;
# a hard link of a symlink onto the symlink (nothing to do).
compare symlink -a foo symlink
compare symlink -af foo symlink
compare symlink -a --remove-destination foo symlink
compare hardlink -a foo hardlink
compare hardlink -a --remove-destination foo hardlink
compare hlsl -a hlsl sl2
compare hlsl -af hlsl sl2
compare hlsl -a --remove-destination hlsl sl2
compare foo -a foo foo
compare foo -a --remove-destination foo foo

# no-deref-link1: b/foo -> ../a/foo; and the same deep in a tree.
compare noderef -d a/foo b
compare noderef -a a/foo b
compare noderef -a --remove-destination a/foo b
compare noderef_deep -a A B

# thru-dangling.sh, dir-rm-dest.sh: never written through a dangling
# symlink; a symlink loop is replaced with -f or --remove-destination.
compare dangle -a f dangle
compare dangle -af f dangle
same_msgs "cp -af f dangle"
compare dangle -a --remove-destination f dangle
# POSIXLY_CORRECT: written through, to the name it points to.
export POSIXLY_CORRECT=1
compare dangle -a f dangle
[ "$(cat "$t/fk/no-such" 2>/dev/null)" = "$(cat "$t/gnu/no-such" 2>/dev/null)" ] &&
	[ -f "$t/fk/no-such" ] || bad "POSIXLY_CORRECT cp f dangle: not written through"
unset POSIXLY_CORRECT
compare dangle -a f loop
compare dangle -af f loop
compare dangle -a --remove-destination f loop

# abuse.sh: two sources with one basename; the second must not write
# through (or over) what the first just created.
compare abuse_dangling -dR a/1 b/1 c
same_msgs abuse
compare abuse_existing -dR a/1 b/1 c
compare abuse_files -a a/1 b/1 c
compare abuse_files -an a/1 b/1 c

# symlink-slash.sh: a trailing slash on a symlink to a directory copies
# the directory.
compare slash -dR symlink/ s
compare slash -a symlink/ s
compare slash -a symlink s

exit $fail
