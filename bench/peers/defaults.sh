#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/peers/defaults.sh - do flushkit's defaults win?  flushkit cp
# against cp -a && sync -f, and flushkit sync against sync -f, on a real
# tree, cold, alternated, as ratios with their spread.
#
# Configurations (each a name and a command; the first of each list is
# the reference the ratios are taken against):
#   cp:         cp-a+sync-f, cp-a (no durability at all), flushkit-default,
#               then flushkit-M for each M in CP_METHODS
#   sync:       sync-f, flushkit-default, then flushkit-M for each M in
#               SYNC_METHODS; each run first makes a dirty copy of the
#               tree (cp -a, caches dropped before it)
#               (and other-default, for cp and sync: the same command
#               with the build FLUSHKIT_B names, to measure a change in
#               the same run)
#   sync-other: the same, but OTHER_MB MiB of another program's dirty
#               data (dd of a file next to the tree, not synced) are on
#               the same file system too
# Every run gets a fresh file system (FS, default ext4): mkfs of a loop
# device over a file of FS_SIZE (default 6G) fallocate'd once beside
# WORK and attached with direct I/O (losetup --direct-io=on, so the
# loop's writes reach the root disk, not its page cache), mounted on
# WORK; or, with DEVICE=MODEL, of a lab disk of that model
# (bench/peers/lib-disk.sh), mkfs'd anew before each run.  Removing
# the previous copy instead would bias every run after the first: for
# ~35 s after a delete ext4 scans the recently deleted inodes on each
# create (recently_deleted() in its inode allocator: cp -a of
# /usr/share/doc took 1.76 s after 45 quiet seconds, 4.97 s right after
# rm -rf of the previous copy).  FS=xfs for xfs; FS=none keeps WORK's
# own file system and waits DELETE_WAIT s (default 40) after removing
# the previous copy.  ext4 is made with its inode tables and journal
# initialized (lazy_itable_init=0, lazy_journal_init=0), so no
# ext4lazyinit thread writes during a run.
# Every run starts cold without touching the rest of the machine's cache
# (drop_caches is never written): the source's regular files are evicted
# one by one (posix_fadvise DONTNEED; directories and inodes stay
# cached).  The load average before each run is in the CSV (load1)
# and its mean beside the table.
# Within each round the configurations run in a rotated order (A B C,
# B C A, ...).  The ratio of a run is its seconds over the reference's
# in the same round; the table shows the mean of seconds and the mean,
# min and max of the ratios (for cp also against cp -a alone, the copy
# that makes nothing durable), and for flushkit how many runs made syncfs
# calls (for auto: how many swept).  Each run's CPU (user + sys seconds
# of the command and its children, getrusage) is recorded too; the cpu
# columns are its mean and its ratio to the reference's.  For flushkit
# the CSV also has the two phases from --json (cp: copy_s, fsync_s;
# sync: writeback_s, fsync_s).
#
#   RUNS=3 SRC=/usr/share OPS="cp sync sync-other" bench/peers/defaults.sh
#
# Needs root (evicting any file's pages).  Output: the table on stdout, the runs in
# RESULTS/defaults-DATE.csv (RESULTS defaults to results/, git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
FK=${FLUSHKIT:-$PWD/build/flushkit}
RUNS=${RUNS:-3}
SRC=${SRC:-/usr/share}
WORK=${WORK:-/var/tmp/fk-defaults-bench}
FS=${FS:-ext4}
FS_SIZE=${FS_SIZE:-6G}
DELETE_WAIT=${DELETE_WAIT:-40}
OPS=${OPS:-"cp sync sync-other"}
CP_METHODS=${CP_METHODS-"syncfs delayed"}
SYNC_METHODS=${SYNC_METHODS-"twopass syncfs"}
OTHER_MB=${OTHER_MB:-2048}
RESULTS=${RESULTS:-results}

[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (evicting)" >&2; exit 1; }
[ -x "$FK" ] || { echo "$0: build first ($FK missing)" >&2; exit 1; }
# shellcheck source=lib-disk.sh
. "$(dirname "$0")/lib-disk.sh"
case $FS in
ext4 | xfs | none) ;;
*) echo "$0: FS=$FS: ext4, xfs or none" >&2; exit 2 ;;
esac
[ -n "${DEVICE:-}" ] && [ "$FS" != none ] && export DEVICE_FS=$FS
fk_peer_device "$FK"
# What each run works in: WORK (FS=none), the lab disk, or the loop.
base=$WORK
[ -n "$fk_peer_mnt" ] && base=$fk_peer_mnt
mkdir -p "$RESULTS" "$base"
csv=$RESULTS/defaults-$(date +%Y%m%d-%H%M%S).csv
echo "op,config,round,seconds,syncfs_calls,cpu_s,phase1_s,fsync_s,load1" >"$csv"
# The files of the script itself (timings, JSON) stay off the measured
# file system.
tmp=$(mktemp -d)
img="" loop=""

