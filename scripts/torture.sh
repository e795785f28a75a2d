#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/torture.sh [BUILD_DIR] - the crash properties 1-3 of
# docs/durability.md (kill -9, power cut, crash during recovery) at their
# full trial counts, with the crash torture harness BUILD_DIR/tests/tools/
# fk-torture (tests/lib/fktorture.c):
#   1. kill -9 during TPC-B                      1000 trials
#   2. power cut during TPC-B, ext4 and xfs       200 trials each
#   3. crash during recovery (kill -9; power cut on ext4 and xfs)
#                                                 200 trials each
# Counts can be changed with TORTURE_KILL, TORTURE_POWERCUT,
# TORTURE_RECOVERY; FK_TEST_SEED fixes the seed of every run.  Needs
# root for the power cuts (those runs are reported as skipped
# otherwise).  Logs: BUILD_DIR/torture-logs/.  Prints one line per run
# (trials, failures, seconds) and exits 1 if any trial failed.
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
tool=$build/tests/tools/fk-torture
if [ ! -x "$tool" ]; then
	echo "torture.sh: $tool not built (scripts/build.sh $build)" >&2
	exit 2
fi
logs=$build/torture-logs
mkdir -p "$logs"
kill_n=${TORTURE_KILL:-1000}
cut_n=${TORTURE_POWERCUT:-200}
rec_n=${TORTURE_RECOVERY:-200}
seed=${FK_TEST_SEED:-$(date +%s)}

status=0
summary=()
run() {		# label logname args...
	local label=$1 log=$logs/$2.log
	shift 2
	local start=$SECONDS
	"$tool" --seed "$seed" "$@" >"$log" 2>&1
	local rc=$?
	local line
	line=$(grep -E '^trials: [0-9]+, failed: [0-9]+' "$log" | tail -n 1)
	case $rc in
	0) ;;
	77) line="skipped (needs root and loop devices)";;
	*) status=1
	   [ -n "$line" ] || line="did not finish (exit $rc)"
	   grep -E '^FAIL' "$log" | head -n 5 | sed 's/^/    /' >&2;;
	esac
	summary+=("$(printf '%-44s %s [%d s wall, seed %s, %s]' "$label" \
		"$line" $((SECONDS - start)) "$seed" "$log")")
	echo "${summary[-1]}"
}

t0=$SECONDS
run "1. kill -9 during TPC-B:" kill --fault kill --trials "$kill_n"
run "2. power cut during TPC-B, ext4:" powercut-ext4 \
	--fault powercut --fs ext4 --trials "$cut_n"
run "2. power cut during TPC-B, xfs:" powercut-xfs \
	--fault powercut --fs xfs --trials "$cut_n"
run "3. crash (kill -9) during recovery:" recovery-kill \
	--fault recovery-kill --trials "$rec_n"
run "3. crash (power cut) during recovery, ext4:" recovery-powercut-ext4 \
	--fault recovery-powercut --fs ext4 --trials "$rec_n"
run "3. crash (power cut) during recovery, xfs:" recovery-powercut-xfs \
	--fault recovery-powercut --fs xfs --trials "$rec_n"
echo "---"
for l in "${summary[@]}"; do echo "$l"; done
echo "total: $((SECONDS - t0)) s"
exit $status
