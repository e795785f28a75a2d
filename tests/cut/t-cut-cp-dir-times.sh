#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cut-cp-dir-times.sh BUILD - a directory of `flushkit cp` carries its
# source's mtime only once every name in it is durable, on btrfs under
# power cuts that lose the disk's write cache (test-tree-powercut with
# FK_CUT=disk, cp trials only, FK_TRIALS=3: 15 cut during a run, half at
# the disk's N-th FLUSH, 15 right after exit 0).
# Before tree_copy.c deferred a directory's times until after its fsync
# (invariant 2), a directory got them as the walk left it, before its
# entries were durable; btrfs makes the directory's inode durable with
# the fsync of a file in it (its log tree) without the names not fsynced
# yet, so a cut left directories with their source's mtime and names
# missing ("INCOMPLETE DIRECTORY LOOKS COMPLETE"): seed 1 failed 4 of
# its 15 cuts during a run (ext4 and xfs commit the inode and the names
# in one ordered journal, and never showed it).
# FK_TRIALS, FK_TEST_SEED as test-tree-powercut.  Root only (77).
set -u
build=${1:-build}
test=$build/tests/test-tree-powercut
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -x "$test" ] || { echo "SKIP: $test not built"; exit 77; }
[ -x "$build/flushkit-diskd" ] || { echo "SKIP: no flushkit-diskd"; exit 77; }
command -v mkfs.btrfs >/dev/null || { echo "SKIP: no mkfs.btrfs"; exit 77; }
seed=${FK_TEST_SEED:-$(date +%s)}
echo "seed $seed (FK_TEST_SEED)"
log=$(mktemp /var/tmp/t-cut-cp-dir-times.XXXXXX)
trap 'rm -f "$log"' EXIT

FK_CUT=disk FK_TREECUT_FS=btrfs FK_TREECUT_KINDS=cp \
	FK_TRIALS=${FK_TRIALS:-3} FK_TEST_SEED=$seed "$test" >"$log" 2>&1
rc=$?
grep -E '^(btrfs|cuts|cut right|cuts during|time|trials)' "$log"
if [ $rc = 77 ] || grep -q '^btrfs: not available' "$log"; then
	echo "SKIP: no lab disk or no btrfs"
	exit 77
fi
if [ $rc != 0 ]; then
	echo "FAIL: btrfs cp under cache-loss cuts (exit $rc)"
	grep -E 'FAILED|LOOKS COMPLETE|^    ' "$log" | head -40
	exit 1
fi
n=$(grep -cE '^  btrfs cp .* cut during' "$log")
if [ "$n" -lt 5 ]; then
	echo "FAIL: only $n cuts during a run"
	exit 1
fi
echo "PASS"
