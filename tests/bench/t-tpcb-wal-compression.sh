#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench tpcb --wal-compression=off|lz4|zstd: the store knob
# (fk_store_opts.wal_compression) reaches the store - a run's full-page
# images take a fraction of their 8200 bytes with lz4 and zstd, all of
# them with off (--flush=naive's; --flush=smooth, the default, takes
# lz4, else zstd, else off: the first of them this build has) - the result
# file records it (settings.store.wal_compression, and settings.
# wal_compression when given: the flush preset sets it, so runs are
# labelled by flush=; summary.wal_fpi_bytes), the text summary names it,
# the consistency check passes after each, and a bad value is a usage
# error (exit 2).
set -u
fail=0
t=$(mktemp -d /var/tmp/fk-t-tpcb-walc.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
d=$t/data
small=(--shared-buffers 2M --checkpoint-timeout 1s)
err() { echo "FAIL: $*"; fail=1; }
command -v python3 >/dev/null || { echo "SKIP: no python3 to read the result files"; exit 77; }

"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" "${small[@]}" >init.out 2>&1 ||
	err "init exit $?: $(cat init.out)"

# The smooth preset's method: the first of lz4, zstd this build has.
def=off
for m in zstd lz4; do
	"$FLUSHKIT" bench tpcb -t 1 --data-dir "$d" "${small[@]}" \
		--wal-compression=$m >probe.out 2>&1 && def=$m
done
# One run per setting: "METHOD|EXTRA-ARGS".
for run in "$def|" "$def|--flush=smooth" "lz4|--wal-compression=lz4" \
	"zstd|--wal-compression=zstd" "off|--flush=naive" \
	"off|--wal-compression=off"; do
	m=${run%%|*}
	extra=${run#*|}
	rm -rf res
	# shellcheck disable=SC2086
	if ! "$FLUSHKIT" bench tpcb -c 2 -t 300 --check --data-dir "$d" \
		"${small[@]}" $extra --results res >run.out 2>run.err; then
		if grep -q "built without lib$m" run.err; then
			echo "$m: not in this build, not checked"
			continue
		fi
		err "$extra: exit $?: $(cat run.out run.err)"
		continue
	fi
	grep -q "consistency check: OK" run.out || err "$extra: check not OK"
	grep -q "full-page images: .*(wal_compression $m)" run.out ||
		err "$extra: no full-page images line naming $m: $(cat run.out)"
	f=$(ls res/tpcb-*.jsonl 2>/dev/null | head -1)
	[ -n "$f" ] || { err "$extra: no result file"; continue; }
	out=$(python3 - "$f" "$m" "$extra" <<'PY'
import json, sys
f, m, extra = sys.argv[1], sys.argv[2], sys.argv[3]
st = su = None
for line in open(f):
    o = json.loads(line)
    if o.get("type") == "settings":
        st = o
    if o.get("type") == "summary":
        su = o
def find(o, k):
    if isinstance(o, dict):
        if k in o:
            return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None:
                return r
    return None
if st is None or su is None:
    print("no settings or summary record"); sys.exit(1)
s = find(st, "settings") or st
# A knob the flush preset sets: at the top level only when given (so
# runs are labelled by flush=), always in "store".
given = "--wal-compression" in extra
if s.get("wal_compression") != (m if given else None):
    print("settings.wal_compression %r (given: %s)" % (s.get("wal_compression"), given)); sys.exit(1)
if (s.get("store") or {}).get("wal_compression") != m:
    print("settings.store.wal_compression %r" % (s.get("store") or {}).get("wal_compression")); sys.exit(1)
sm = find(su, "summary") or su
fpi, b = sm.get("wal_fpi"), sm.get("wal_fpi_bytes")
if not fpi or b is None:
    print("summary wal_fpi %r wal_fpi_bytes %r" % (fpi, b)); sys.exit(1)
if m == "off" and b != fpi * 8200:
    print("off: %d images in %d bytes, not 8200 each" % (fpi, b)); sys.exit(1)
if m != "off" and b * 4 > fpi * 8200:
    print("%s: %d images in %d bytes: not compressed" % (m, fpi, b)); sys.exit(1)
print("%s: %d images, %.0f bytes each" % (m, fpi, b / fpi))
PY
) || err "$extra: $out"
	echo "$extra: $out"
done

"$FLUSHKIT" bench tpcb -t 1 --data-dir "$d" --wal-compression=gzip >bad.out 2>&1
rc=$?
[ $rc -eq 2 ] || err "--wal-compression=gzip: exit $rc, not 2"
grep -q "wal-compression" bad.out || err "gzip: message does not name the option: $(cat bad.out)"
"$FLUSHKIT" bench tpcb --help 2>&1 | grep -q -- "--wal-compression=off|lz4|zstd" ||
	err "--help does not list --wal-compression"
[ $fail -eq 0 ] && echo ok
exit $fail
