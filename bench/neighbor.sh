#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/neighbor.sh - the noisy-neighbour benchmark: a victim database
# (flushkit bench tpcb on the page store, at a fixed rate and at full
# speed) shares a file system with a neighbour that writes gigabytes (a
# streaming writer, dd, and a tree writer, cp -a /usr/share), starting
# NB_START seconds into the victim's run.  The neighbour runs under each
# configuration in turn, alternated round by round in the same run:
#
#   plain      the neighbour as it is
#   exec       flushkit exec -- NEIGHBOUR (defaults: flush-after 1M,
#              max-dirty 64M)
#   nocache    nocache NEIGHBOUR (Debian's nocache; skipped if absent)
#   strict     the file system's bdi with strict_limit=1 and max_bytes=
#              BDI_MAX_BYTES (root; restored afterwards, also on ^C)
#   blkio      the neighbour in a cgroup v1 blkio cgroup with
#              blkio.throttle.write_bps_device = BLKIO_BPS (root;
#              removed afterwards)
#
# Reported per (victim mode, neighbour, configuration), over the window
# from the neighbour's start to the victim's end (the writeback a
# neighbour leaves behind hurts after it exits too): victim tps, latency
# p50/p99/p99.9/max, the stall ratio (worst one-second tps / median
# one-second tps), the neighbour's wall time, and peak Dirty and
# Writeback (/proc/meminfo, every 0.2 s).  Each run's victim result file
# (for flushkit report), per-transaction logs and meminfo samples are
# kept in results/neighbor-DATE/; the table is results/neighbor-DATE/
# table.txt, the rows runs.tsv.
#
# Parameters (environment), defaults for a run of a few minutes:
#   DIR=/var/tmp/flushkit-neighbor  the file system under test
#   DURATION=40 NB_START=10         victim seconds; neighbour start
#   RATE=400 CLIENTS=4 SCALE=10     victim: -R RATE (rate mode), clients
#   VICTIM="rate"                   "rate", "full" or "rate full"
#   NEIGHBORS="stream"              "stream", "tree" or "stream tree"
#   STREAM_SIZE=4G                  streaming writer's bytes (dd bs=1M)
#   TREE_SRC=/usr/share             tree writer's source (cp -a)
#   CONFIGS="plain exec nocache strict blkio"  ROUNDS=1
#   EXEC_OPTS=""                    extra flushkit exec options
#   BDI_MAX_BYTES=67108864  BLKIO_BPS=104857600
#   FLUSHKIT=build/flushkit
# A longer run that fills the dirty limits several times over:
#   STREAM_SIZE=16G DURATION=150 VICTIM="rate full" NEIGHBORS="stream tree"
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
DIR=${DIR:-/var/tmp/flushkit-neighbor}
DURATION=${DURATION:-40}
NB_START=${NB_START:-10}
RATE=${RATE:-400}
CLIENTS=${CLIENTS:-4}
SCALE=${SCALE:-10}
VICTIM=${VICTIM:-rate}
NEIGHBORS=${NEIGHBORS:-stream}
STREAM_SIZE=${STREAM_SIZE:-4G}
TREE_SRC=${TREE_SRC:-/usr/share}
CONFIGS=${CONFIGS:-plain exec nocache strict blkio}
ROUNDS=${ROUNDS:-1}
EXEC_OPTS=${EXEC_OPTS:-}
BDI_MAX_BYTES=${BDI_MAX_BYTES:-67108864}
BLKIO_BPS=${BLKIO_BPS:-104857600}
FLUSHKIT=${FLUSHKIT:-$here/build/flushkit}

# bench/neighbor.sh --analyze RESULTS_DIR: recompute its table from the
# kept run directories (VMODE-NEIGHBOR-CONFIG-ROUND).
if [ "${1:-}" = --analyze ]; then
	ANALYZE_DIR=$2
fi
stamp=$(date +%Y%m%d-%H%M%S)
out=$here/results/neighbor-$stamp
mkdir -p "$out" "$DIR"
rows=$out/runs.tsv

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$out/bench.log" >&2; }
die() { log "error: $*"; exit 1; }

[ -x "$FLUSHKIT" ] || die "no flushkit at $FLUSHKIT (build first)"
command -v python3 >/dev/null || die "python3 is needed for the statistics"

# The file system's backing device info (bdi) and block device.
dev=$(stat -c '%Hd:%Ld' "$DIR")
bdi=/sys/class/bdi/$dev

