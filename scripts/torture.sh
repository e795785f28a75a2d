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
#   4. power cuts that lose the disk's write cache (tests/lib/fkcut.h: a
#      lab disk, ram model, write cache on; cut modes drop, subset,
#      reorder drawn per cut), ext4, xfs and btrfs:
#      store during TPC-B (random moment, N-th FLUSH, after a WAL
#      fsync, mid-checkpoint, after a rename)      500 trials each
#      store, cut again during recovery              100 trials each
#      cp and sync, every method, nested mounts on two lab disks
#      (test-tree-powercut FK_CUT=disk)  FK_TRIALS=8 (about 250 each)
#      durable-replace and flushkit exec (test-cut-files)
#                                                    150 + 150 each
#      fk_fsync_batch alone, io_uring and threads, cut stepping through
#      a run's FLUSHes (test-cut-fsync-batch)       50 per backend each
#   5. the negative control: the same with the disk ignoring FLUSH
#      (store, cp/sync, durable-replace, fk_fsync_batch on ext4): must
#      lose data in >= 90% of the trials that can (reported as a loss
#      rate)
#   6. logged write replay (tests/cut/test-replay.c, dm-log-writes'
#      method): fk_fsync_batch, durable-replace, cp and the store, ext4,
#      xfs and btrfs, checked at every FLUSH boundary and at
#      TORTURE_REPLAY random points per workload (default 64: short);
#      its two negative controls (fsyncs skipped; FLUSH ignored under the
#      store) must lose data or the run fails
# Counts can be changed with TORTURE_KILL, TORTURE_POWERCUT,
# TORTURE_RECOVERY, TORTURE_CUT, TORTURE_CUT_RECOVERY, TORTURE_CUT_TREE,
# TORTURE_CUT_FILES, TORTURE_CUT_BATCH, TORTURE_CONTROL, TORTURE_REPLAY;
# TORTURE_SETS (default "kill,powercut,recovery,cut,control,replay") chooses the parts; FK_TEST_SEED
# fixes the seed of every run.  Needs root for the power cuts (those
# runs are reported as skipped otherwise).  Logs: BUILD_DIR/torture-logs/.
# Prints one line per run (trials, failures, seconds) and exits 1 if
# any trial failed or a negative control lost data in < 90%.
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
cutn=${TORTURE_CUT:-500}
cut_rec_n=${TORTURE_CUT_RECOVERY:-100}
cut_tree_n=${TORTURE_CUT_TREE:-8}
cut_files_n=${TORTURE_CUT_FILES:-150}
cut_batch_n=${TORTURE_CUT_BATCH:-50}
replay_n=${TORTURE_REPLAY:-64}
control_n=${TORTURE_CONTROL:-50}
sets=${TORTURE_SETS:-kill,powercut,recovery,cut,control,replay}
has() { case ",$sets," in *",$1,"*) return 0;; esac; return 1; }

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

# A test program with its environment: label logname env... -- prog
runenv() {
	local label=$1 log=$logs/$2.log
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local start=$SECONDS
	env FK_TEST_SEED="$seed" "${envs[@]}" "$@" >"$log" 2>&1
	local rc=$?
	local line
	line=$(grep -E '^trials: [0-9]+, failed: [0-9]+' "$log" | tail -n 1)
	case $rc in
	0) ;;
	77) line="skipped (needs root, /dev/fuse and loop devices)";;
	*) status=1
	   [ -n "$line" ] || line="did not finish (exit $rc)"
	   grep -E 'FAIL' "$log" | head -n 5 | sed 's/^/    /' >&2;;
	esac
	summary+=("$(printf '%-44s %s [%d s wall, seed %s, %s]' "$label" \
		"$line" $((SECONDS - start)) "$seed" "$log")")
	echo "${summary[-1]}"
}

