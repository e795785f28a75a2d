#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit disk through the real stack (fio, direct I/O, libaio on the
# loop device): the models behave as disks do.
#   - NCQ: random reads at queue depth 32 beat depth 1 on hdd (the
#     model's busy time per read, and fio's IOPS) and on ssd (IOPS);
#   - hdd: sequential 4 KiB writes reach the medium in a fraction of the
#     time random ones take (the model's busy time and head movements
#     for the same number of writes, flushed);
#   - hdd: an fsync costs the cache flush: with 32 MiB in the cache it
#     takes at least 5 times what it takes after one 4 KiB write.
# No timing thresholds: ratios with wide margins (the models give 2.3x,
# ~10x, >50x and ~12x), from the model's own stats where they exist
# (deterministic for a request sequence), so a loaded machine does not
# break it.  About 20 s.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -c /dev/fuse ] && [ -e /dev/loop-control ] || skip "needs /dev/fuse and loop devices"
fk=${FLUSHKIT:?}
[ -x "$(dirname "$fk")/flushkit-diskd" ] || skip "no flushkit-diskd"
command -v fio >/dev/null || skip "no fio"
flushcost=$(dirname "$fk")/tests/tools/fk-flush-cost
[ -x "$flushcost" ] || fail "no $flushcost"
tmp=${TMPDIR:-/tmp}/t-disk-behaviour.$$
mkdir -p "$tmp"
n=t-diskb-$$
cleanup() {
	for d in hdd ssd seq rnd fs; do
		"$fk" disk destroy "$n-$d" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

dstat() { # DEV NAME: one figure of disk stats
	"$fk" disk stats "$1" | awk -v k="$2" '$1 == k { print $2 }'
}
# fio JOB on DEV: RW QD NUMBER_IOS [extra]; prints the job's IOPS
fiorun() {
	local dev=$1 rw=$2 qd=$3 nios=$4
	shift 4
	fio --name=b --filename="$dev" --direct=1 --ioengine=libaio \
		--rw="$rw" --bs=4k --iodepth="$qd" --number_ios="$nios" \
		--randrepeat=1 --norandommap --output-format=json "$@" \
		--output="$tmp/fio.json" >/dev/null || fail "fio $rw QD$qd on $dev"
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]
d=j["read"] if j["read"]["io_bytes"] else j["write"]; print(d["iops"])' \
		"$tmp/fio.json"
}
ge() { # A B RATIO: A >= RATIO * B
	python3 -c 'import sys; a,b,r=map(float,sys.argv[1:]); sys.exit(0 if a >= r*b else 1)' "$@"
}
ratio() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$@"; }

# hdd NCQ: 100 reads at QD1, then 400 at QD32; busy time per read.
dh=$("$fk" disk create --model=hdd --size 1G --name "$n-hdd") || fail "create hdd"
i1=$(fiorun "$dh" randread 1 100)
b1=$(dstat "$dh" busy_ns) r1=$(dstat "$dh" reads)
i32=$(fiorun "$dh" randread 32 400)
b32=$(($(dstat "$dh" busy_ns) - b1)) r32=$(($(dstat "$dh" reads) - r1))
[ "$r1" -ge 100 ] && [ "$r32" -ge 400 ] || fail "hdd: the daemon saw $r1 and $r32 reads"
echo "hdd randread: QD1 $i1 IOPS, $((b1 / r1)) ns busy a read; QD32 $i32 IOPS, $((b32 / r32)) ns busy a read"
ge "$((b1 / r1))" "$((b32 / r32))" 1.5 ||
	fail "hdd: QD32 busy time a read $((b32 / r32)) ns not 1.5x below QD1's $((b1 / r1))"
ge "$i32" "$i1" 1.5 || fail "hdd: QD32 $i32 IOPS not 1.5x QD1's $i1"
"$fk" disk destroy "$dh" >/dev/null || fail "destroy hdd"

# ssd NCQ, slowed down 20x so the transport is not the limit.
ds=$("$fk" disk create --model=ssd --size 1G --slowdown 20 --name "$n-ssd") || fail "create ssd"
i1=$(fiorun "$ds" randread 1 300)
i32=$(fiorun "$ds" randread 32 3000)
echo "ssd randread (slowdown 20): QD1 $i1 IOPS, QD32 $i32 IOPS ($(ratio "$i32" "$i1")x)"
ge "$i32" "$i1" 1.5 || fail "ssd: QD32 $i32 IOPS not 1.5x QD1's $i1"
"$fk" disk destroy "$ds" >/dev/null || fail "destroy ssd"

# hdd: 300 sequential and 300 random 4 KiB writes, each then flushed:
# the model's busy time and head movements for them.
medium() { # RW: "busy_ns seeks" of 300 writes of RW, flushed
	local d
	d=$("$fk" disk create --model=hdd --size 1G --name "$n-$2") || fail "create hdd ($1)"
	fiorun "$d" "$1" 32 300 --end_fsync=1 >/dev/null
	[ "$(dstat "$d" writes)" -ge 300 ] && [ "$(dstat "$d" fsyncs)" -ge 1 ] ||
		fail "hdd ($1): writes or the flush not seen"
	echo "$(dstat "$d" busy_ns) $(dstat "$d" seeks)"
	"$fk" disk destroy "$d" >/dev/null || fail "destroy hdd ($1)"
}
read -r bs ss <<<"$(medium write seq)"
read -r br sr <<<"$(medium randwrite rnd)"
echo "hdd 300 writes of 4 KiB, flushed: sequential $bs ns busy, $ss seeks; random $br ns busy, $sr seeks"
ge "$br" "$bs" 3 || fail "hdd: random writes' busy time $br ns not 3x the sequential $bs"
ge "$sr" "$ss" 3 || fail "hdd: random writes' seeks $sr not 3x the sequential $ss"

# hdd: an fsync costs the cache flush (slowdown 2: host noise halved).
df=$("$fk" disk create --model=hdd --size 1G --slowdown 2 --name "$n-fs") || fail "create hdd (fsync)"
"$flushcost" --repeat 3 "$df" 4K 4K 1 >"$tmp/small" || fail "fk-flush-cost 4K"
"$flushcost" --repeat 3 "$df" 32M 1M 32 >"$tmp/big" || fail "fk-flush-cost 32M"
fs=$(awk '$1 == "fsync_ms_mean" { print $2 }' "$tmp/small")
fb=$(awk '$1 == "fsync_ms_mean" { print $2 }' "$tmp/big")
echo "hdd fsync (slowdown 2): after 4 KiB $fs ms, after 32 MiB $fb ms ($(ratio "$fb" "$fs")x)"
ge "$fb" "$fs" 5 || fail "hdd: fsync after 32 MiB ($fb ms) not 5x that after 4 KiB ($fs ms)"
[ "$(dstat "$df" m2_violations)" = 0 ] || fail "hdd: the model broke M2"
"$fk" disk destroy "$df" >/dev/null || fail "destroy hdd (fsync)"
echo "PASS"
exit 0
