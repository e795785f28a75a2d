#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/peers/fsmark.sh - flushkit bench fsmark against the real fs_mark 3.3.
#
# Small-file create + write + fsync, 4 KiB files, 1, 4 and 16 threads:
#   fs_mark   -S 1                      (Debian package fsmark)
#   flushkit  -S 1                      (same method, our implementation)
#   flushkit  -S batch --sync-io=uring|threads|sequential
# alternated (one run of each variant, then the next round), RUNS rounds,
# every run in a fresh empty directory; then a summary table of median
# files/s and the ratio to fs_mark -S 1 at the same thread count.
# fio gives the device reference on the same directory: 4 KiB sequential
# and random writes with fsync=1 (one job), and random with 16 jobs.
#
# usage: bench/peers/fsmark.sh [DIR]
#   DIR          where files go (default /var/tmp/fsmark-bench); emptied
# environment:
#   FLUSHKIT     flushkit command (default build/flushkit)
#   FILES        files per run, divided among the threads (default 2000)
#   RUNS         rounds (default 3)
#   THREADS      thread counts (default "1 4 16")
#   QD           --queue-depth of the batched runs (default 32)
#   FIO_SECONDS  runtime of each fio job (default 5; 0 skips fio)
set -eu
cd "$(dirname "$0")/../.."
dir=${1:-/var/tmp/fsmark-bench}
fk=${FLUSHKIT:-build/flushkit}
files=${FILES:-2000}
runs=${RUNS:-3}
threads=${THREADS:-"1 4 16"}
qd=${QD:-32}
fio_s=${FIO_SECONDS:-5}

command -v fs_mark >/dev/null || { echo "fs_mark not found (apt-get install fsmark)" >&2; exit 1; }
[ -x "$fk" ] || { echo "$fk not built" >&2; exit 1; }
mkdir -p "$dir"
work=$(mktemp -d "$dir/run.XXXXXX")
res=$(mktemp)
trap 'rm -rf "$work" "$res"' EXIT

variants="fs_mark fk-S1 fk-uring fk-threads fk-sequential"

# Files/sec of the first table row of fs_mark-style output on stdin.
fps() { awk '/^FSUse%/ { getline; print $4; exit }'; }

run_one() {	# variant threads -> files/sec
	local v=$1 t=$2 n=$(( files / $2 )) d=$work/d
	rm -rf "$d"; mkdir "$d"
	sync
	case $v in
	# fs_mark writes fs_log.txt into its working directory.
	fs_mark) (cd "$work" && fs_mark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -S 1 -k 2>&1) | fps;;
	fk-S1) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -S 1 -k | fps;;
	fk-*) "$fk" bench fsmark -d "$d" -t "$t" -n "$n" -s 4096 -w 4096 -k \
		-S batch --sync-io="${v#fk-}" --queue-depth "$qd" | fps;;
	esac
	rm -rf "$d"
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, files per run $files, 4 KiB, runs $runs, queue depth $qd"
echo "# directory $dir on $(df --output=source,fstype "$dir" | tail -1 | tr -s ' ')"
for r in $(seq "$runs"); do
	for t in $threads; do
		for v in $variants; do
			f=$(run_one "$v" "$t")
			echo "$t $v $r $f" >>"$res"
			echo "run $r threads $t $v: $f files/s" >&2
		done
	done
done

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo
printf '%-8s %-15s' threads variant
for r in $(seq "$runs"); do printf ' %10s' "run$r"; done
printf ' %10s %8s\n' median "x fs_mark"
for t in $threads; do
	base=$(awk -v t="$t" '$1 == t && $2 == "fs_mark" { print $4 }' "$res" | median)
	for v in $variants; do
		vals=$(awk -v t="$t" -v v="$v" '$1 == t && $2 == v { print $4 }' "$res")
		med=$(echo "$vals" | median)
		printf '%-8s %-15s' "$t" "$v"
		for x in $vals; do printf ' %10s' "$x"; done
		printf ' %10s %8.2f\n' "$med" "$(echo "$med $base" | awk '{ print ($2 > 0) ? $1 / $2 : 0 }')"
	done
done

[ "$fio_s" -gt 0 ] || exit 0
command -v fio >/dev/null || { echo "fio not found: no device reference"; exit 0; }
echo
echo "# device reference: fio on $dir, fsync=1 (an fsync after every write)"
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
