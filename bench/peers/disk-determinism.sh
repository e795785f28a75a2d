#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/disk-determinism.sh - how repeatable a lab disk is, beside
# a loop device on the root disk, with and without CPU load: the same fio
# job (4 KiB random writes, QD8, RUNTIME s) RUNS times on each, first on
# an idle machine, then while `stress-ng --cpu 2 --io 1` runs (started
# for each set, stopped after it).  Prints, for each of the four sets,
# the IOPS of every run, their mean and coefficient of variation
# (stdev / mean, sample stdev), and for the lab disk the daemon's
# lateness over the set.  For docs/disk.md "Calibration through the real
# stack (fio)".
#
# usage: bench/peers/disk-determinism.sh [MODEL]     (default hdd)
# environment: RUNTIME (10), RUNS (5), SLOWDOWN (1), ROOTFILE (a 1 GiB
#   file it makes, /var/tmp/fk-determinism.img), FLUSHKIT (build/flushkit)
#
# Each lab-disk run is on a fresh disk whose write cache is filled
# first (16k random writes, another seed than the measured job's), so
# every run starts from the same state; the root disk's file is
# fallocate'd and attached with direct I/O (losetup --direct-io=on).
# SETS: only these sets (model-idle root-idle model-loaded root-loaded).
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
FLUSHKIT=${FLUSHKIT:-$here/build/flushkit}
RUNTIME=${RUNTIME:-10}
RUNS=${RUNS:-5}
SLOWDOWN=${SLOWDOWN:-1}
ROOTFILE=${ROOTFILE:-/var/tmp/fk-determinism.img}
model=${1:-hdd}
out=$(mktemp -d)
lab= root= stress=
cleanup() {
	[[ -n $stress ]] && kill "$stress" 2>/dev/null && wait "$stress" 2>/dev/null
	[[ -n $lab ]] && "$FLUSHKIT" disk destroy "$lab" >/dev/null 2>&1
	[[ -n $root ]] && losetup -d "$root" 2>/dev/null
	rm -f "$ROOTFILE"
	rm -rf "$out"
}
trap cleanup EXIT

job() { # DEV NAME [extra]: prints the IOPS
	local dev=$1 name=$2
	shift 2
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=8 --size=1G --norandommap \
		--randrepeat=1 --output-format=json --output="$out/$name.json" \
		"$@" >/dev/null
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["write"]["iops"])' \
		"$out/$name.json"
}

# One run on a fresh lab disk: the cache filled by 16k random writes
# (seed 1), then the measured job (seed 2).  A disk kept across runs
# would not do: what the run rewrites of what is still cached (no seek)
# depends on how far the destage got before it, i.e. on the history.
labrun() { # NAME: prints the IOPS; appends the disk's stats to $out/lab
	lab=$("$FLUSHKIT" disk create --model="$model" --size 1G \
		--slowdown "$SLOWDOWN")
	job "$lab" fill --number_ios=16384 --randseed=1 >/dev/null
	job "$lab" "$1" --time_based --runtime="$RUNTIME" --randseed=2
	"$FLUSHKIT" disk stats "$lab" >>"$out/lab" 2>/dev/null
	"$FLUSHKIT" disk destroy "$lab" >/dev/null
	lab=
}

set_of_runs() { # LABEL DEV LOADED (DEV "lab": a fresh lab disk a run)
	local label=$1 dev=$2 loaded=$3 v=()
	if [[ -n ${SETS:-} && " $SETS " != *" $4 "* ]]; then
		return 0
	fi
	: >"$out/lab"
	if ((loaded)); then
		stress-ng --cpu 2 --io 1 --timeout $((RUNS * (RUNTIME + 15) + 5)) \
			>/dev/null 2>&1 &
		stress=$!
		sleep 2
	fi
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	for ((i = 0; i < RUNS; i++)); do
		if [[ $dev == lab ]]; then
			v+=("$(labrun "run-$i")")
		else
			v+=("$(job "$dev" "run-$i" --time_based \
				--runtime="$RUNTIME" --randseed=2)")
		fi
	done
	local loadend
	loadend=$(cut -d' ' -f1 /proc/loadavg)
	if ((loaded)); then
		kill "$stress" 2>/dev/null
		wait "$stress" 2>/dev/null || true
		stress=
	fi
	local late=""
	if [[ $dev == lab ]]; then
		late=$(python3 - "$out/lab" <<'PY'
import sys
n = o = mx = 0
fifo = set()
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) != 2:
        continue
    if f[0] == "replies": n += int(f[1])
    if f[0] == "late_over_1ms": o += int(f[1])
    if f[0] == "late_max_ns": mx = max(mx, int(f[1]))
    if f[0] in ("sched_fifo", "recv_sched_fifo"): fifo.add(f[0] + " " + f[1])
print("%d of %d replies >1 ms late (fills included), late max %.1f ms, %s"
      % (o, n, mx / 1e6, ", ".join(sorted(fifo))))
PY
)
	fi
	python3 - "$label" "$load" "$loadend" "$late" "${v[@]}" <<'PY'
import statistics, sys
label, l0, l1, late = sys.argv[1:5]
v = [float(x) for x in sys.argv[5:]]
m = statistics.mean(v)
cv = statistics.stdev(v) / m * 100
print("| %s | %s | %.1f | %.2f%% | %s -> %s | %s |" % (
    label, ", ".join("%.1f" % x for x in v), m, cv, l0, l1, late))
PY
}

rm -f "$ROOTFILE"
fallocate -l 1G "$ROOTFILE"
root=$(losetup --find --show --direct-io=on "$ROOTFILE")
echo "| set | IOPS of each run | mean | CV | load average (start -> end) | daemon |"
echo "|---|---|---|---|---|---|"
set_of_runs "$model, idle" lab 0 model-idle
set_of_runs "root disk loop, idle" "$root" 0 root-idle
set_of_runs "$model, stress-ng --cpu 2 --io 1" lab 1 model-loaded
set_of_runs "root disk loop, stress-ng --cpu 2 --io 1" "$root" 1 root-loaded
