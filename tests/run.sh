#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/run.sh BUILD_DIR [--tier TIER [--list]] [NAME...] - run the test
# programs.
#
# Runs every BUILD_DIR/tests/test-* program and every tests/t-*.sh script
# (scripts get FLUSHKIT=path of the built command), each with a timeout.
# --tier picks the tests of one tier of tests/tiers (the one place that
# says which tests the sanitizer runs of .ci/run take): "sanitize" is
# every C test and the scripts marked sanitize, "weekly" the scripts
# marked weekly, "all" everything (as without --tier).  A script that
# tests/tiers does not name, or a name there that is no script, is an
# error (exit 2) under --tier, so the list cannot go stale quietly.
# --list prints the names of the chosen tests and runs nothing.
# Exit codes: 0 pass, 77 skip, anything else fail.  The last line is
# "N passed, N failed, N skipped".  Logs go to BUILD_DIR/test-logs/.
# A passing test's "not checked: WHAT" lines (a check this machine
# cannot make: no SSE4.2, no python3, a no-op file system) are shown
# under its PASS line, so a partial pass is never mistaken for a full one.
set -u
usage="usage: tests/run.sh BUILD_DIR [--tier sanitize|weekly|all [--list]] [NAME...]"
build=${1:?$usage}
shift
tier= list=
while [ $# -gt 0 ]; do
	case $1 in
	--tier) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
		tier=$2; shift 2;;
	--tier=*) tier=${1#--tier=}; shift;;
	--list) list=1; shift;;
	*) break;;
	esac
done
case $tier in
''|sanitize|weekly|all) ;;
*) echo "tests/run.sh: no such tier: '$tier' (sanitize, weekly, all)" >&2; exit 2;;
esac
if [ -n "$tier" ] && [ $# -gt 0 ]; then
	echo "tests/run.sh: --tier and test names exclude each other" >&2; exit 2
fi
[ -z "$list" ] || [ -n "$tier" ] || { echo "$usage" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
logs=$build/test-logs
mkdir -p "$logs"
export FLUSHKIT=$build/flushkit
export FK_SRC=$src
timeout_s=${FK_TEST_TIMEOUT:-600}

tests=()
if [ $# -gt 0 ]; then
	for n in "$@"; do
		if [ -x "$build/tests/$n" ]; then tests+=("$build/tests/$n");
		elif [ -f "$src/tests/$n" ]; then tests+=("$src/tests/$n");
		else echo "no such test: $n" >&2; exit 2; fi
	done
else
	for t in "$build"/tests/test-*; do [ -x "$t" ] && tests+=("$t"); done
	for t in "$src"/tests/t-*.sh; do [ -f "$t" ] && tests+=("$t"); done
fi

# --tier: keep the tests of that tier.  tests/tiers has one line
# "NAME TIER" per script; every C test (test-*) is in tier sanitize.
if [ -n "$tier" ]; then
	declare -A tier_of=()
	bad=0
	while read -r n t _; do
		case $n in ''|'#'*) continue;; esac
		case $t in
		sanitize|weekly) ;;
		*) echo "tests/tiers: $n: no such tier '$t' (sanitize, weekly)" >&2; bad=1;;
		esac
		[ -f "$src/tests/$n" ] ||
			{ echo "tests/tiers: $n: no such test script in tests/" >&2; bad=1; }
		[ -z "${tier_of[$n]:-}" ] ||
			{ echo "tests/tiers: $n named twice" >&2; bad=1; }
		tier_of[$n]=$t
	done <"$src/tests/tiers"
	kept=()
	for t in "${tests[@]}"; do
		name=$(basename "$t")
		if [[ $name == *.sh ]]; then
			t_tier=${tier_of[$name]:-}
			[ -n "$t_tier" ] ||
				{ echo "tests/tiers: $name has no tier: add a line '$name sanitize|weekly'" >&2; bad=1; continue; }
		else
			t_tier=sanitize
		fi
		[ "$tier" = all ] || [ "$tier" = "$t_tier" ] && kept+=("$t")
	done
	[ "$bad" -eq 0 ] || exit 2
	tests=("${kept[@]}")
	if [ -n "$list" ]; then
		for t in "${tests[@]}"; do basename "$t"; done
		exit 0
	fi
fi

# Each test gets its own TMPDIR under BUILD_DIR/test-tmp/NAME, removed
# after it; a file system a killed test left mounted there is unmounted
# (and reported), so one timeout cannot break the tests after it.
tmproot=$build/test-tmp
umount_left() {	# DIR NAME
	[ "$(id -u)" -eq 0 ] || return 0
	local m
	awk -v d="$1/" 'index($2, d) == 1 {print $2}' /proc/self/mounts |
		sort -r | while read -r m; do
			echo "      | run.sh: $2 left $m mounted: unmounting it"
			umount "$m" 2>/dev/null || umount -l "$m"
		done
}

pass=0 fail=0 skip=0 failed=()
for t in "${tests[@]}"; do
	name=$(basename "$t")
	export TMPDIR=$tmproot/$name
	umount_left "$TMPDIR" "an earlier run of $name"
	rm -rf "$TMPDIR"
	mkdir -p "$TMPDIR"
	start=$(date +%s.%N)
	if [[ $t == *.sh ]]; then
		timeout -k 10 "$timeout_s" bash "$t" >"$logs/$name.log" 2>&1
	else
		timeout -k 10 "$timeout_s" "$t" >"$logs/$name.log" 2>&1
	fi
	rc=$?
	umount_left "$TMPDIR" "$name"
	rm -rf "$TMPDIR"
	secs=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)"
	   # A check that could not be made here says so; show it.
	   grep '^not checked: ' "$logs/$name.log" | sort -u | sed 's/^/      | /';;
	77) skip=$((skip + 1)); echo "SKIP  $name ($(grep -m1 '^SKIP' "$logs/$name.log" | cut -c7-))";;
	*) fail=$((fail + 1)); failed+=("$name")
	   echo "FAIL  $name (exit $rc, ${secs}s)"
	   sed 's/^/      | /' "$logs/$name.log" | tail -n 40;;
	esac
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
