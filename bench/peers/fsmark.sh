#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/fsmark.sh - flushkit bench fsmark against the real fs_mark 3.3.
#
# Small-file create + write + fsync, 4 KiB files, 1, 4 and 16 threads:
#   fs_mark   -S 1                      (Debian package fsmark)
#   flushkit  -S 1                      (same method, our implementation)
#   flushkit  -S batch --sync-io=uring|threads|sequential
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
set -eu
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- /var/tmp/fsmark-bench
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
works=()
for dir in "$@"; do
	mkdir -p "$dir"
	works+=("$(mktemp -d "$dir/run.XXXXXX")")
done
res=$(mktemp)
trap 'rm -rf "${works[@]}" "$res"; fk_peer_device_release' EXIT

# Files/sec of the first table row of fs_mark-style output on stdin.
fps() { awk '/^FSUse%/ { getline; print $4; exit }'; }

run_one() {	# work variant threads -> files/sec
	local work=$1 v=$2 t=$3 n=$(( files / $3 )) d=$1/d
	rm -rf "$d"; mkdir "$d"
	sync -f "$work"
	case $v in
	# fs_mark writes fs_log.txt into its working directory.
	fs_mark) (cd "$work" && fs_mark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -S 1 -k 2>&1) | fps;;
	fk-S1) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -S 1 -k --no-results | fps;;
	fk-*) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -k \
		-S batch --sync-io="${v#fk-}" --jobs "$qd" --no-results | fps;;
	esac
	rm -rf "$d"
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, files per run $files, 4 KiB, runs $runs, --jobs $qd"
for i in "${!works[@]}"; do
	echo "# directory $i: ${works[$i]%/*} on $(df --output=source,fstype "${works[$i]}" | tail -1 | tr -s ' ')"
done
for r in $(seq "$runs"); do
	for i in "${!works[@]}"; do
		for t in $threads; do
			for v in $variants; do
				f=$(run_one "${works[$i]}" "$v" "$t")
				echo "$i $t $v $r $f" >>"$res"
				echo "run $r dir $i threads $t $v: $f files/s" >&2
			done
		done
	done
done

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

for i in "${!works[@]}"; do
	echo
	echo "# directory $i: ${works[$i]%/*}"
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
