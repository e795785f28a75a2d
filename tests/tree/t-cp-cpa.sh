#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-cpa.sh - 'flushkit cp' takes cp -a's command line with cp's
# meaning, checked against GNU cp itself (same operands, same starting
# trees): -a/-R/-p/-d accepted; several sources into a directory, -t DIR,
# -T; the operand errors (target not a directory, missing operands, -t
# with -T); -n, -u (and --update=none|older|all); -v lines; -x at a mount
# point (as root); --preserve= and --no-preserve=; -b/--backup/-S, -l,
# -s, -L, -H, --parents, --attributes-only, -i (--sparse: t-cp-sparse.sh; --resume: t-cp-resume.sh).  Compared:
# exit status (0 or not), the resulting trees (names, types, modes,
# sizes, mtimes, content) and the sorted -v lines.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp-cpa.XXXXXX)
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Everything that can be compared, per entry (content by checksum).
# The mtimes of the working directory and of the target directory D
# are left out: creating entries in them sets them to now.
describe() {
	(cd "$1" && find . -printf '%p %y %m %s %T@ %l\n' |
		sed -E 's#^(\.|\./D) d ([0-9]+) ([0-9]+) [0-9.]+#\1 d \2 \3 -#' |
		LC_ALL=C sort
	 find . -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum)
}

# A fresh starting point under $t/$1: sources A (file), B (file), C
# (directory with a hard link), and a destination directory D that
# already holds an old a and a newer b.
setup() {
	local w=$t/$1
	rm -rf "$w"
	mkdir -p "$w/C/sub" "$w/D"
	printf 'A content\n' >"$w/A"
	printf 'B content\n' >"$w/B"
	printf 'c file\n' >"$w/C/f"
	ln "$w/C/f" "$w/C/sub/h"
	ln -s f "$w/C/link"
	ln -s C "$w/L"
	chmod 0640 "$w/A"
	find "$w" -exec touch -h -d '2005-05-05 05:05:05.5' {} +
	touch -d '2010-01-01 00:00:00' "$w/A" "$w/C/sub"
	touch -d '2011-01-01 00:00:00' "$w/B"
	printf 'old a\n' >"$w/D/A"
	touch -d '2000-01-01 00:00:00' "$w/D/A"	# older than A
	printf 'newer b\n' >"$w/D/B"
	touch -d '2030-01-01 00:00:00' "$w/D/B"	# newer than B
}

# compare NAME ARGS...: run "cp ARGS" and "flushkit cp ARGS" in two
# copies of the same setup; same exit (0 or not), same trees, same
# sorted -v lines.
compare() {
	local name=$1
	shift
	setup gnu
	setup fk
	(cd "$t/gnu" && cp "$@" >"$t/gnu.out" 2>"$t/gnu.err")
	local grc=$?
	(cd "$t/fk" && "$FLUSHKIT" cp "$@" >"$t/fk.out" 2>"$t/fk.err")
	local frc=$?
	if [ $((grc != 0)) -ne $((frc != 0)) ]; then
		bad "$name: cp exit $grc, flushkit exit $frc: $(cat "$t/gnu.err") / $(cat "$t/fk.err")"
	fi
	if [ "$(describe "$t/gnu")" != "$(describe "$t/fk")" ]; then
		bad "$name: trees differ (< cp, > flushkit)"
		diff <(describe "$t/gnu") <(describe "$t/fk") | head -20
	fi
	local gv fv
	gv=$(grep "^'.*' -> '" "$t/gnu.out" | LC_ALL=C sort)
	fv=$(grep "^'.*' -> '" "$t/fk.out" | LC_ALL=C sort)
	if [ "$gv" != "$fv" ]; then
		bad "$name: -v lines differ (< cp, > flushkit)"
		diff <(echo "$gv") <(echo "$fv")
	fi
}

