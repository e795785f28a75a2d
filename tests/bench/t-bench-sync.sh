#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench sync" on tiny images (ext4, and xfs when mkfs.xfs is
# there), one and two file systems, 2 runs, 4 empty syncs, a 16 MiB big
# file, sleeps scaled to 1/50: a table per type and count with the three
# default methods (and --methods=base,patched once), one result file per (type, count, method) with 2 "run" lines
# and a summary, "flushkit compare" on two of them, and no loop device,
# mount or image left behind.  Not root: exit 1 with a clear message,
# and the test skips (77).
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
if [ "$(id -u)" != 0 ]; then
	out=$("$FLUSHKIT" bench sync --fs ext4 --fs-count 1 2>&1)
	rc=$?
	[ $rc -eq 1 ] && echo "$out" | grep -q 'needs root' ||
		{ echo "FAIL: not root: exit $rc, '$out'"; exit 1; }
	echo "SKIP: not root"; exit 77
fi
command -v mkfs.ext4 >/dev/null && command -v losetup >/dev/null ||
	{ echo "SKIP: mkfs.ext4 or losetup missing"; exit 77; }
[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
types=ext4
command -v mkfs.xfs >/dev/null && types=ext4,xfs
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-bench-sync.XXXXXX)
trap 'rm -rf "$t"' EXIT
# Loop devices of this run: their images are under $t (other programs
# on the machine may attach and detach loop devices meanwhile).
ours() { losetup -a | grep -F "$t/"; }

"$FLUSHKIT" bench sync --fs "$types" --fs-count 1,2 --runs 2 \
	--empty-syncs 4 --big-size 16M --image-size 320M --sleep-scale 0.02 \
	--dir "$t" --results "$t/res" >"$t/out" 2>"$t/err" ||
	err "exit $?: $(tail -5 "$t/err")"
cat "$t/out"
for ty in ${types//,/ }; do
	for n in 1 2; do
		grep -q "^$ty, $n file system" "$t/out" || err "no table $ty x $n"
		for m in sync syncfs flushkit; do
			f=$(ls "$t/res"/sync-$ty-$n-$m-*.jsonl 2>/dev/null)
			[ -n "$f" ] || { err "no result file $ty $n $m"; continue; }
			python3 - "$f" "$ty" "$n" "$m" <<'PY' || err "result $f"
import json, sys
f, ty, n, m = sys.argv[1:]
lines = [json.loads(l) for l in open(f)]
s = [l for l in lines if l["type"] == "settings"][0]
assert (s["fs"], s["fs_count"], s["method"]) == (ty, int(n), m), s
runs = [l for l in lines if l["type"] == "run"]
assert len(runs) == 2, runs
for r in runs:
    for k in ("empty_sync_total_s", "small_sync_s", "big_sync_s"):
        assert r[k] >= 0, r
    assert r["small_files_at_sync"] > 0, r
assert lines[-1]["type"] == "summary" and lines[-1]["runs"] == 2
env = [l for l in lines if l["type"] == "env"][0]
assert all(p["fs_type"] == ty for p in env["paths"]), env["paths"]
PY
		done
	done
done
"$FLUSHKIT" compare "$t/res"/sync-ext4-1-sync-*.jsonl \
	"$t/res"/sync-ext4-1-syncfs-*.jsonl >"$t/cmp" || err "compare exit $?"
grep -q '^small_sync_s ' "$t/cmp" || err "compare: $(cat "$t/cmp")"

# --small-limit bounds what each small-file writer writes (40 KB files).
"$FLUSHKIT" bench sync --fs ext4 --fs-count 1 --runs 1 --empty-syncs 1 \
	--big-size 16M --image-size 320M --sleep-scale 0.05 \
	--small-limit 400K --device 400M:20000 --dir "$t" \
	--results "$t/lim" >/dev/null \
	2>"$t/err" || err "--small-limit: exit $?: $(tail -3 "$t/err")"
for f in "$t/lim"/sync-ext4-1-*.jsonl; do
	python3 - "$f" <<'PY' || err "--small-limit result $f"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s = [l for l in lines if l["type"] == "settings"][0]
assert s["small_limit_bytes"] == 409600, s
for r in [l for l in lines if l["type"] == "run"]:
    assert 0 < r["small_files_at_sync"] <= 10, r
PY
done

# --methods: only the methods given, markers against the first given
# when sync(2) is not among them (base and patched: the 2011 study's
# two orders, emulated per file system).
"$FLUSHKIT" bench sync --fs ext4 --fs-count 2 --runs 1 --empty-syncs 2 \
	--big-size 16M --image-size 320M --sleep-scale 0.05 \
	--methods=base,patched --dir "$t" --results "$t/meth" >"$t/mout" \
	2>"$t/err" || err "--methods: exit $?: $(tail -3 "$t/err")"
for m in base patched; do
	ls "$t/meth"/sync-ext4-2-$m-*.jsonl >/dev/null 2>&1 ||
		err "--methods: no result file for $m"
done
ls "$t/meth"/sync-ext4-2-sync-*.jsonl >/dev/null 2>&1 &&
	err "--methods: a result file for sync, not asked for"
grep -q 'marker: against BASE order' "$t/mout" ||
	err "--methods: table: $(head -5 "$t/mout")"
grep -q 'PATCHED order' "$t/mout" || err "--methods: no PATCHED column"
"$FLUSHKIT" bench sync --methods=sync,bogus >/dev/null 2>&1
[ $? -eq 2 ] || err "--methods=sync,bogus not a usage error"

# Nothing left behind.
[ -z "$(ours)" ] || err "loop device left: $(ours)"
grep -q "$t" /proc/mounts && err "mount left: $(grep "$t" /proc/mounts)"
[ -z "$(ls -d "$t"/flushkit-bench-sync-* 2>/dev/null)" ] || err "directory left"

# Interrupted: still cleaned up.
"$FLUSHKIT" bench sync --fs ext4 --fs-count 2 --runs 50 --empty-syncs 2 \
	--big-size 16M --image-size 320M --sleep-scale 0.2 --dir "$t" \
	--no-results >/dev/null 2>"$t/err2" &
pid=$!
for i in $(seq 50); do
	grep -q 'run 1/50' "$t/err2" && break
	sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 1 ] || err "interrupted: exit $rc"
grep -q interrupted "$t/err2" || err "interrupted: $(tail -3 "$t/err2")"
[ -z "$(ours)" ] || err "interrupted: loop device left: $(ours)"
grep -q "$t" /proc/mounts && err "interrupted: mount left"
[ -z "$(ls -d "$t"/flushkit-bench-sync-* 2>/dev/null)" ] || err "interrupted: directory left"

"$FLUSHKIT" bench sync --fs-count 3 >/dev/null 2>&1
[ $? -eq 2 ] || err "--fs-count 3 not a usage error"
exit $fail
