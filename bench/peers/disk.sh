#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/disk.sh - the calibration figures of a block device through
# fio, for docs/disk.md "Calibration through the real stack (fio)".
#
#   randread  4 KiB, QD1 and QD32      (IOPS)
#   randwrite 4 KiB, QD1 and QD32      (IOPS)
#   seqwrite  1 MiB, QD1               (MB/s, 1e6 bytes)
#   fsync     4 KiB random write + fsync, QD1 (mean fsync latency, ms)
# and, on a lab disk only (--model):
#   FLUSH, cache full (seq / 4k rand)  the model's cache size written at
#                                      QD32, every write completed, then
#                                      one fsync (tests/tools/fk-flush-cost;
#                                      mean of 3, ms)
#   SLC runs out after, seqwrite past  1 MiB sequential at QD4 over twice
#                                      the SLC buffer (ssd, nvme; s, MB/s)
# Direct I/O (libaio), one job each, RUNTIME seconds.  The device is
# WRITTEN: everything on it is lost.
#
# usage: bench/peers/disk.sh DEVICE
#        bench/peers/disk.sh --model=MODEL [--slowdown K] [--slc SIZE]
#                            [--slc-slowdown K2] [--seq-slowdown K3]
#
# With --model a lab disk (flushkit disk create --model=MODEL --size SIZE
# --slowdown K) is made for each row, measured and destroyed; its figures
# are scaled back by K (IOPS and MB/s times K, latencies divided by K)
# and printed beside the model's simulated figure (fk-disk-sim, the
# same rows in simulated time) and the real device's published target,
# with the daemon's lateness for the row (disk stats: replies more than
# 1 ms late, the latest, the daemon's CPU share): where those are high
# the daemon, not the model, set the figure.  The SLC rows run on a disk
# of model MODEL:slc=SIZE (the buffer scaled down so that it runs out in
# seconds; the target scaled the same way) at slowdown K2 (sequential
# 1 MiB writes need less of it than 4 KiB ones), and the 1 MiB
# sequential row at K3 (default K2): at a high K its write buffer would
# not fill in a short run (nvme), at a low one the host's time per
# request shows (ssd: use K3 = K).
#
# environment:
#   RUNTIME   seconds per fio job (default 10)
#   RAMP      seconds of fio ramp before the rows on hdd and before the
#             sequential row on any lab disk (default 2); hdd's
#             random-write rows first fill its cache (16k writes)
#   ROWS      only these rows (names: randread-qd1 randread-qdhi
#             randwrite-qd1 randwrite-qdhi seqwrite-1m fsync-4k flush-seq
#             flush-rand slc; default all)
#   SIZE      the lab disk's size (default 2G; the SLC row's is 2 x --slc)
#   QDHI      the deep queue (default 32; 128 for nvme, as Samsung's
#             QD32 x 4 threads)
#   FIO, FLUSHKIT, FLUSHCOST, DISKSIM  the programs (default fio and the
#             build tree's build/flushkit, build/tests/tools/fk-*)
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
FIO=${FIO:-fio}
FLUSHKIT=${FLUSHKIT:-$here/build/flushkit}
FLUSHCOST=${FLUSHCOST:-$here/build/tests/tools/fk-flush-cost}
DISKSIM=${DISKSIM:-$here/build/tests/tools/fk-disk-sim}
RUNTIME=${RUNTIME:-10}
RAMP=${RAMP:-2}
SIZE=${SIZE:-2G}

model= slowdown=1 slc= slc_slowdown= seq_slowdown=
dev=
while (($#)); do
	case $1 in
	--model=*) model=${1#--model=} ;;
	--slowdown) slowdown=$2; shift ;;
	--slowdown=*) slowdown=${1#*=} ;;
	--slc) slc=$2; shift ;;
	--slc=*) slc=${1#*=} ;;
	--slc-slowdown) slc_slowdown=$2; shift ;;
	--slc-slowdown=*) slc_slowdown=${1#*=} ;;
	--seq-slowdown) seq_slowdown=$2; shift ;;
	--seq-slowdown=*) seq_slowdown=${1#*=} ;;
	-*) echo "$0: unknown option $1" >&2; exit 2 ;;
	*) dev=$1 ;;
	esac
	shift
