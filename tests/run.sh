#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/run.sh BUILD_DIR [--tier TIER] [--group AREA]... [--list] [NAME...]
# - run the test programs.
#
# The tests are grouped by what they test, one folder each under tests/
# (tests/store/, tests/tree/, tests/bench/ ...: the areas of
# tests/README); a test not yet in a folder may sit in tests/ itself.
# Each C test tests/[AREA/]test-NAME.c is built as BUILD_DIR/tests/
# test-NAME (one flat folder: test names are unique across the areas),
# each script tests/[AREA/]t-NAME.sh runs from the source tree.
#
# Runs every BUILD_DIR/tests/test-* program and every t-*.sh script
# (scripts get FLUSHKIT=path of the built command), each with a timeout.
# A NAME is a test's name without its folder (test-store-basic,
# t-cp.sh, or t-cp without the .sh) or an area's folder name (store,
# or tests/store/): that area's tests.  --group AREA does the same and
# may be given with --tier (the tests of both).  A test name found in
# two folders is an error (exit 2).
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
usage="usage: tests/run.sh BUILD_DIR [--tier sanitize|weekly|all] [--group AREA]... [--list] [NAME...]"
build=${1:?$usage}
shift
tier= list= groups=()
while [ $# -gt 0 ]; do
	case $1 in
	--tier) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
		tier=$2; shift 2;;
	--tier=*) tier=${1#--tier=}; shift;;
	--group) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
		groups+=("$2"); shift 2;;
	--group=*) groups+=("${1#--group=}"); shift;;
	--list) list=1; shift;;
	--) shift; break;;
	-*) echo "$usage" >&2; exit 2;;
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
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
logs=$build/test-logs
mkdir -p "$logs"
export FLUSHKIT=$build/flushkit
export FK_SRC=$src
timeout_s=${FK_TEST_TIMEOUT:-600}

# Where each test's source is: tests/NAME (not yet in a folder) or
# tests/AREA/NAME; area_of[NAME] is AREA ("" at the top).  Scripts by
# their file name, C tests by their program's name (test-NAME.c:
# test-NAME).  A name in two places is an error: the programs share
# one folder of the build and tests/tiers names scripts without paths.
declare -A src_of=() area_of=() is_area=()
bad=0
for f in "$src"/tests/t-*.sh "$src"/tests/test-*.c "$src"/tests/*/t-*.sh "$src"/tests/*/test-*.c; do
	[ -f "$f" ] || continue
	n=$(basename "$f")
	[[ $n == *.c ]] && n=${n%.c}
	d=$(dirname "${f#"$src"/tests/}")
	[ "$d" = . ] && d=
	if [ -n "${src_of[$n]:-}" ]; then
		echo "tests/run.sh: $n is in two places: ${src_of[$n]#"$src"/} and ${f#"$src"/}" >&2
		bad=1
	fi
	src_of[$n]=$f
	area_of[$n]=$d
	[ -z "$d" ] || is_area[$d]=1
done
[ "$bad" -eq 0 ] || exit 2

# An area's name as given: store, store/, tests/store, tests/store/.
area_name() {
	local a=${1%/}
	a=${a#tests/}
	printf '%s' "$a"
}
for i in "${!groups[@]}"; do
	g=$(area_name "${groups[$i]}")
	[ -n "${is_area[$g]:-}" ] || {
		echo "tests/run.sh: no such group: '${groups[$i]}' (a folder of tests/ with tests: $(printf '%s\n' "${!is_area[@]}" | sort | tr '\n' ' '))" >&2
		exit 2
	}
	groups[$i]=$g
done

tests=()
if [ $# -gt 0 ]; then
	for n in "$@"; do
		b=$(basename "$n")
		b=${b%.c}
		if [ -n "${is_area[$(area_name "$n")]:-}" ]; then
			groups+=("$(area_name "$n")")
		elif [[ $b == test-* ]] && [ -x "$build/tests/$b" ]; then tests+=("$build/tests/$b");
		elif [[ $b == t-* && -n ${src_of[$b]:-} ]]; then tests+=("${src_of[$b]}");
		# a script named without its .sh (t-completion)
		elif [[ $b == t-* && -n ${src_of[$b.sh]:-} ]]; then tests+=("${src_of[$b.sh]}");
		else echo "no such test: $n" >&2; exit 2; fi
	done
fi
# No names: every test.  Areas (--group or named): their tests, after
# the tests named one by one.
if [ $# -eq 0 ] || [ ${#groups[@]} -gt 0 ]; then
	all=()
	for t in "$build"/tests/test-*; do [ -x "$t" ] && all+=("$t"); done
	while IFS= read -r n; do
		all+=("${src_of[$n]}")
	done < <(printf '%s\n' "${!src_of[@]}" | grep '^t-.*\.sh$' | sort)
	for t in "${all[@]}"; do
		if [ ${#groups[@]} -gt 0 ]; then
			a=${area_of[$(basename "$t")]-none}
			in=0
			for g in "${groups[@]}"; do [ "$a" = "$g" ] && in=1; done
			[ $in -eq 1 ] || continue
		fi
		tests+=("$t")
	done
fi

# A test named and in a named area runs once.
declare -A seen=()
kept=()
for t in "${tests[@]}"; do
	[ -n "${seen[$t]:-}" ] || kept+=("$t")
	seen[$t]=1
done
tests=("${kept[@]}")

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
		[[ $n == t-*.sh && -n ${src_of[$n]:-} ]] ||
			{ echo "tests/tiers: $n: no such test script in tests/ or its folders" >&2; bad=1; }
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
fi
if [ -n "$list" ]; then
	for t in "${tests[@]}"; do basename "$t"; done
	exit 0
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
