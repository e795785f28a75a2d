#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit reproduce": the argument lists it builds for its children
# carry every argument whole, whatever its length.  A --results path of
# more than 256 bytes (the seed's directory, its result files and the
# report's -o all below it) must reach "flushkit report" as given: the
# report is written in RESULTS/003/report, and nothing is written
# beside RESULTS under a cut-off name.  (An argv of fixed 256-byte
# strings cut such a path, and "flushkit report" was given files that
# do not exist and an -o somewhere else.)
# Not root or no loop devices: skip (77).
set -u
if [ "$(id -u)" != 0 ]; then echo "SKIP: not root"; exit 77; fi
[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-reproduce-long-args.XXXXXX)
trap 'rm -rf "$t"' EXIT
a=$(printf 'a%.0s' $(seq 200))
b=$(printf 'b%.0s' $(seq 200))
res=$t/$a/$b # more than 400 bytes
mkdir -p "$t/$a"
"$FLUSHKIT" reproduce 003 --quick --runs=1 --device=400M:20000 \
	--results "$res" >"$t/out" 2>&1
rc=$?
[ $rc -eq 0 ] || err "exit $rc (want 0): $(tail -5 "$t/out")"
# The report of the seed's result files, where it was asked for.
[ -d "$res/003/report" ] && [ -n "$(ls -A "$res/003/report")" ] ||
	err "no report in RESULTS/003/report: $(ls "$res/003" 2>&1 | tr '\n' ' ')"
grep -q 'failed with status' "$res/003/report.log" "$t/out" 2>/dev/null &&
	err "a child failed: $(grep -h 'failed with status' "$t/out" | head -3)"
# Nothing under a cut-off name beside RESULTS.
extra=$(ls -A "$t/$a" | grep -vx "$b")
[ -z "$extra" ] || err "written beside RESULTS: '$extra'"
# Every result file the report was given exists.
if [ -f "$res/003/commands.txt" ]; then
	grep -o "$t/[^ ]*\.jsonl" "$res/003/commands.txt" | while read -r f; do
		[ -e "$f" ] || echo "missing $f"
	done >"$t/missing"
	[ -s "$t/missing" ] &&
		err "report given files that do not exist: $(head -2 "$t/missing")"
fi
[ $fail -eq 0 ] && echo "PASS: arguments of $(( ${#res} + 15 )) bytes reach the children whole"
exit $fail