done
if [[ -z $model && ( -z $dev || ! -b $dev ) ]]; then
	echo "usage: $0 DEVICE (a block device; it is overwritten)" >&2
	echo "       $0 --model=MODEL [--slowdown K] [--slc SIZE] [--slc-slowdown K2]" >&2
	exit 2
fi
case $model in
nvme) QDHI=${QDHI:-128} ;;
*) QDHI=${QDHI:-32} ;;
esac
slc_slowdown=${slc_slowdown:-$slowdown}
seq_slowdown=${seq_slowdown:-$slc_slowdown}
out=$(mktemp -d)
labdev=
cleanup() {
	[[ -n $labdev ]] && "$FLUSHKIT" disk destroy "$labdev" >/dev/null 2>&1
	rm -rf "$out"
}
trap cleanup EXIT

# fio on $target: NAME RW BS QD [extra fio options]
fiojob() {
	local name=$1 rw=$2 bs=$3 qd=$4
	shift 4
	"$FIO" --name="$name" --filename="$target" --direct=1 \
		--ioengine=libaio --rw="$rw" --bs="$bs" --iodepth="$qd" \
		--randrepeat=1 --norandommap --group_reporting \
		--output-format=json --output="$out/$name.json" "$@" \
		>/dev/null
}

timed() { # NAME RW BS QD [extra]: a time-based job over the device
	fiojob "$@" --time_based --runtime="$RUNTIME"
}

# A lab disk for one row (model spec, slowdown); its stats after the row.
disk_up() { # SPEC K [SIZE]
	labdev=$("$FLUSHKIT" disk create --model="$1" --size "${3:-$SIZE}" \
		--slowdown "$2")
	target=$labdev
}
disk_down() { # NAME
	"$FLUSHKIT" disk stats "$labdev" >"$out/$1.stats"
	"$FLUSHKIT" disk destroy "$labdev" >/dev/null
	labdev=
}

# row NAME SPEC K COMMAND...: the COMMAND on a fresh lab disk (or DEVICE)
row() {
	local name=$1 spec=$2 k=$3
	shift 3
	if [[ -n ${ROWS:-} && " $ROWS " != *" $name "* ]]; then
		return 0
	fi
	if [[ -n $model ]]; then
		disk_up "$spec" "$k" "${rowsize:-}"
		"$@"
		disk_down "$name"
	else
		"$@"
	fi
	echo "$name $k" >>"$out/rows"
}

if [[ -z $model ]]; then
	if grep -q "^$(readlink -f "$dev") " /proc/mounts; then
		echo "$0: $dev is mounted; refusing to write on it" >&2
		exit 1
	fi
	target=$dev
fi
cache=0
if [[ -n $model ]]; then
	# The model's write cache size, from a disk's stats.
	disk_up "$model" "$slowdown"
	cache=$("$FLUSHKIT" disk stats "$labdev" | awk '$1 == "cache_limit" { print $2 }')
	"$FLUSHKIT" disk destroy "$labdev" >/dev/null
	labdev=
fi
ramp=()
[[ $model == hdd ]] && ramp=(--ramp_time="$RAMP")
# hdd's random writes are measured past the cache's fill (its 64 MB take
# 16k writes, then the rate is the medium's), as fk-disk-sim does.
prefilled() { # NAME RW BS QD [extra]
	if [[ $model == hdd ]]; then
		fiojob prefill randwrite 4k 32 --number_ios=$((cache / 4096))
	fi
	timed "$@"
}

row randread-qd1 "$model" "$slowdown" timed randread-qd1 randread 4k 1 \
	"${ramp[@]}"
row randread-qdhi "$model" "$slowdown" timed randread-qdhi randread 4k \
	"$QDHI" "${ramp[@]}"
