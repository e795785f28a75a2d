#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp.sh - smoke test of the built 'flushkit cp': copy a small tree with
# each method, then 'diff -r' and 'cmp' are clean, modes, mtimes, link
# targets and hard links match; cp -a destination rules; the summary and
# --json output; usage errors exit 2.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

src=$t/src
mkdir -p "$src/a/b/c" "$src/empty dir"
head -c 100000 /dev/urandom >"$src/a/data"
head -c 1 /dev/urandom >"$src/a/b/one"
: >"$src/a/b/c/empty"
printf 'hello\n' >"$src/name with space"
ln -s a/data "$src/link"
ln -s does/not/exist "$src/dangling"
ln "$src/a/data" "$src/a/b/hardlink"
truncate -s 4M "$src/sparse"
printf 'x' | dd of="$src/sparse" bs=1 seek=1000000 conv=notrunc 2>/dev/null
chmod 0444 "$src/a/b/one"
chmod 4755 "$src/a/data"
touch -h -d '2001-02-03 04:05:06.789' "$src/link" "$src/a/b/c/empty" "$src/a/b/c"

# Everything that can be compared with stat, per entry.
describe() {
	(cd "$1" && find . -printf '%p %y %m %s %n %T@ %l\n' | LC_ALL=C sort)
}

for m in writeback delayed fsync-each syncfs; do
	dst=$t/dst-$m
	"$FLUSHKIT" cp --summary --method=$m "$src" "$dst" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 0 ] || bad "cp --method=$m exit $rc: $(cat "$t/err")"
	diff -r --no-dereference "$src" "$dst" || bad "diff -r differs ($m)"
	for f in a/data a/b/one sparse "name with space"; do
		cmp "$src/$f" "$dst/$f" || bad "cmp $f ($m)"
	done
	[ "$(describe "$src")" = "$(describe "$dst")" ] ||
		{ bad "metadata differs ($m)"; diff <(describe "$src") <(describe "$dst"); }
	[ "$(stat -c %i "$dst/a/data")" = "$(stat -c %i "$dst/a/b/hardlink")" ] ||
		bad "hard link not kept ($m)"
	s_blocks=$(stat -c %b "$dst/sparse")
	[ "$s_blocks" -lt 100 ] || bad "sparse file not sparse: $s_blocks blocks ($m)"
	grep -q "^flushkit cp .*: ok (method $m)" "$t/out" || bad "summary ($m): $(cat "$t/out")"
	grep -q '^  files *5$' "$t/out" || bad "files count ($m)"
	grep -q '^  hard links *1$' "$t/out" || bad "hard links count ($m)"
	[ ! -s "$t/err" ] || bad "stderr not empty ($m): $(cat "$t/err")"
done
cat "$t/out"

# An existing directory receives DST/basename(SRC).  As GNU cp, nothing
# on stdout or stderr unless asked (not a terminal here; -q too).
mkdir "$t/into"
"$FLUSHKIT" cp "$src" "$t/into" >"$t/out" 2>"$t/err" || bad "cp into a directory"
[ ! -s "$t/out" ] || bad "default cp printed on stdout: $(cat "$t/out")"
[ ! -s "$t/err" ] || bad "default cp printed on stderr: $(cat "$t/err")"
"$FLUSHKIT" cp -q "$src" "$t/quiet" >"$t/out" 2>&1 || bad "cp -q"
[ ! -s "$t/out" ] || bad "cp -q printed: $(cat "$t/out")"
# A failure: its diagnostics only, no summary line.
"$FLUSHKIT" cp "$t/missing" "$t/y" >"$t/out" 2>"$t/err"
[ ! -s "$t/out" ] || bad "failed cp printed on stdout: $(cat "$t/out")"
[ "$(grep -c . "$t/err")" -eq 1 ] || bad "failed cp: not one line: $(cat "$t/err")"
# The summary's plurals: one file, one directory fsync.
"$FLUSHKIT" cp --summary --method=fsync-each "$src/a/data" "$t/one" >"$t/out" ||
	bad "cp --summary of one file"
grep -q '^  fsync         2 files, 1 directory (' "$t/out" ||
	bad "summary plurals: $(cat "$t/out")"
"$FLUSHKIT" cp --summary "$t/missing" "$t/y" 2>"$t/err" >/dev/null
grep -q 'failed (1 error)' "$t/err" || bad "failed (1 error): $(cat "$t/err")"
diff -r --no-dereference "$src" "$t/into/src" || bad "diff -r into/src"

# A single file, and --json.
"$FLUSHKIT" cp --json --drop-cache "$src/a/data" "$t/single" >"$t/json" ||
	bad "cp of one file"
cmp "$src/a/data" "$t/single" || bad "cmp single"
grep -q '"result":"ok"' "$t/json" || bad "json result: $(cat "$t/json")"
grep -q '"files":1,' "$t/json" || bad "json files"
grep -q '"drop_cache":true' "$t/json" || bad "json drop_cache"

# Usage errors.
"$FLUSHKIT" cp --method=nope "$src" "$t/x" 2>/dev/null; [ $? -eq 1 ] || bad "bad method exit"
"$FLUSHKIT" cp "$src" 2>/dev/null; [ $? -eq 1 ] || bad "one argument exit"
"$FLUSHKIT" cp --help | grep -q 'usage: flushkit cp' || bad "--help"
# One line and the Try line: an unknown option; cp's refused
# combinations (exit 1, as cp), each named.
"$FLUSHKIT" cp --bogus "$src" "$t/x" 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && [ "$(cat "$t/err")" = "flushkit cp: unrecognized option '--bogus'
Try 'flushkit cp --help' for more information." ] || bad "--bogus: exit $rc: $(cat "$t/err")"
for o in "-b -n:--backup and --no-clobber" "-l -s:both hard and symbolic" \
	"-l --attributes-only:--attributes-only with --link"; do
	"$FLUSHKIT" cp ${o%%:*} "$src" "$t/x" 2>"$t/err"; rc=$?
	[ $rc -eq 1 ] && grep -q "^flushkit cp: .*${o#*:}" "$t/err" &&
		[ "$(grep -c . "$t/err")" -eq 2 ] || bad "${o%%:*}: exit $rc: $(cat "$t/err")"
	[ ! -e "$t/x" ] || bad "${o%%:*}: copied"
done
"$FLUSHKIT" cp --parents "$src" "$t/x" 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && grep -q "with --parents, the destination must be a directory" "$t/err" ||
	bad "--parents to a new name: exit $rc: $(cat "$t/err")"
# A missing source fails with exit 1 and names it.
"$FLUSHKIT" cp "$t/missing" "$t/y" 2>"$t/err"; rc=$?
[ $rc -eq 1 ] || bad "missing source exit $rc"
grep -q "'$t/missing'" "$t/err" || bad "missing source message: $(cat "$t/err")"

[ $fail -eq 0 ] && echo "t-cp: ok"
exit $fail
