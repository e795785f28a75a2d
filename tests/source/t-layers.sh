#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-layers.sh - calls go one way in the whole tree, as t-store-layers.sh
# checks for the page store's modules: docs/design.md's table "The
# floors" gives each source file a floor, and every built object file
# may use only symbols defined on its own floor or a lower one (nm of
# the objects: its undefined symbols against the symbols the tree's
# objects define).  And no object files call one another in a circle,
# on one floor or across (tsort of the calls between files).  The libc
# names the preload shim exports (src/preload/preload.map) are left out
# of the symbol map: they are libc's for everyone but a preloaded
# program (design.md says why the shim's own calls reach them).  Every
# source under the floors' folders must be on a floor, and every floor
# must match files, so the table stays true.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
src=${FK_SRC:?}
build=$(dirname "${FLUSHKIT:?}")
command -v nm >/dev/null || skip "no nm"
command -v tsort >/dev/null || skip "no tsort"
[ -d "$build/CMakeFiles" ] || skip "no object files in $build/CMakeFiles"
design=$src/docs/design.md

# The floors: rows "| N | `glob` `glob` ... | what |" of the table.
declare -A floor
nfloors=0
while IFS= read -r row; do
	n=$(sed -n 's/^| \([0-9]\+\) |.*/\1/p' <<<"$row")
	# shellcheck disable=SC2016 # the backquotes are the markdown's
	globs=$(awk -F'|' '{print $3}' <<<"$row" | grep -o '`[^`]*`' | tr -d '`')
	matched=0
	for g in $globs; do
		for f in $src/$g; do
			[ -f "$f" ] || continue
			rel=${f#"$src"/}
			[ -z "${floor[$rel]:-}" ] || fail "$rel is on floors ${floor[$rel]} and $n"
			floor[$rel]=$n
			matched=$((matched + 1))
		done
	done
	[ $matched -gt 0 ] || fail "floor $n of design.md matches no file: $globs"
	nfloors=$((nfloors + 1))
done < <(sed -n '/^## The floors/,/^## /p' "$design" | grep -E '^\| [0-9]+ \|')
[ $nfloors -ge 5 ] || fail "design.md's table of floors has only $nfloors rows"

# Every C source of the floors' folders is on a floor.
mapfile -t bdirs < <(cd "$src" && find bench -type d | sort)
for d in src src/store src/preload cli disk disk/model tools "${bdirs[@]}"; do
	for f in "$src/$d"/*.c; do
		[ -f "$f" ] || continue
		rel=${f#"$src"/}
		[ -n "${floor[$rel]:-}" ] || fail "$rel is on no floor of design.md"
	done
done

# The objects of each source (a source may be built into several
# targets: src/sys.c into the library and the preload shim).
declare -A objs
nobj=0
while IFS= read -r o; do
	rel=${o#*.dir/}
	rel=${rel%.o}
	[ -n "${floor[$rel]:-}" ] || continue
	objs[$rel]+="$o "
	nobj=$((nobj + 1))
done < <(find "$build/CMakeFiles" -name '*.c.o' -path '*.dir/*' | sort)
for rel in "${!floor[@]}"; do
	[ -n "${objs[$rel]:-}" ] || skip "no object file of $rel (build first)"
done

# Who defines what (global text, data, bss, read-only data).
exported=$(sed -n '/global:/,/local:/p' "$src/src/preload/preload.map" |
	tr -s '[:space:];' '\n' | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | grep -v -x -e global -e local)
declare -A libc_name def
for s in $exported; do libc_name[$s]=1; done
for rel in "${!objs[@]}"; do
	for o in ${objs[$rel]}; do
		while read -r s; do
			[ -n "${libc_name[$s]:-}" ] && continue
			d=${def[$s]:-}
			if [ -n "$d" ] && [ "$d" != "$rel" ] && [ "${floor[$d]}" != "${floor[$rel]}" ]; then
				fail "$s is defined on two floors: $d and $rel"
			fi
			def[$s]=$rel
		done < <(nm --defined-only "$o" | awk '$2 ~ /^[TDBR]$/ {print $3}')
	done
done

bad=0 calls=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for rel in "${!objs[@]}"; do
	for o in ${objs[$rel]}; do
		for s in $(nm -u "$o" | awk '{print $2}'); do
			d=${def[$s]:-}
			if [ -z "$d" ] || [ "$d" = "$rel" ]; then continue; fi
			calls=$((calls + 1))
			echo "$rel $d" >>"$edges"
			if [ "${floor[$d]}" -gt "${floor[$rel]}" ]; then
				echo "$rel (floor ${floor[$rel]}) calls up: $s (defined in $d, floor ${floor[$d]})"
				bad=1
			fi
		done
	done
done
[ $calls -ge 200 ] || fail "only $calls calls between files found: nm output not understood"
[ $bad -eq 0 ] || fail "an object file calls a floor above its own (docs/design.md, The floors)"
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
	cat "$edges.err"
	rm -f "$edges.err"
	fail "object files call one another in a circle (tsort's loop above)"
fi
rm -f "$edges.err"
echo "ok: ${#floor[@]} sources on $nfloors floors, $nobj objects, $calls calls between files, all downwards, no circle"