row randwrite-qd1 "$model" "$slowdown" prefilled randwrite-qd1 randwrite \
	4k 1 "${ramp[@]}"
row randwrite-qdhi "$model" "$slowdown" prefilled randwrite-qdhi \
	randwrite 4k "$QDHI" "${ramp[@]}"
# 1 MiB sequential: past the write buffer's fill (fk-disk-sim: past the
# first 256 MiB), so on a lab disk after a ramp of RAMP s.
seqramp=()
[[ -n $model ]] && seqramp=(--ramp_time="$RAMP")
row seqwrite-1m "$model" "$seq_slowdown" timed seqwrite-1m write 1M 1 \
	"${seqramp[@]}"
row fsync-4k "$model" "$slowdown" timed fsync-4k randwrite 4k 1 --fsync=1

if [[ -n $model ]]; then
	flushcost() { # NAME [--random] BS
		local name=$1
		shift
		"$FLUSHCOST" --repeat 3 ${2:+$1} "$target" "$cache" "${2:-$1}" 32 \
			>"$out/$name.txt"
	}
	row flush-seq "$model" "$slowdown" flushcost flush-seq 1M
	if [[ $model == hdd ]]; then
		# 16k random 4 KiB writes take the model 106 s to flush.
		[[ -z ${ROWS:-} ]] && echo "flush-rand skipped" >>"$out/rows"
	else
		row flush-rand "$model" "$slowdown" flushcost flush-rand --random 4K
	fi
	if [[ -n $slc ]]; then
		slcb=$(numfmt --from=iec "$slc")
		rowsize=$((2 * slcb)) row slc "$model:slc=$slc" "$slc_slowdown" \
			fiojob slc write 1M 4 --size=$((2 * slcb)) \
			--write_bw_log="$out/slc" --log_avg_msec=0
	fi
	"$DISKSIM" --markdown "$model" >"$out/sim.md" 2>/dev/null
	if [[ -n $slc ]]; then
		"$DISKSIM" --markdown "$model:slc=$slc" >"$out/simslc.md" 2>/dev/null
	fi
fi

python3 - "$out" "${dev:-$model}" "$QDHI" "$model" "${slcb:-0}" <<'PY'
import glob, json, os, sys
out, dev, qdhi, model, slcb = sys.argv[1:6]
slcb = int(slcb)
rows = {}
for line in open(os.path.join(out, "rows")):
    f = line.split()
    rows[f[0]] = None if f[1] == "skipped" else float(f[1])

def fio(name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)["jobs"][0]

def stats(name):
    p = os.path.join(out, name + ".stats")
    if not os.path.exists(p):
        return None
    s = {}
    for line in open(p):
        f = line.split()
        if len(f) == 2:
            s[f[0]] = f[1]
    return s

def sim(fname):
    """figure -> (value, target, source) of an fk-disk-sim --markdown."""
    t = {}
    p = os.path.join(out, fname)
    if not os.path.exists(p):
        return t
    for line in open(p):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) != 6 or c[0] in ("model", "---"):
            continue
        v = float(c[2].split()[0])
        tv = float(c[3]) if c[3] != "-" else None
        t[c[1]] = (v, tv, c[5])
    return t

simt = sim("sim.md")
# the SLC rows from the scaled-down buffer's table, the rest from the
# model's own
simt.update({k: v for k, v in sim("simslc.md").items() if "SLC" in k})
qfig = "QD32"  # fk-disk-sim's name for the deep-queue rows

res = []  # (figure, value, unit, k, rowname)
def add(fig, name, value, unit, up):
    k = rows[name]
    if k is None:
        res.append((fig, None, unit, None, name))
        return
    # scale back by the slowdown: rates times k, times divided by k
    res.append((fig, value * k if up else value / k, unit, k, name))

