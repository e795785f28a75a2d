#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/fsmark.sh - flushkit bench fsmark against the real fs_mark 3.3.
#
# Small-file create + write + fsync, 4 KiB files, 1, 4 and 16 threads:
#   fs_mark   -S 1                      (Debian package fsmark)
#   flushkit  -S 1                      (same method, our implementation)
#   flushkit  -S batch --sync-io=uring|threads|sequential
#   flushkit  -S async (each file's fsync submitted as soon as it is
#             written, reaped later: fk-async, fk-async-threads, and
#             fk-async@N with --jobs N instead of QD)
# alternated (one run of each variant on each DIR, then the next round),
# RUNS rounds, every run in a fresh empty directory; then per DIR a
# summary table of median files/s, the ratio to fs_mark -S 1 and the
# ratio to flushkit -S 1 at the same thread count (median and min-max of
# the per-round ratios).
# fio gives the device reference on the same directory: 4 KiB sequential
# and random writes with fsync=1 (one job), and random with 16 jobs.
#
# usage: bench/peers/fsmark.sh [DIR...]
#   DIR          where files go (default /var/tmp/fsmark-bench); emptied;
#                several (e.g. the root file system and loop-mounted
#                ext4 and xfs) are alternated within each round
# environment:
#   FLUSHKIT     flushkit command (default build/flushkit)
#   FILES        files per run, divided among the threads (default 2000)
#   RUNS         rounds (default 3)
#   THREADS      thread counts (default "1 4 16")
#   QD           --jobs of the batched runs (default 32)
#   VARIANTS     default "fs_mark fk-S1 fk-uring fk-threads fk-sequential"
#                (fs_mark is skipped, with its ratio, if not installed)
#   FIO_SECONDS  runtime of each fio job (default 5; 0 skips fio)
#   DEVICE       run on a lab disk of that model instead of the DIRs
#                (hdd, ssd, nvme, ram, ...; bench/peers/lib-disk.sh)
#   FRESH        file systems to make, e.g. "ext4 ext4-nojournal xfs":
#                one loop device each over a FRESH_SIZE (default 2G)
#                image in FRESH_DIR (default /var/tmp), made anew
#                (mkfs, mount) before EVERY run, after the DIRs; so no
#                run sees another's files (mounted on /mnt/fsm.XXXXXX) or ext4's recently-deleted
#                inodes (without a journal ext4 skips inodes deleted in
#                the last ~35 s on every create)
#   NO_DELETE    1: on the DIRs, every run gets a new directory and
#                nothing is deleted until the end, so that no run
#                follows a delete (with QUIET_WAIT, the root file system
#                without a journal after a quiet wait)
#   QUIET_WAIT   seconds to wait before the first round (default 0)
set -eu
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || [ -n "${FRESH:-}" ] || set -- /var/tmp/fsmark-bench
fk=${FLUSHKIT:-build/flushkit}
files=${FILES:-2000}
runs=${RUNS:-3}
threads=${THREADS:-"1 4 16"}
qd=${QD:-32}
fio_s=${FIO_SECONDS:-5}
variants=${VARIANTS:-"fs_mark fk-S1 fk-uring fk-threads fk-sequential"}

if ! command -v fs_mark >/dev/null; then
	echo "fs_mark not found (apt-get install fsmark): not run" >&2
	variants=$(echo "$variants" | tr ' ' '\n' | grep -vx fs_mark | tr '\n' ' ')
fi
[ -x "$fk" ] || { echo "$fk not built" >&2; exit 1; }
# shellcheck source=lib-disk.sh
. "$(dirname "$0")/lib-disk.sh"
fk_peer_device "$fk"
[ -n "$fk_peer_mnt" ] && set -- "$fk_peer_mnt"
works=() fresh=() loops=() imgs=()
for dir in "$@"; do
	mkdir -p "$dir"
	works+=("$(mktemp -d "$dir/run.XXXXXX")")
done
res=$(mktemp)
cleanup() {
	for m in "${fresh[@]}"; do umount "$m" 2>/dev/null || true; rmdir "$m"; done
	for l in "${loops[@]}"; do losetup -d "$l"; done
	rm -f "${imgs[@]}"
	rm -rf "${works[@]}" "$res"
	fk_peer_device_release
}
trap cleanup EXIT
# FRESH: the image, loop device and mount point of each file system
for fs in ${FRESH:-}; do
	case $fs in ext4|ext4-nojournal|xfs) ;; *) echo "FRESH: unknown '$fs' (ext4, ext4-nojournal, xfs)" >&2; exit 2;; esac
	img=$(mktemp "${FRESH_DIR:-/var/tmp}/fsmark-$fs.XXXXXX")
	imgs+=("$img")
	truncate -s "${FRESH_SIZE:-2G}" "$img"
	loops+=("$(losetup -f --show "$img")")
	# fs_mark takes directory names shorter than 40 bytes
	m=$(mktemp -d /mnt/fsm.XXXXXX)
	fresh+=("$m")
	works+=("$m")
done
nr_dirs=$(( ${#works[@]} - ${#fresh[@]} ))
remake() {	# index of works -> mkfs and mount it anew (FRESH only)
	local k=$(( $1 - nr_dirs )) fs
	[ "$k" -ge 0 ] || return 0
	fs=$(echo $FRESH | tr ' ' '\n' | sed -n "$((k + 1))p")
	umount "${fresh[$k]}" 2>/dev/null || true
	case $fs in
	ext4) mkfs.ext4 -q -F -E nodiscard "${loops[$k]}" ;;
	ext4-nojournal) mkfs.ext4 -q -F -E nodiscard -O ^has_journal "${loops[$k]}" ;;
	xfs) mkfs.xfs -q -f -K "${loops[$k]}" ;;
	esac
	mount "${loops[$k]}" "${fresh[$k]}"
}