# fresh_fs: an empty file system on $base for the next run.
fresh_fs() {
	if [ "$FS" = none ]; then
		rm -rf "$base/dst" "$base/other"
		sync -f "$base"
		sleep "$DELETE_WAIT"
		return
	fi
	local dev
	mountpoint -q "$base" && umount "$base"
	if [ -n "$fk_peer_dev" ]; then
		dev=$fk_peer_dev
	else
		if [ -z "$loop" ]; then
			img=$(mktemp "$(dirname "$base")/fk-defaults-img.XXXXXX")
			fallocate -l "$FS_SIZE" "$img"
			loop=$(losetup --find --show --direct-io=on "$img")
		fi
		dev=$loop
	fi
	case $FS in
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 \
		"$dev" >/dev/null ;;
	xfs) mkfs.xfs -q -f "$dev" >/dev/null ;;
	esac
	mount "$dev" "$base"
}

cleanup() {
	if [ "$FS" = none ]; then
		rm -rf "$base/dst" "$base/other"
	elif mountpoint -q "$base"; then
		umount "$base"
	fi
	[ -n "$loop" ] && losetup -d "$loop"
	[ -n "$img" ] && rm -f "$img"
	if [ -n "$fk_peer_mnt" ]; then
		fk_peer_device_release
	elif [ "$FS" != none ]; then
		rmdir "$base" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The source's pages out of the cache (per file, DONTNEED), the work
# file system clean.
evict() {
	python3 - "$SRC" <<'PY'
import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        try:
            fd = os.open(os.path.join(d, f),
                         os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
PY
	sync -f "$base"
}
cpu=$tmp/last.cpu
# Run a command, its user + sys CPU seconds (children included) to $cpu.
timed() { python3 -c '
import os, resource, subprocess, sys
r = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.3f\n" % (u.ru_utime + u.ru_stime))
sys.exit(r)' "$cpu" "$@"; }
now() { date +%s.%N; }
json=$tmp/last.json
# syncfs calls of the last flushkit run (auto: > 0 when it swept), or -;
# then its copy and fsync phases, seconds (cp: copy_s, fsync_s; sync:
# writeback_s, fsync_s), or - -
syncfs_calls() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d["syncfs_calls"], d.get("copy_s", d.get("writeback_s", "-")),
      d.get("fsync_s", "-"))' "$json" 2>/dev/null || echo - - -
}
record() { # OP CONFIG ROUND T0 T1
	local s n=- u p1=- p2=-
	s=$(echo "$5 - $4" | bc)
	case $2 in flushkit-* | other-*) read -r n p1 p2 < <(syncfs_calls) ;; esac
	u=$(cat "$cpu" 2>/dev/null || echo nan)
	rm -f "$json" "$cpu"
	echo "$1,$2,$3,$s,$n,$u,$p1,$p2,$load1" >>"$csv"
	printf '%-10s %-22s round %d: %7.2f s, cpu %s s (syncfs calls %s; phases %s + %s s; load %s)\n' \
		"$1" "$2" "$3" "$s" "$u" "$n" "$p1" "$p2" "$load1" >&2
}

cp_configs=("cp-a+sync-f" "cp-a" "flushkit-default")
# FLUSHKIT_B: a second build (e.g. without a change) as config "other-default"
[ -n "${FLUSHKIT_B:-}" ] && cp_configs+=("other-default")
for m in $CP_METHODS; do cp_configs+=("flushkit-$m"); done
sync_configs=("sync-f" "flushkit-default")
[ -n "${FLUSHKIT_B:-}" ] && sync_configs+=("other-default")
for m in $SYNC_METHODS; do sync_configs+=("flushkit-$m"); done

run_cp() { # CONFIG ROUND
	local dst=$base/dst t0 t1
	fresh_fs
	evict
	load1=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(now)
	case $1 in
	cp-a+sync-f) timed sh -c 'cp -a "$1" "$2" && sync -f "$2"' sh "$SRC" "$dst" ;;
	cp-a) timed cp -a "$SRC" "$dst" ;;
	flushkit-default) timed "$FK" cp --json "$SRC" "$dst" >"$json" ;;
	other-default) timed "$FLUSHKIT_B" cp --json "$SRC" "$dst" >"$json" ;;
	flushkit-*) timed "$FK" cp --json --method="${1#flushkit-}" "$SRC" "$dst" >"$json" ;;
	esac
	t1=$(now)
	record cp "$1" "$2" "$t0" "$t1"
}