for fig, name, get, unit, up in (
        ("randread 4k QD1", "randread-qd1", lambda j: j["read"]["iops"], "IOPS", 1),
        ("randread 4k " + qfig, "randread-qdhi", lambda j: j["read"]["iops"], "IOPS", 1),
        ("randwrite 4k QD1", "randwrite-qd1", lambda j: j["write"]["iops"], "IOPS", 1),
        ("randwrite 4k " + qfig, "randwrite-qdhi", lambda j: j["write"]["iops"], "IOPS", 1),
        ("seqwrite 1M QD1", "seqwrite-1m", lambda j: j["write"]["bw_bytes"] / 1e6, "MB/s", 1),
        ("fsync 4k write", "fsync-4k", lambda j: j["sync"]["lat_ns"]["mean"] / 1e6, "ms", 0)):
    if name in rows:
        add(fig, name, get(fio(name)), unit, up)

def flushms(name):
    for line in open(os.path.join(out, name + ".txt")):
        if line.startswith("fsync_ms_mean"):
            return float(line.split()[1])

if "flush-seq" in rows:
    add("FLUSH, cache full (seq)", "flush-seq", flushms("flush-seq"), "ms", 0)
if "flush-rand" in rows:
    add("FLUSH, cache full (4k rand)", "flush-rand",
        flushms("flush-rand") if rows["flush-rand"] else 0, "ms", 0)

if "slc" in rows:
    # fio's per-I/O bandwidth log: completion time (ms), one line per
    # 1 MiB write.  fk-disk-sim's rule: buckets of slc/16 bytes; the
    # first 4 buckets' rate; the run-out is the end of the bucket before
    # the first (from the 6th) below 0.8 of it; past it: the last 8.
    k = rows["slc"]
    ts = sorted(float(l.split(",")[0]) / 1e3 / k
                for l in open(glob.glob(os.path.join(out, "slc_bw*.log"))[0]))
    per = (slcb // 16) >> 20  # writes per bucket
    b = [ts[i] for i in range(per - 1, len(ts), per)]
    bucket = per * (1 << 20) / 1e6
    first = 4 * bucket / b[3]
    runout = None
    for i in range(5, len(b)):
        if bucket / (b[i] - b[i - 1]) < 0.8 * first:
            runout = b[i - 1]
            break
    res.append(("SLC runs out after", runout if runout else float("nan"), "s", k, "slc"))
    past = 7 * bucket / (b[-1] - b[-8])
    res.append(("seqwrite 1M past SLC", past, "MB/s", k, "slc"))

def pct(a, b):
    return "%+.1f%%" % (100.0 * (a - b) / b) if a is not None and b else "-"

if not model:
    print("| device | figure | value |")
    print("|---|---|---|")
    for fig, v, unit, k, name in res:
        print("| %s | %s | %.4g %s |" % (dev, fig.replace("QD32", "QD" + qdhi), v, unit))
    sys.exit(0)

print("| model | figure | real stack | simulated | target | vs target | vs simulated | K | late >1 ms | late max | daemon CPU |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for fig, v, unit, k, name in res:
    sv, tv, src = simt.get(fig, (None, None, ""))
    st = stats(name)
    if st and int(st.get("replies", "0")):
        late = "%.2f%%" % (100.0 * int(st["late_over_1ms"]) / int(st["replies"]))
        lmax = "%.1f ms" % (int(st["late_max_ns"]) / 1e6)
        cpu = "%.0f%%" % (100.0 * int(st["cpu_ns"]) / max(1, int(st["wall_ns"])))
    else:
        late = lmax = cpu = "-"
    shown = fig.replace("QD32", "QD" + qdhi)
    if v is None:
        print("| %s | %s | not run | %s | %s | - | - | - | - | - | - |" % (
            model, shown, "%.4g %s" % (sv, unit) if sv is not None else "-",
            "%.4g" % tv if tv else "-"))
        continue
    print("| %s | %s | %.4g %s | %s | %s | %s | %s | %g | %s | %s | %s |" % (
        model, shown, v, unit,
        "%.4g %s" % (sv, unit) if sv is not None else "-",
        "%.4g" % tv if tv else "-", pct(v, tv), pct(v, sv), k, late, lmax, cpu))
PY
