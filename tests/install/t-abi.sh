#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The exported symbol set is explicit and agrees three ways: the FK_API
# declarations of include/flushkit.h and its sections
# include/flushkit/*.h, the version script
# src/libflushkit.map, and the dynamic symbol table of the built
# libflushkit.so (every export versioned FLUSHKIT_*, nothing else
# exported); the SONAME is libflushkit.so.1.
set -u
fail() { echo "FAIL: $*"; exit 1; }
src=${FK_SRC:?}
build=$(dirname "$FLUSHKIT")
lib=$build/libflushkit.so.1
[ -e "$lib" ] || fail "no $lib"
tmp=${TMPDIR:-/tmp}
# FK_API declarations: the name before the first "(" of each.
cat "$src/include/flushkit.h" "$src"/include/flushkit/*.h | tr '\n' ' ' | grep -o 'FK_API [^;{]*' |
	grep -oE '\bfk_[a-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*(//' |
	sort -u >"$tmp/header.txt"
sed -n 's/^[[:space:]]*\(fk_[a-z0-9_]*\);.*/\1/p' "$src/src/libflushkit.map" | sort -u >"$tmp/map.txt"
nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' >"$tmp/dyn-raw.txt"
sed 's/@.*//' "$tmp/dyn-raw.txt" | sort -u >"$tmp/dyn.txt"
[ "$(wc -l <"$tmp/header.txt")" -ge 50 ] || fail "found only $(wc -l <"$tmp/header.txt") FK_API functions"
d=$(diff "$tmp/header.txt" "$tmp/map.txt") ||
	fail "flushkit.h (<) and src/libflushkit.map (>) differ: $d"
d=$(diff "$tmp/map.txt" "$tmp/dyn.txt") ||
	fail "src/libflushkit.map (<) and the exports of libflushkit.so (>) differ: $d"
unver=$(grep -v '@@FLUSHKIT_[0-9.]*$' "$tmp/dyn-raw.txt" || true)
[ -z "$unver" ] || fail "exports without a FLUSHKIT_ version: $unver"
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libflushkit.so.1 ] || fail "SONAME is '$soname'"
echo "ok: $(wc -l <"$tmp/map.txt") symbols, header = map = exports, SONAME $soname"