# A negative control: the run must fail; the rate is LOST of N from
# the line matching REGEX (the first two numbers after its first colon:
# N then LOST, or LOST then N).
control() {	# label logname order regex cmd...
	local label=$1 log=$logs/$2.log order=$3 re=$4
	shift 4
	local start=$SECONDS
	env FK_TEST_SEED="$seed" "$@" >"$log" 2>&1
	local nums n lost
	nums=$(grep -E "$re" "$log" | tail -n 1 | sed -E 's/^[^:]*://' |
		grep -oE '[0-9]+' | head -n 2)
	if [ "$order" = n-lost ]; then
		n=$(echo "$nums" | sed -n 1p); lost=$(echo "$nums" | sed -n 2p)
	else
		lost=$(echo "$nums" | sed -n 1p); n=$(echo "$nums" | sed -n 2p)
	fi
	local line="lost data in ${lost:-?} of ${n:-?} trials"
	if [ -z "$n" ] || [ "$n" = 0 ] || [ $((10 * lost)) -lt $((9 * n)) ]; then
		status=1
		line="$line: BELOW 90%"
	fi
	summary+=("$(printf '%-44s %s [%d s wall, seed %s, %s]' "$label" \
		"$line" $((SECONDS - start)) "$seed" "$log")")
	echo "${summary[-1]}"
}

t0=$SECONDS
if has kill; then
run "1. kill -9 during TPC-B:" kill --fault kill --trials "$kill_n"
fi
if has powercut; then
run "2. power cut during TPC-B, ext4:" powercut-ext4 \
	--fault powercut --fs ext4 --trials "$cut_n"
run "2. power cut during TPC-B, xfs:" powercut-xfs \
	--fault powercut --fs xfs --trials "$cut_n"
fi
if has recovery; then
run "3. crash (kill -9) during recovery:" recovery-kill \
	--fault recovery-kill --trials "$rec_n"
run "3. crash (power cut) during recovery, ext4:" recovery-powercut-ext4 \
	--fault recovery-powercut --fs ext4 --trials "$rec_n"
run "3. crash (power cut) during recovery, xfs:" recovery-powercut-xfs \
	--fault recovery-powercut --fs xfs --trials "$rec_n"
fi
if has cut; then
for fs in ext4 xfs btrfs; do
	run "4. cache-loss cut during TPC-B, $fs:" cut-store-$fs \
		--fault powercut --fs $fs --cut disk --trials "$cutn"
	run "4. cache-loss cut during recovery, $fs:" cut-recovery-$fs \
		--fault recovery-powercut --fs $fs --cut disk \
		--trials "$cut_rec_n"
done
runenv "4. cache-loss cuts, cp and sync:" cut-tree \
	FK_CUT=disk FK_TREECUT_KINDS=regression,cp,sync,nested \
	FK_TRIALS="$cut_tree_n" -- "$build/tests/test-tree-powercut"
runenv "4. cache-loss cuts, durable-replace, exec:" cut-files \
	FK_TRIALS="$cut_files_n" -- "$build/tests/test-cut-files"
runenv "4. cache-loss cuts, fk_fsync_batch:" cut-batch \
	FK_TRIALS="$cut_batch_n" -- "$build/tests/test-cut-fsync-batch"
fi
if has control; then
control "5. control (FLUSH ignored), store, ext4:" control-store n-lost \
	'^trials whose cut workload acknowledged a commit' \
	"$tool" --fault powercut --fs ext4 --cut disk --flush-ignore \
	--cut-mode drop --trials "$control_n"
control "5. control (FLUSH ignored), cp and sync:" control-tree n-lost \
	'^cut right after exit 0: [0-9]+ trials' \
	FK_CUT=disk FK_CUT_FLUSH=ignore FK_TREECUT_FS=ext4 \
	FK_TREECUT_KINDS=cp,sync FK_TRIALS=$(( (control_n + 8) / 9 )) \
	"$build/tests/test-tree-powercut"
control "5. control (FLUSH ignored), replace:" control-files lost-n \
	'^negative control: [0-9]+ of [0-9]+' \
	FK_CUT_FLUSH=ignore FK_CUTFILES_FS=ext4 FK_TRIALS="$control_n" \
	"$build/tests/test-cut-files"
control "5. control (FLUSH ignored), fk_fsync_batch:" control-batch \
	lost-n '^negative control: [0-9]+ of [0-9]+' \
	FK_CUT_FLUSH=ignore FK_CUTBATCH_FS=ext4 \
	FK_TRIALS=$(( (control_n + 1) / 2 )) \
	"$build/tests/test-cut-fsync-batch"
fi
if has replay; then
runenv "6. logged write replay, every promise:" replay \
	FK_REPLAY_POINTS="$replay_n" -- "$build/tests/test-replay"
fi
echo "---"
for l in "${summary[@]}"; do echo "$l"; done
echo "total: $((SECONDS - t0)) s"
exit $status
