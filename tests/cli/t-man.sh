#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages (generated at build time by scripts/mkman.py from
# docs/*.md, include/flushkit.h and include/flushkit/*.h) are complete
# and render cleanly:
#  - flushkit(1), and flushkit-X(1) for every command "flushkit --help"
#    lists and flushkit-bench-K(1) for every kind "flushkit bench --help"
#    lists; libflushkit(3); a page (or a .so link to one) for every
#    FK_API function of flushkit.h and its sections (flushkit/*.h);
#  - "man --warnings -l" renders every page at 60, 80 and 132 columns
#    with no warning from groff, tbl or man, and lexgrog finds its NAME;
#  - every page reference (flushkit-cp(1), fk_store(3), ...) in a page
#    names a page that exists, and every .so link a page;
#  - after "cmake --install" into a DESTDIR, "man flushkit-cp" and
#    "man fk_tree_copy" find the installed pages.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
build=$(dirname "$FLUSHKIT")
src=${FK_SRC:?}
command -v man >/dev/null || skip "man not installed (man-db, scripts/install-deps.sh)"
command -v lexgrog >/dev/null || skip "lexgrog not installed (man-db)"
command -v pandoc >/dev/null || skip "pandoc not installed (scripts/install-deps.sh): no man pages are built"
grep -q '^FK_MAN:BOOL=OFF' "$build/CMakeCache.txt" &&
	skip "configured with FK_MAN=OFF"
M=$build/man
[ -d "$M/man1" ] || fail "no man pages built in $M"

pages=$(cd "$M" && ls man1/*.1 man3/*.3 man7/*.7 2>/dev/null)
has() { [ -f "$M/$1" ] || fail "no man page $1"; }
has man1/flushkit.1
has man3/libflushkit.3
cmds=$("$FLUSHKIT" --help | awk '/^commands:/ {c=1; next} c && NF == 0 {c=0} c {print $1}')
[ "$(wc -w <<<"$cmds")" -ge 5 ] || fail "flushkit --help lists only: $cmds"
for c in $cmds; do has "man1/flushkit-$c.1"; done
kinds=$("$FLUSHKIT" bench --help | awk '/^kinds:/ {c=1; next} c && NF == 0 {c=0} c {print $1}')
[ "$(wc -w <<<"$kinds")" -ge 4 ] || fail "flushkit bench --help lists only: $kinds"
for k in $kinds; do has "man1/flushkit-bench-$k.1"; done
fns=$(cat "$src/include/flushkit.h" "$src"/include/flushkit/*.h | tr '\n' ' ' | grep -o 'FK_API [^;{]*' |
	grep -oE '\bfk_[a-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*(//' | sort -u)
[ "$(wc -w <<<"$fns")" -ge 50 ] || fail "found only $(wc -w <<<"$fns") FK_API functions"
for f in $fns; do has "man3/$f.3"; done

n=0
for p in $pages; do
	f=$M/$p
	if grep -q '^\.so ' "$f"; then
		t=$(sed -n 's/^\.so //p' "$f")
		[ -f "$M/$t" ] || fail "$p: .so $t: no such page"
		continue
	fi
	n=$((n + 1))
	for w in 60 80 132; do
		out=$(MANWIDTH=$w LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null)
		[ -z "$out" ] || fail "$p at $w columns: $out"
	done
	lexgrog "$f" >/dev/null 2>&1 || fail "$p: lexgrog finds no NAME section"
	# References to pages of ours exist.
	for ref in $(MANWIDTH=1000 man -l "$f" 2>/dev/null |
		grep -oE '\b(flushkit(-[a-z0-9-]+)?|libflushkit|fk_[a-z0-9_]+)\([137]\)' | sort -u); do
		name=${ref%(*}
		sec=${ref#*(}
		sec=${sec%)}
		[ -f "$M/man$sec/$name.$sec" ] || fail "$p refers to $ref: no such page"
	done
done
[ $n -ge 20 ] || fail "only $n pages rendered"
echo "$n pages render without warnings; $(wc -w <<<"$pages") files in all"

MANWIDTH=80 man -l "$M/man1/flushkit-cp.1" | grep -q '^SYNOPSIS' || fail "flushkit-cp(1) has no SYNOPSIS"
MANWIDTH=80 man -l "$M/man1/flushkit-cp.1" | grep -q 'flushkit cp \[--method' ||
	fail "flushkit-cp(1) synopsis"

base=$(mktemp -d "${TMPDIR:-/var/tmp}/t-man.XXXXXX")
trap 'rm -rf "$base"' EXIT
DESTDIR=$base/root cmake --install "$build" --prefix /usr >"$base/log" 2>&1 ||
	{ cat "$base/log"; fail "install"; }
mp=$base/root/usr/share/man
[ -f "$mp/man1/flushkit-cp.1" ] || fail "flushkit-cp.1 not installed in share/man/man1"
MANWIDTH=80 man -M "$mp" flushkit-cp 2>/dev/null | grep -q 'cp -a' || fail "man flushkit-cp after install"
MANWIDTH=80 man -M "$mp" fk_tree_copy 2>/dev/null | grep -q 'fk_tree_copy' || fail "man fk_tree_copy after install"
MANWIDTH=80 man -M "$mp" 7 flushkit-durability 2>/dev/null | grep -q 'power' || fail "man 7 flushkit-durability"
echo ok
