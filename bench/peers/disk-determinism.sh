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
# Before each set the lab disk's write cache is filled (16k random
# writes), so every run sees the steady state; the root disk's file is
# fallocate'd and attached with direct I/O (losetup --direct-io=on).
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

set_of_runs() { # LABEL DEV LOADED
	local label=$1 dev=$2 loaded=$3 v=()
	if [[ $dev == "$lab" ]]; then
		job "$dev" fill --number_ios=16384 >/dev/null
		"$FLUSHKIT" disk stats "$dev" >"$out/before"
	fi
	if ((loaded)); then
		stress-ng --cpu 2 --io 1 --timeout $((RUNS * (RUNTIME + 2) + 5)) \
			>/dev/null 2>&1 &
		stress=$!
		sleep 2
	fi
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	for ((i = 0; i < RUNS; i++)); do
		v+=("$(job "$dev" "$label-$i" --time_based --runtime="$RUNTIME")")
	done
	local loadend
	loadend=$(cut -d' ' -f1 /proc/loadavg)
	if ((loaded)); then
		kill "$stress" 2>/dev/null
		wait "$stress" 2>/dev/null || true
		stress=
	fi
	local late=""
	if [[ $dev == "$lab" ]]; then
		"$FLUSHKIT" disk stats "$dev" >"$out/after"
		late=$(python3 - "$out/before" "$out/after" <<'PY'
import sys
def rd(p):
    d = {}
    for l in open(p):
        f = l.split()
        if len(f) == 2:
            d[f[0]] = f[1]
    return d
a, b = rd(sys.argv[1]), rd(sys.argv[2])
n = int(b["replies"]) - int(a["replies"])
o = int(b["late_over_1ms"]) - int(a["late_over_1ms"])
print("%d of %d replies >1 ms late, late max %.1f ms (since create), sched_fifo %s/%s"
      % (o, n, int(b["late_max_ns"]) / 1e6, b["sched_fifo"], b.get("recv_sched_fifo", "?")))
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

lab=$("$FLUSHKIT" disk create --model="$model" --size 1G --slowdown "$SLOWDOWN")
rm -f "$ROOTFILE"
fallocate -l 1G "$ROOTFILE"
root=$(losetup --find --show --direct-io=on "$ROOTFILE")
echo "| set | IOPS of each run | mean | CV | load average (start -> end) | daemon |"
echo "|---|---|---|---|---|---|"
set_of_runs "$model, idle" "$lab" 0
set_of_runs "root disk loop, idle" "$root" 0
set_of_runs "$model, stress-ng --cpu 2 --io 1" "$lab" 1
set_of_runs "root disk loop, stress-ng --cpu 2 --io 1" "$root" 1