# Files/sec of the first table row of fs_mark-style output on stdin.
fps() { awk '/^FSUse%/ { getline; print $4; exit }'; }

run_one() {	# work variant threads -> files/sec
	local work=$1 v=$2 t=$3 n=$(( files / $3 )) d=$1/d
	if [ "${NO_DELETE:-0}" = 1 ]; then
		d=$(mktemp -d "$1/d.XXXXXX")
	else
		rm -rf "$d"; mkdir "$d"
	fi
	sync -f "$work"
	case $v in
	# fs_mark writes fs_log.txt into its working directory.
	fs_mark) (cd "$work" && fs_mark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -S 1 -k 2>&1) | fps;;
	fk-S1) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -S 1 -k --no-results | fps;;
	fk-async) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -k \
		-S async --jobs "$qd" --no-results | fps;;
	fk-async@*) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -k \
		-S async --jobs "${v#fk-async@}" --no-results | fps;;
	fk-async-*) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -k \
		-S async --sync-io="${v#fk-async-}" --jobs "$qd" --no-results | fps;;
	fk-*) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -k \
		-S batch --sync-io="${v#fk-}" --jobs "$qd" --no-results | fps;;
	esac
	[ "${NO_DELETE:-0}" = 1 ] || rm -rf "$d"
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, files per run $files, 4 KiB, runs $runs, --jobs $qd"
for i in "${!works[@]}"; do
	remake "$i"
	echo "# directory $i: ${works[$i]%/*} on $(df --output=source,fstype "${works[$i]}" | tail -1 | tr -s ' ')$( [ "$i" -lt "$nr_dirs" ] || echo " (fresh: $(echo $FRESH | cut -d' ' -f$((i - nr_dirs + 1))), made anew before every run)")"
done
echo "# load average at start: $(cat /proc/loadavg)"
[ "${QUIET_WAIT:-0}" -gt 0 ] && sleep "$QUIET_WAIT"
for r in $(seq "$runs"); do
	for i in "${!works[@]}"; do
		for t in $threads; do
			for v in $variants; do
				remake "$i"
				f=$(run_one "${works[$i]}" "$v" "$t")
				echo "$i $t $v $r $f" >>"$res"
				echo "run $r dir $i threads $t $v: $f files/s (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
			done
		done
	done
done

echo "# load average at end: $(cat /proc/loadavg)"
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# median [min-max] of the per-round ratios of variant $3 to $4
ratios() {	# dir threads variant base
	awk -v i="$1" -v t="$2" -v v="$3" -v b="$4" '
		$1 == i && $2 == t && $3 == v { x[$4] = $5 }
		$1 == i && $2 == t && $3 == b { y[$4] = $5 }
		END { for (r in x) if (y[r] > 0) print x[r] / y[r] }' "$res" |
		sort -n | awk '{ a[NR] = $1 } END {
			if (!NR) { print "n/a"; exit }
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%.2f [%.2f-%.2f]\n", m, a[1], a[NR] }'
}

label() {	# index of works -> what it is
	if [ "$1" -lt "$nr_dirs" ]; then echo "${works[$1]%/*}"
	else echo "fresh $(echo $FRESH | cut -d' ' -f$(($1 - nr_dirs + 1)))"; fi
}
for i in "${!works[@]}"; do
	echo
	echo "# directory $i: $(label "$i")"
	printf '%-8s %-15s' threads variant
	for r in $(seq "$runs"); do printf ' %10s' "run$r"; done
	printf ' %10s %18s %18s\n' median "x fs_mark" "x flushkit -S 1"
	for t in $threads; do
		for v in $variants; do
			vals=$(awk -v i="$i" -v t="$t" -v v="$v" '$1 == i && $2 == t && $3 == v { print $5 }' "$res")
			med=$(echo "$vals" | median)
			printf '%-8s %-15s' "$t" "$v"
			for x in $vals; do printf ' %10s' "$x"; done
			printf ' %10s %18s %18s\n' "$med" "$(ratios "$i" "$t" "$v" fs_mark)" "$(ratios "$i" "$t" "$v" fk-S1)"
		done
	done
done

[ "$fio_s" -gt 0 ] || exit 0
command -v fio >/dev/null || { echo "fio not found: no device reference"; exit 0; }
echo
work=${works[0]}
echo "# device reference: fio on ${work%/*}, fsync=1 (an fsync after every write)"
printf '%-34s %10s %10s\n' job write_iops MB/s
fio_job() {	# name rw numjobs
	fio --name="$1" --directory="$work" --rw="$2" --bs=4k --size=64m \
		--numjobs="$3" --fsync=1 --ioengine=psync --time_based \
		--runtime="$fio_s" --group_reporting --output-format=json 2>/dev/null |
		jq -r '.jobs[0].write | "\(.iops) \(.bw_bytes)"' |
		awk -v n="$1" '{ printf "%-34s %10.0f %10.2f\n", n, $1, $2 / 1e6 }'
	rm -f "$work"/"$1".*
}
fio_job "seq-write-4k-fsync1-1job" write 1
fio_job "rand-write-4k-fsync1-1job" randwrite 1
fio_job "rand-write-4k-fsync1-16jobs" randwrite 16
