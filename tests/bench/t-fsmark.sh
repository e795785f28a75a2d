#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench fsmark smoke test: fs_mark's table is printed with
# files/sec > 0 for each sync method, -k keeps the files (and without it
# they are removed), -v adds the latency columns, --json parses, and
# usage errors exit 2.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
base=$(mktemp -d "${TMPDIR:-/var/tmp}/t-fsmark.XXXXXX")
trap 'rm -rf "$base"' EXIT
# Result files (default results/) go to $base/results; t-results.sh
# checks them.
cd "$base" || exit 1

# Files/sec of the first table row.
fps() { awk '/^FSUse%/ { getline; print $4; exit }' "$1"; }

n=0
for s in 0 1 2 3 4 5 6 batch twopass async; do
	n=$((n + 1))
	d=$base/d$n
	mkdir "$d"
	"$FLUSHKIT" bench fsmark -d "$d" -t 2 -n 5 -s 4096 -L 2 -S "$s" \
		>"$base/out" 2>"$base/err" || { cat "$base/out" "$base/err"; fail "-S $s exit $?"; }
	grep -q '^FSUse%        Count         Size    Files/sec     App Overhead$' "$base/out" ||
		{ cat "$base/out"; fail "-S $s: no fs_mark table header"; }
	[ "$(grep -c '^ *[0-9]\+ \+[0-9]\+ \+4096 \+[0-9.]\+ \+[0-9]\+$' "$base/out")" = 2 ] ||
		{ cat "$base/out"; fail "-S $s: not 2 table rows"; }
	awk -v f="$(fps "$base/out")" 'BEGIN { exit !(f > 0) }' || fail "-S $s: files/sec not > 0"
	# Count is cumulative: 10 after the first loop, 20 after the second.
	awk '/^FSUse%/ { getline; a = $2; getline; b = $2 } END { exit !(a == 10 && b == 20) }' \
		"$base/out" || { cat "$base/out"; fail "-S $s: Count column"; }
	grep -q '^Wall time: ' "$base/out" || fail "-S $s: no wall time"
	grep -Eq '^(Device .*write IOPS|Device statistics unavailable)' "$base/out" ||
		{ cat "$base/out"; fail "-S $s: no device line"; }
	# -L keeps the files, as fs_mark's -L does: 2 threads x 5 x 2 loops
	[ "$(find "$d" -type f | wc -l)" = 20 ] || fail "-S $s: -L 2 kept $(find "$d" -type f | wc -l) files, not 20"
done

# -k keeps every file: threads x files x loops.
d=$base/keep
mkdir "$d" "$d/b"
"$FLUSHKIT" bench fsmark -d "$d" -d "$d/b" -t 4 -n 4 -s 1000 -w 300 -L 2 -k -S batch \
	>"$base/out" || fail "-k exit $?"
[ "$(find "$d" -type f | wc -l)" = 32 ] || fail "-k kept $(find "$d" -type f | wc -l) files, not 32"
[ "$(find "$d/b" -type f | wc -l)" = 16 ] || fail "-k: threads 1 and 3 not in the second directory"
# without -k and -L the files go again
e=$base/nokeep
mkdir "$e"
"$FLUSHKIT" bench fsmark -d "$e" -n 5 -s 4096 >"$base/out" || fail "no -k exit $?"
[ -z "$(ls -A "$e")" ] || fail "files left without -k and -L"
sz=$(find "$d" -type f -printf '%s\n' | sort -u)
[ "$sz" = 1000 ] || fail "file sizes: $sz"
perm=$(find "$d" -type f -printf '%m\n' | sort -u)
[ "$perm" = 600 ] || fail "file modes: $perm"

# -v: min/avg/max columns of each system call.
"$FLUSHKIT" bench fsmark -d "$d" -n 5 -s 4096 -v >"$base/out" || fail "-v exit $?"
grep -q 'FSYNC (Min/Avg/Max)' "$base/out" || fail "-v: no FSYNC column"
awk '/^FSUse%/ { getline; exit !(NF == 5 + 18) }' "$base/out" || { cat "$base/out"; fail "-v: not 23 columns"; }

# --json.
"$FLUSHKIT" bench fsmark -d "$d" -n 5 -s 4096 -S batch --sync-io=threads --json >"$base/json" ||
	fail "--json exit $?"
python3 - "$base/json" <<'PY' || fail "--json content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["benchmark"] == "fsmark" and j["sync_method"] == "batch", j
assert j["sync_io"] == "threads", j["sync_io"]
assert len(j["loops"]) == 1 and j["loops"][0]["files_per_sec"] > 0
assert j["loops"][0]["count"] == 5 and j["loops"][0]["fsync"]["count"] == 5
assert "wall_s" in j and "user_s" in j and "sys_s" in j and j["errors"] == 0
assert len(j["devices"]) == 1
PY

# -S async: every file's fsync reaped (the FSYNC count), on each backend.
for io in auto threads sequential; do
	"$FLUSHKIT" bench fsmark -d "$d" -t 2 -n 40 -s 4096 -S async --sync-io=$io --jobs 4 \
		--json >"$base/json" || fail "-S async --sync-io=$io exit $?"
	python3 - "$base/json" "$io" <<'PY' || fail "-S async --sync-io=$io --json content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["sync_method"] == "async", j
assert sys.argv[2] == "auto" or j["sync_io"] == sys.argv[2], j["sync_io"]
assert j["loops"][0]["count"] == 80 and j["loops"][0]["fsync"]["count"] == 80, j["loops"]
assert j["errors"] == 0
PY
done
"$FLUSHKIT" bench fsmark --help | grep -q 'async: fsync each file as soon as it is written' ||
	fail "--help does not describe -S async"

# Usage errors exit 2; --help exits 0.
"$FLUSHKIT" bench fsmark -n 5 >/dev/null 2>&1; [ $? = 2 ] || fail "no -d: not 2"
"$FLUSHKIT" bench fsmark -d "$d" -S 7 >/dev/null 2>&1; [ $? = 2 ] || fail "-S 7: not 2"
"$FLUSHKIT" bench fsmark --help | grep -q 'sync-io' || fail "--help"
# A directory under a regular file: failure, not usage (-d and its
# missing parents are created; t-fsmark-options.sh checks that).
: >"$base/plainfile"
"$FLUSHKIT" bench fsmark -d "$base/plainfile/sub" -n 1 >/dev/null 2>&1; [ $? = 1 ] || fail "parent a file: not 1"
echo ok
