#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The built libflushkit.so.N keeps the ABI released as abi/libflushkit.so.N.abi
# (libabigail's abidiff; docs/libflushkit.md, "ABI and SONAME"): functions
# may be added, none removed or changed, and no type reachable from an
# exported function (the options and statistics structs the caller
# allocates) may change size or layout.  A change that must be made
# raises the SONAME (CMakeLists.txt FK_SOVERSION) and writes the new
# release's dump (scripts/abi-dump.sh).  Skips without abidiff or
# without debug info in the library.
set -u
fail() { echo "FAIL: $*"; exit 1; }
src=${FK_SRC:?}
build=$(dirname "$FLUSHKIT")
command -v abidiff >/dev/null || { echo "SKIP: abidiff not found (apt-get install abigail-tools)"; exit 77; }
[ -e "$build/libflushkit.so" ] || fail "no $build/libflushkit.so"
soname=$(readelf -d "$build/libflushkit.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
lib=$build/$soname
readelf -S "$lib" | grep -q '\.debug_info' ||
	{ echo "SKIP: $lib has no debug info (build type without -g)"; exit 77; }
ref=$src/abi/$soname.abi
[ -s "$ref" ] || fail "no released ABI $ref for SONAME $soname: a new SONAME writes it (scripts/abi-dump.sh)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abidiff --headers-dir2 "$src/include" "$ref" "$lib" >"$tmp/report"
rc=$?
# abidiff's status bits: 1 error, 2 usage error, 4 ABI change, 8
# incompatible change.  Additions alone set 4; the summary lines say
# whether anything was removed or changed.
[ $((rc & 3)) -eq 0 ] || { cat "$tmp/report"; fail "abidiff failed (status $rc)"; }
bad=$(grep -E '^(Functions|Variables) changes summary:' "$tmp/report" |
	grep -vE ': 0 Removed, 0 Changed' || true)
if [ $((rc & 8)) -ne 0 ] || [ -n "$bad" ]; then
	sed -n '1,80p' "$tmp/report"
	fail "the ABI of $soname changed against $ref: raise the SONAME or undo the change"
fi
added=$(sed -n 's/^Functions changes summary: .* \([0-9][0-9]*\) Added.*/\1/p' "$tmp/report")
echo "ok: $soname keeps the released ABI of abi/$soname.abi (${added:-0} functions added)"
