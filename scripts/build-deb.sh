#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/build-deb.sh [OUTDIR] - build the Debian packages
# (libflushkit1, libflushkit-dev, flushkit) with
# "dpkg-buildpackage -us -uc -b" from a copy of this tree in
# OUTDIR/src (default build-deb/), so nothing is written into the tree
# or its parent, then run lintian on them.  The .debs, the .changes,
# build.log and lintian.txt end up in OUTDIR.  Exit 1 if the build fails
# or lintian reports an error.  Needs dpkg-dev, debhelper, lintian and
# the Build-Depends of debian/control (scripts/install-deps.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir "$out/src"
# The files of the tree (tracked and new, not ignored); without git, all
# but the build and result directories.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z -co --exclude-standard) |
		(cd "$top" && xargs -0 tar -c --no-recursion -f - 2>/dev/null) |
		tar -x -C "$out/src"
else
	tar -C "$top" -c --exclude='./build*' --exclude=./results \
		--exclude=./report --exclude=./tpcb-data --exclude='./obj-*' . |
		tar -x -C "$out/src"
fi
start=$(date +%s)
status=0
(cd "$out/src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || status=$?
secs=$(($(date +%s) - start))
if [ $status -ne 0 ]; then
	tail -n 60 "$out/build.log"
	echo "build-deb: dpkg-buildpackage failed (exit $status) after ${secs}s; log: $out/build.log" >&2
	exit 1
fi
mv "$out"/src/../*.deb "$out"/ 2>/dev/null || true
echo "build-deb: dpkg-buildpackage -us -uc -b: ok in ${secs}s"
grep -E '^dpkg-deb: building package' "$out/build.log" | sed 's/^/  /'
changes=$(ls "$out"/*.changes)
lstatus=0
lintian --fail-on error --display-info --pedantic "$changes" >"$out/lintian.txt" 2>&1 || lstatus=$?
echo "build-deb: lintian (errors fail; warnings, info, pedantic shown):"
if [ -s "$out/lintian.txt" ]; then sed 's/^/  /' "$out/lintian.txt"; else echo "  (no tags)"; fi
[ $lstatus -eq 0 ] || { echo "build-deb: lintian reports errors" >&2; exit 1; }
ls -l "$out"/*.deb