compare "several sources" -a A B C D
compare "several sources, trailing slash" -a A B C D/
compare "-r -p -d" -R -p -d C D
compare "-t DIR" -a -t D A C
compare "-T dir onto dir" -a -T C D
compare "-T file onto new" -aT A E
compare "-T file onto dir" -aT A D
compare "target not a directory" -a A B E
compare "target a file" -a B C A
compare "-t not a directory" -a -t A B
compare "-t and -T" -a -t D -T A
compare "-T extra operand" -aT A B C
compare "missing destination" -a A
compare "-n" -a -n A B D
compare "--no-clobber" -a --no-clobber C D
compare "-u" -a -u A B D
compare "-v" -av A B C D
compare "-v into new" -av C N
compare "-nv" -anv A B D
compare "-uv" -auv A B D
compare "-a --preserve=all" -a --preserve=all A D
compare "--preserve=mode,timestamps" -a --preserve=mode,timestamps C D
compare "-a copies into DST/basename" -a C D
compare "-a file onto file" -a A D/B
compare "symlink/ names its directory" -a L/ D
compare "--strip-trailing-slashes" -a --strip-trailing-slashes L/ D
# cp's other options, each against GNU cp's -a with it.
compare "-b" -ab A B D
compare "--backup=numbered" -a --backup=numbered A B D
compare "-v -b (backup: lines)" -av -b A B D
compare "-v --backup=numbered onto a tree" -av --backup=numbered C D/
# (not --backup=simple with a target directory: GNU cp 9.1 puts that
# backup in the working directory, a bug fixed in 9.2)
compare "-S" -a -S .orig A D
compare "--backup=simple onto a file" -a --backup=simple A D/A
compare "-b onto a tree" -ab C D/
compare "-l" -al C D
compare "-l onto existing, -f" -alf A B D
compare "-l onto existing" -al A D
compare "-s absolute" -as "$t/gnu/A" E
compare "-L" -aL L C D
compare "-H" -aH L D
compare "--parents" -a --parents C/f D
compare "--parents -v" -av --parents C/sub/h D
compare "--attributes-only" -a --attributes-only A B D
compare "--attributes-only new" -a --attributes-only C N
compare "--attributes-only onto a symlink to a file" -a --attributes-only A C/link
compare "--no-preserve=mode" -a --no-preserve=mode A C N
compare "--no-preserve=timestamps,links" -a --no-preserve=links C N
compare "--no-preserve then --preserve" -a --no-preserve=all --preserve=all C N
compare "-b -n refused" -abn A D
compare "-l -s refused" -als A D

# --update=WHEN (coreutils 9.3; GNU cp here is older): none as -n,
# older as -u, all as plain -a.
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp -a --update=none A B D >/dev/null) ||
	bad "--update=none exit"
grep -q '^old a$' "$t/fk/D/A" && grep -q '^newer b$' "$t/fk/D/B" ||
	bad "--update=none replaced a file"
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp -a --update=older A B D >/dev/null) ||
	bad "--update=older exit"
grep -q '^A content$' "$t/fk/D/A" && grep -q '^newer b$' "$t/fk/D/B" ||
	bad "--update=older: $(cat "$t/fk/D/A" "$t/fk/D/B")"
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp -a -n --update=all A B D >/dev/null) ||
	bad "--update=all exit"
grep -q '^A content$' "$t/fk/D/A" && grep -q '^B content$' "$t/fk/D/B" ||
	bad "--update=all did not replace"
(cd "$t/fk" && "$FLUSHKIT" cp -a --update=sometimes A D 2>/dev/null)
[ $? -eq 1 ] || bad "--update=sometimes not a usage error"
# The summary says what was left.
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp --summary -a -n A B C D >"$t/out") || bad "-n exit"
grep -q '^  left as were  2 entries' "$t/out" ||
	bad "-n summary: $(cat "$t/out")"

# -i: the answer from stdin; a prompt on stderr, nothing on stdout.
setup fk
(cd "$t/fk" && printf 'n\ny\n' | "$FLUSHKIT" cp -ai A B D >"$t/out" 2>"$t/err") ||
	bad "-i exit"
grep -q '^old a$' "$t/fk/D/A" && grep -q '^B content$' "$t/fk/D/B" ||
	bad "-i: answers n, y: $(cat "$t/fk/D/A" "$t/fk/D/B")"
[ "$(grep -o "overwrite '[^']*'?" "$t/err" | tr '\n' ' ')" = "overwrite 'D/A'? overwrite 'D/B'? " ] ||
	bad "-i prompts: $(cat "$t/err")"
[ ! -s "$t/out" ] || bad "-i wrote on stdout"
(cd "$t/fk" && "$FLUSHKIT" cp -a --preserve=bogus A X 2>/dev/null)
[ $? -eq 1 ] || bad "--preserve=bogus accepted"
(cd "$t/fk" && "$FLUSHKIT" cp -a --no-preserve=bogus A X 2>/dev/null)
[ $? -eq 1 ] || bad "--no-preserve=bogus accepted"
(cd "$t/fk" && "$FLUSHKIT" cp -a --backup=sometimes A X 2>/dev/null)
[ $? -eq 1 ] || bad "--backup=sometimes accepted"

