#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/disk.sh - the calibration figures of a block device through
# fio, for docs/disk.md: a lab disk (flushkit disk create --model=M) is
# measured here beside the real device it imitates.
#
#   randread  4 KiB, QD1 and QD32      (IOPS)
#   randwrite 4 KiB, QD1 and QD32      (IOPS)
#   seqwrite  1 MiB, QD1               (MB/s, 1e6 bytes)
#   fsync     4 KiB random write + fsync, QD1 (mean fsync latency, ms)
# Direct I/O (libaio), one job each, RUNTIME seconds, over the first SPAN
# of the device; the device is WRITTEN: everything on it is lost.
#
# usage: bench/peers/disk.sh DEVICE
# environment:
#   RUNTIME  seconds per job (default 20)
#   SPAN     bytes of the device used (default: all of it)
#   QDHI     the deep queue (default 32; 128 for an NVMe model, as
#            Samsung's QD32 x 4 threads)
#   FIO      the fio command (default fio)
#
# Not yet run against flushkit disk (the daemon is being written in
# parallel); tried on a loop device only.  The FLUSH cost with a full
# cache and the SLC run-out are not measured here: they come from the
# simulated-time table (tests/tools/fk-disk-sim) and, for a lab disk,
# from 'flushkit disk stats'.
set -euo pipefail

dev=${1:-}
if [[ -z $dev || ! -b $dev ]]; then
	echo "usage: $0 DEVICE (a block device; it is overwritten)" >&2
	exit 2
fi
if grep -q "^$(readlink -f "$dev") " /proc/mounts; then
	echo "$0: $dev is mounted; refusing to write on it" >&2
	exit 1
fi
FIO=${FIO:-fio}
RUNTIME=${RUNTIME:-20}
QDHI=${QDHI:-32}
size=$(blockdev --getsize64 "$dev")
SPAN=${SPAN:-$size}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

job() { # NAME RW BS QD [extra fio options]
	local name=$1 rw=$2 bs=$3 qd=$4
	shift 4
	"$FIO" --name="$name" --filename="$dev" --direct=1 \
		--ioengine=libaio --rw="$rw" --bs="$bs" --iodepth="$qd" \
		--size="$SPAN" --time_based --runtime="$RUNTIME" \
		--randrepeat=1 --norandommap --group_reporting \
		--output-format=json --output="$out/$name.json" "$@" \
		>/dev/null
}

job randread-qd1 randread 4k 1
job randread-qdhi randread 4k "$QDHI"
job randwrite-qd1 randwrite 4k 1
job randwrite-qdhi randwrite 4k "$QDHI"
job seqwrite-1m write 1M 1
job fsync-4k randwrite 4k 1 --fsync=1

python3 - "$out" "$dev" "$QDHI" <<'PY'
import json, sys, os
out, dev, qdhi = sys.argv[1], sys.argv[2], sys.argv[3]
def j(name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)["jobs"][0]
rows = [
    ("randread 4k QD1", j("randread-qd1")["read"]["iops"], "IOPS"),
    ("randread 4k QD" + qdhi, j("randread-qdhi")["read"]["iops"], "IOPS"),
    ("randwrite 4k QD1", j("randwrite-qd1")["write"]["iops"], "IOPS"),
    ("randwrite 4k QD" + qdhi, j("randwrite-qdhi")["write"]["iops"], "IOPS"),
    ("seqwrite 1M QD1", j("seqwrite-1m")["write"]["bw_bytes"] / 1e6, "MB/s"),
    ("fsync 4k write", j("fsync-4k")["sync"]["lat_ns"]["mean"] / 1e6, "ms"),
]
print("| device | figure | value |")
print("|---|---|---|")
for what, v, unit in rows:
    print("| %s | %s | %.4g %s |" % (dev, what, v, unit))
PY