# Everything changed on the machine is restored on exit, also on ^C.
strict_old="" ratio_old="" cg=""
restore() {
	if [ -n "$strict_old" ]; then
		echo "$strict_old" >"$bdi/strict_limit" || true
		echo "$ratio_old" >"$bdi/max_ratio" || true
		strict_old=""
	fi
	if [ -n "$cg" ] && [ -d "$cg" ]; then
		rmdir "$cg" 2>/dev/null || true
	fi
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	jobs -p | xargs -r kill 2>/dev/null || true
	wait 2>/dev/null || true
	restore
	rm -rf "$DIR/nb"
	exit $rc
}
trap cleanup EXIT INT TERM

have_config() { # have_config NAME: 0 if it can run here (else logs why not)
	case $1 in
	plain | exec) return 0 ;;
	nocache) command -v nocache >/dev/null && return 0
		log "skip nocache: not installed (Debian package nocache)"; return 1 ;;
	strict) [ "$(id -u)" -eq 0 ] && [ -w "$bdi/strict_limit" ] && [ -w "$bdi/max_bytes" ] && return 0
		log "skip strict: needs root and $bdi/strict_limit, max_bytes"; return 1 ;;
	blkio) [ "$(id -u)" -eq 0 ] && [ -d /sys/fs/cgroup/blkio ] && return 0
		log "skip blkio: needs root and cgroup v1 blkio at /sys/fs/cgroup/blkio"; return 1 ;;
	*) die "unknown configuration '$1'" ;;
	esac
}

neighbor_cmd() { # neighbor_cmd KIND: the neighbour's argv, one per line
	case $1 in
	stream) printf '%s\n' dd if=/dev/zero of="$DIR/nb/stream" bs=1M \
		"count=$(($(numfmt --from=iec "$STREAM_SIZE") / 1048576))" status=none ;;
	tree) printf '%s\n' cp -a "$TREE_SRC" "$DIR/nb/tree" ;;
	*) die "unknown neighbour '$1'" ;;
	esac
}

# Run the neighbour KIND under CONFIG; print its wall time in seconds.
run_neighbor() { # run_neighbor CONFIG KIND
	local config=$1 kind=$2 pre=()
	mapfile -t cmd < <(neighbor_cmd "$kind")
	rm -rf "$DIR/nb"
	mkdir -p "$DIR/nb"
	case $config in
	exec) pre=("$FLUSHKIT" exec $EXEC_OPTS --stats="$run/exec-stats" --) ;;
	nocache) pre=(nocache) ;;
	strict)
		strict_old=$(cat "$bdi/strict_limit")
		ratio_old=$(cat "$bdi/max_ratio")
		echo 1 >"$bdi/strict_limit"
		echo "$BDI_MAX_BYTES" >"$bdi/max_bytes" ;;
	blkio)
		cg=/sys/fs/cgroup/blkio/flushkit-neighbor-$$
		mkdir -p "$cg"
		echo "$dev $BLKIO_BPS" >"$cg/blkio.throttle.write_bps_device" ;;
	esac
	local t0 t1
	t0=$(date +%s.%N)
	if [ "$config" = blkio ]; then
		sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" "${cmd[@]}"
	else
		"${pre[@]}" "${cmd[@]}"
	fi
	t1=$(date +%s.%N)
	echo "$t0 $t1" >"$run/neighbor-window"
	restore
}

meminfo_sampler() { # meminfo_sampler FILE: epoch Dirty_kB Writeback_kB
	while :; do
		awk -v t="$(date +%s.%N)" '/^Dirty:/ {d=$2} /^Writeback:/ {w=$2}
			END {print t, d, w}' /proc/meminfo >>"$1"
		sleep 0.2
	done
}

one_run() { # one_run VICTIM_MODE NEIGHBOR CONFIG ROUND
	local vmode=$1 kind=$2 config=$3 round=$4
	run=$out/$vmode-$kind-$config-$round
	mkdir -p "$run"
	log "run $vmode / $kind / $config (round $round)"
	rm -rf "$DIR/tpcb"
	"$FLUSHKIT" bench tpcb -i -s "$SCALE" --data-dir "$DIR/tpcb" >"$run/init.log" 2>&1 ||
		die "tpcb init failed: $run/init.log"
	sync
	local rate=()
	[ "$vmode" = rate ] && rate=(-R "$RATE")
	meminfo_sampler "$run/meminfo" &
	local sampler=$!
	"$FLUSHKIT" bench tpcb -c "$CLIENTS" -T "$DURATION" "${rate[@]}" -P 1 -l \
		--log-prefix "$run/txlog" --data-dir "$DIR/tpcb" --results "$run" \
		>"$run/victim.out" 2>"$run/victim.err" &
	local victim=$!
	local vstart
	vstart=$(date +%s.%N)
	sleep "$NB_START"
	run_neighbor "$config" "$kind" >"$run/neighbor.out" 2>&1 ||
		log "neighbour exited $? under $config (see $run/neighbor.out)"
	wait "$victim" || die "victim failed: $run/victim.err"
	local vend
	vend=$(date +%s.%N)
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	echo "$vstart $vend" >"$run/victim-window"
	analyze "$run" "$vmode" "$kind" "$config" "$round" >>"$rows"
	tail -n 1 "$rows" | tee -a "$out/bench.log" >&2
	rm -rf "$DIR/nb"
	sync
}