# GNU cp's messages and exit status, word for word (LC_ALL=C; "flushkit
# cp" read as "cp"): a bad --backup CONTROL (1, the valid list), -s
# relative in another directory, -T of a directory onto a file, a
# directory onto a file, --parents onto a file, and -i with stdin at EOF
# (no answer: not replaced, exit 0 in 9.1).
mkdir -p "$t/msg/sub" "$t/msg/d"
printf 'f\n' >"$t/msg/f"
for args in "--backup=x f g" "--backup=n f g" "-s f sub/lnk" "-T d g" \
	"d g" "--parents f g" "-i f g"; do
	printf 'g\n' >"$t/msg/g"
	(cd "$t/msg" && LC_ALL=C cp -a $args </dev/null >"$t/gnu.out" 2>"$t/gnu.err")
	r1=$?
	printf 'g\n' >"$t/msg/g"
	(cd "$t/msg" && "$FLUSHKIT" cp -a $args </dev/null >"$t/fk.out" 2>"$t/fk.err")
	r2=$?
	sed -i "s/^flushkit cp: /cp: /; s/'flushkit cp --help'/'cp --help'/" "$t/fk.err"
	[ $r1 -eq $r2 ] || bad "cp -a $args: exit $r2, GNU cp $r1"
	cmp -s "$t/gnu.err" "$t/fk.err" ||
		bad "cp -a $args: stderr differs from GNU cp's: $(diff "$t/gnu.err" "$t/fk.err" | tr '\n' ' ')"
	grep -qx g "$t/msg/g" || bad "cp -a $args: g replaced"
done

# JSON of several sources: "src" null, "sources" the list.
setup fk
(cd "$t/fk" && "$FLUSHKIT" cp -a --json A B D >"$t/json") || bad "json exit"
python3 - "$t/json" <<'EOF' || bad "json: $(cat "$t/json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["src"] is None and o["sources"] == ["A", "B"], o
assert o["files"] == 2 and o["result"] == "ok", o
EOF

# -x: a file system mounted inside the source is not copied, its mount
# point is (empty), as cp -x does.
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p "$t/xs/m" "$t/xs/d"
	printf 'top\n' >"$t/xs/d/f"
	mnt=$t/xs/m
	if mount -t tmpfs -o size=1m tmpfs "$mnt"; then
		printf 'on tmpfs\n' >"$mnt/inside"
		touch -d '2012-01-01' "$mnt"
		cp -ax "$t/xs" "$t/gnu-x" || bad "cp -ax failed"
		"$FLUSHKIT" cp -ax "$t/xs" "$t/fk-x" >/dev/null || bad "flushkit cp -ax failed"
		[ -d "$t/fk-x/m" ] && [ ! -e "$t/fk-x/m/inside" ] ||
			bad "-x copied the mounted file system"
		[ "$(describe "$t/gnu-x")" = "$(describe "$t/fk-x")" ] ||
			{ bad "-x trees differ"; diff <(describe "$t/gnu-x") <(describe "$t/fk-x"); }
		"$FLUSHKIT" cp -a "$t/xs" "$t/fk-nox" >/dev/null || bad "cp without -x"
		[ -e "$t/fk-nox/m/inside" ] || bad "without -x the mount is not copied"
		umount "$mnt" && mnt=
	else
		echo "skip -x: no tmpfs mount"
	fi
fi

# -n and -u with a hard link whose first name is left as it was: the
# other name is the source's content on its own (cp -n copies it; it
# must not become a link to the old destination file).
for u in -n -u; do
	w=$t/hl$u
	mkdir -p "$w/src" "$w/gnu" "$w/fk"
	printf 'NEW\n' >"$w/src/x"
	ln "$w/src/x" "$w/src/y"
	touch -d '2001-01-01' "$w/src/x"
	for d in gnu fk; do
		printf 'OLD\n' >"$w/$d/x"
		touch -d '2030-01-01' "$w/$d/x"	# newer: -u leaves it too
	done
	cp -a $u -T "$w/src" "$w/gnu" 2>/dev/null
	"$FLUSHKIT" cp -a $u -T "$w/src" "$w/fk" >/dev/null 2>&1 ||
		bad "cp -a $u with a hard link: exit $?"
	for d in gnu fk; do
		echo "$(cat "$w/$d/x") $(cat "$w/$d/y") $(stat -c %h "$w/$d/y")" >"$w/$d.txt"
	done
	cmp -s "$w/gnu.txt" "$w/fk.txt" ||
		bad "cp -a $u with a hard link left: GNU '$(cat "$w/gnu.txt")', flushkit '$(cat "$w/fk.txt")' (x, y, y's links)"
done

[ $fail -eq 0 ] && echo "t-cp-cpa: ok"
exit $fail
