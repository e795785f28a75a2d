#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cut-tree.sh BUILD - flushkit cp and flushkit sync under power cuts
# that lose the disk's write cache: test-tree-powercut with FK_CUT=disk
# (tests/lib/fkcut.h: each file system on a lab disk, ram model, write
# cache on), ext4, xfs and btrfs, every cp and sync method, cuts right
# after exit 0 (the copy must be exact), during a run at a random moment
# or at the disk's N-th FLUSH (the incomplete copy must be detectable),
# the fsync-EIO regression case, and nested mounts (a second lab disk
# mounted inside the destination: cut of both, the inner or the outer
# one after exit 0, and cp cut at a FLUSH of either disk while it runs).
# Then the negative control on ext4:
# the same cp and sync trials with the disk ignoring FLUSH while each
# command runs must lose data in at least 3 of 4 "cut after exit 0"
# trials.  FK_TRIALS (default 1) trials per method; FK_TEST_SEED fixes
# the seed.  Needs root (skip 77 otherwise).
set -u
build=${1:-build}
test=$build/tests/test-tree-powercut
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -x "$test" ] || { echo "SKIP: $test not built"; exit 77; }
[ -x "$build/flushkit-diskd" ] || { echo "SKIP: no flushkit-diskd"; exit 77; }
seed=${FK_TEST_SEED:-$(date +%s)}
echo "seed $seed (FK_TEST_SEED)"
log=$(mktemp /var/tmp/t-cut-tree.XXXXXX)
trap 'rm -f "$log"' EXIT

FK_CUT=disk FK_TREECUT_KINDS=regression,cp,sync,nested FK_TEST_SEED=$seed \
	"$test" >"$log" 2>&1
rc=$?
grep -E '^(seed|power cuts|cuts|btrfs|cut right|nested|time|trials)|FAILED' "$log"
if [ $rc = 77 ]; then
	echo "SKIP: no lab disk"
	exit 77
fi
if [ $rc != 0 ]; then
	echo "FAIL: cache-loss cuts of cp/sync (exit $rc)"
	grep -B2 -A30 FAILED "$log" | head -80
	exit 1
fi

FK_CUT=disk FK_CUT_FLUSH=ignore FK_TREECUT_FS=ext4 FK_TREECUT_KINDS=cp,sync \
	FK_TEST_SEED=$seed "$test" >"$log" 2>&1
line=$(grep -E '^cut right after exit 0: [0-9]+ trials, [0-9]+ lost' "$log")
echo "negative control (FLUSH ignored): $line"
n=$(echo "$line" | sed -E 's/.*: ([0-9]+) trials, ([0-9]+) lost.*/\1/')
lost=$(echo "$line" | sed -E 's/.*: ([0-9]+) trials, ([0-9]+) lost.*/\2/')
if [ -z "$n" ] || [ "$n" -lt 2 ] || [ $((4 * lost)) -lt $((3 * n)) ]; then
	echo "FAIL: the negative control lost data in ${lost:-?} of ${n:-?} trials"
	exit 1
fi
echo "PASS"