# One row of runs.tsv from a run directory.
analyze() { # analyze RUN VICTIM_MODE NEIGHBOR CONFIG ROUND
	python3 - "$@" <<'EOF'
import glob, math, sys
run, vmode, kind, config, rnd = sys.argv[1:6]
nb0, nb1 = map(float, open(run + "/neighbor-window").read().split())
v0, v1 = map(float, open(run + "/victim-window").read().split())
# The victim may end before the neighbour (the script waits for the
# neighbour first): the window ends with the victim's last transaction.
tx = []
for f in glob.glob(run + "/txlog*"):
    for line in open(f):
        p = line.split()
        if len(p) >= 6:
            tx.append((int(p[4]) + int(p[5]) / 1e6, int(p[2]) / 1000.0))
v1 = min(v1, max(t for t, _ in tx)) if tx else v1
lat = [l for t, l in tx if nb0 <= t <= v1]
ends = [t for t, _ in tx if nb0 <= t <= v1]
lat.sort()
def pct(q):
    if not lat:
        return float("nan")
    return lat[min(len(lat) - 1, int(math.ceil(q * len(lat))) - 1)]
secs = {}
for t in ends:
    secs[int(t - nb0)] = secs.get(int(t - nb0), 0) + 1
full = [secs.get(i, 0) for i in range(int(v1 - nb0))]
med = sorted(full)[len(full) // 2] if full else 0
stall = min(full) / med if med else float("nan")
pd = pw = 0
for line in open(run + "/meminfo"):
    p = line.split()
    if len(p) == 3 and nb0 <= float(p[0]) <= v1:
        pd, pw = max(pd, int(p[1])), max(pw, int(p[2]))
win = v1 - nb0
print("\t".join([vmode, kind, config, rnd, "%.1f" % (len(lat) / win),
                 "%.2f" % pct(0.5), "%.2f" % pct(0.99), "%.2f" % pct(0.999),
                 "%.2f" % (lat[-1] if lat else float("nan")), "%.3f" % stall,
                 "%.1f" % (nb1 - nb0), "%d" % (pd // 1024), "%d" % (pw // 1024)]))
EOF
}

if [ -n "${ANALYZE_DIR:-}" ]; then
	rmdir "$out" 2>/dev/null || true
	out=$ANALYZE_DIR
	rows=$out/runs.tsv
	printf 'victim\tneighbor\tconfig\tround\ttps\tp50_ms\tp99_ms\tp99.9_ms\tmax_ms\tstall\tnb_wall_s\tpeak_dirty_MiB\tpeak_wb_MiB\n' >"$rows"
	for run in $(ls -d "$out"/*-*-*-*/ | sort); do
		IFS=- read -r v k c r <<<"$(basename "$run")"
		analyze "${run%/}" "$v" "$k" "$c" "$r" >>"$rows"
	done
	column -t -s $'\t' "$rows" | tee "$out/table.txt"
	trap - EXIT
	exit 0
fi
log "neighbor: DIR=$DIR (device $dev) DURATION=$DURATION NB_START=$NB_START RATE=$RATE CLIENTS=$CLIENTS SCALE=$SCALE"
log "neighbor: VICTIM='$VICTIM' NEIGHBORS='$NEIGHBORS' STREAM_SIZE=$STREAM_SIZE CONFIGS='$CONFIGS' ROUNDS=$ROUNDS"
log "neighbor: $(uname -r), $(awk '/MemTotal/ {print $2 " kB RAM"}' /proc/meminfo), dirty_ratio $(cat /proc/sys/vm/dirty_ratio), dirty_background_ratio $(cat /proc/sys/vm/dirty_background_ratio)"
printf 'victim\tneighbor\tconfig\tround\ttps\tp50_ms\tp99_ms\tp99.9_ms\tmax_ms\tstall\tnb_wall_s\tpeak_dirty_MiB\tpeak_wb_MiB\n' >"$rows"
configs=()
for c in $CONFIGS; do have_config "$c" && configs+=("$c"); done
for r in $(seq 1 "$ROUNDS"); do
	for vmode in $VICTIM; do
		for kind in $NEIGHBORS; do
			for c in "${configs[@]}"; do
				one_run "$vmode" "$kind" "$c" "$r"
			done
		done
	done
done
column -t -s $'\t' "$rows" | tee "$out/table.txt"
log "results in $out"