run_sync() { # OP CONFIG ROUND
	local dst=$base/dst t0 t1
	fresh_fs
	evict
	cp -a "$SRC" "$dst" # dirty, not yet written back
	if [ "$1" = sync-other ]; then
		dd if=/dev/zero of="$base/other" bs=1M count="$OTHER_MB" \
			status=none
	fi
	load1=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(now)
	case $2 in
	sync-f) timed sync -f "$dst" ;;
	flushkit-default) timed "$FK" sync --json "$dst" >"$json" ;;
	other-default) timed "$FLUSHKIT_B" sync --json "$dst" >"$json" ;;
	flushkit-*) timed "$FK" sync --json --method="${2#flushkit-}" "$dst" >"$json" ;;
	esac
	t1=$(now)
	record "$1" "$2" "$3" "$t0" "$t1"
}

for round in $(seq 1 "$RUNS"); do
	for op in $OPS; do
		case $op in
		cp) cfgs=("${cp_configs[@]}") ;;
		*) cfgs=("${sync_configs[@]}") ;;
		esac
		n=${#cfgs[@]}
		for i in $(seq 0 $((n - 1))); do
			cfg=${cfgs[$(((i + round) % n))]}
			case $op in
			cp) run_cp "$cfg" "$round" ;;
			*) run_sync "$op" "$cfg" "$round" ;;
			esac
		done
	done
done

echo
echo "src: $SRC ($(find "$SRC" -xdev -type f | wc -l) files," \
	"$(du -sm "$SRC" | cut -f1) MiB); work: $base, a fresh $FS a run" \
	"${DEVICE:+(lab disk $DEVICE)}; runs: $csv"
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ref = {"cp": "cp-a+sync-f", "sync": "sync-f", "sync-other": "sync-f"}
secs, order, swept, cpu = {}, [], {}, {}
loads = [float(r["load1"]) for r in rows if r.get("load1")]
for r in rows:
    k = (r["op"], r["config"])
    if k not in secs:
        order.append(k)
    secs.setdefault(k, {})[r["round"]] = float(r["seconds"])
    cpu.setdefault(k, {})[r["round"]] = float(r.get("cpu_s") or "nan")
    n = r.get("syncfs_calls", "-")
    swept[k] = swept.get(k, 0) + (1 if n not in ("-", "0", "") else 0)
def ratios_to(v, base):
    r = [v[rd] / base[rd] for rd in v if rd in base and base[rd] > 0]
    if not r:
        return "-"
    return f"{statistics.mean(r):.2f} ({min(r):.2f}-{max(r):.2f})"
print(f"{'op':10} {'config':22} {'n':>2} {'mean s':>7} {'min s':>7} "
      f"{'max s':>7} {'ratio':>6} {'min':>5} {'max':>5} {'syncfs':>6} "
      f"{'cpu s':>6} {'cpu x':>5}  {'vs cp -a (min-max)'}")
for op in ("cp", "sync", "sync-other"):
    base = secs.get((op, ref[op]), {})
    for k in [k for k in order if k[0] == op]:
        v = secs[k]
        ratios = [v[rd] / base[rd] for rd in v if rd in base and base[rd] > 0]
        s = list(v.values())
        rm = statistics.mean(ratios) if ratios else float("nan")
        rl = min(ratios) if ratios else float("nan")
        rh = max(ratios) if ratios else float("nan")
        cb = cpu.get((op, ref[op]), {})
        cv = cpu[k]
        cr = [cv[rd] / cb[rd] for rd in cv if rd in cb and cb[rd] > 0]
        cm = statistics.mean(cv.values())
        crm = statistics.mean(cr) if cr else float("nan")
        print(f"{op:10} {k[1]:22} {len(s):2d} {statistics.mean(s):7.2f} "
              f"{min(s):7.2f} {max(s):7.2f} {rm:6.2f} {rl:5.2f} {rh:5.2f} "
              f"{swept[k] if k[1].startswith(('flushkit', 'other')) else '-':>6} "
              f"{cm:6.2f} {crm:5.2f}  "
              f"{ratios_to(v, secs.get((op, 'cp-a'), {})) if op == 'cp' else ''}")
print("ratio: seconds / the reference's in the same round (cp -a && "
      "sync -f for cp, sync -f for sync); mean, min, max over rounds; "
      "syncfs: runs that made syncfs calls (auto: that swept); cpu: "
      "user + sys seconds, mean, and its mean ratio to the reference's; "
      "vs cp -a: seconds / cp -a's (not durable) in the same round")
if loads:
    print(f"load average (1 min) before the runs: mean {statistics.mean(loads):.2f}, "
          f"min {min(loads):.2f}, max {max(loads):.2f}")
PY
