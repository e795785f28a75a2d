#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/abi-dump.sh [BUILD] - write the ABI of BUILD's libflushkit.so.N
# (default build/) to abi/libflushkit.so.N.abi with libabigail's abidw:
# every type reachable from an exported function, limited to what the
# public headers (include/) declare.  Run it at a release, after a
# change that t-abi-compat.sh reports and the SONAME went up with, and
# commit the file.  BUILD must have debug info (RelWithDebInfo, the
# default build type).  Needs abigail-tools.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
command -v abidw >/dev/null ||
	{ echo "abi-dump: abidw not found (apt-get install abigail-tools)" >&2; exit 1; }
[ -e "$build/libflushkit.so" ] || { echo "abi-dump: no $build/libflushkit.so" >&2; exit 1; }
soname=$(readelf -d "$build/libflushkit.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
lib=$build/$soname
mkdir -p abi
out=abi/$soname.abi
abidw --headers-dir include --no-corpus-path --no-comp-dir-path --short-locs \
	--out-file "$out.tmp" "$lib"
mv "$out.tmp" "$out"
echo "abi-dump: $out ($(grep -c '<elf-symbol ' "$out") exported symbols)"
