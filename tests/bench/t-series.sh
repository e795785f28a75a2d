#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench series" with scale 1, clients 1,2, -T 2, one run per
# cell and configuration: series.csv in the classic layout (header,
# one well-formed row per cell, gain = tps_b - tps_a, pct_gain =
# 100*gain/tps_a), series-stats.csv, index.html linking every run's
# result file and log (which exist, and whose settings show each
# configuration's arguments, split on blanks), the data directories
# removed, "flushkit compare" taking two cell directories, and without
# --results the default directory results/series-YYYYMMDD-HHMMSS.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-series.XXXXXX)
trap 'rm -rf "$t"' EXIT
out=$t/out

"$FLUSHKIT" bench series --scales 1 --clients 1,2 -T 2 --runs 1 \
	--config-a "--flush=naive  --checkpoint-timeout 1s" \
	--config-b "--flush=smooth" --results "$out" >"$t/stdout" 2>"$t/stderr" ||
	err "series exit $?: $(cat "$t/stderr")"
cat "$t/stdout"
python3 - "$out" <<'PY' || err "outputs"
import csv, json, os, re, sys
out = sys.argv[1]
rows = list(csv.reader(open(os.path.join(out, "series.csv"))))
assert rows[0] == ["scale", "clients", "tps_a", "max_latency_a", "tps_b",
                   "max_latency_b", "tps_gain", "pct_gain"], rows[0]
assert [(r[0], r[1]) for r in rows[1:]] == [("1", "1"), ("1", "2")], rows
for r in rows[1:]:
    v = [float(x) for x in r]
    assert v[2] > 0 and v[4] > 0 and v[3] > 0 and v[5] > 0, r
    assert abs(v[6] - (v[4] - v[2])) < 0.2, r
    assert abs(v[7] - 100 * v[6] / v[2]) < 0.2, r
st = list(csv.DictReader(open(os.path.join(out, "series-stats.csv"))))
assert len(st) == 2 and all(s["tps_marker"] == "?" for s in st), st
html = open(os.path.join(out, "index.html")).read()
links = re.findall(r'href="([^"]+)"', html)
results = [l for l in links if l.endswith(".jsonl")]
logs = [l for l in links if l.endswith(".log")]
assert len(results) == 4 and len(logs) == 4, links
for l in links:
    assert os.path.exists(os.path.join(out, l)), l
for l in results:
    lines = [json.loads(x) for x in open(os.path.join(out, l))]
    s = [x for x in lines if x["type"] == "settings"][0]
    cfg = l.split("/")[0][-1]
    assert s["flush"] == ("naive" if cfg == "a" else "smooth"), (l, s)
    if cfg == "a":
        assert s["checkpoint_timeout"] == "1s", s
    assert any(x["type"] == "summary" for x in lines), l
assert not os.path.exists(os.path.join(out, "data")), "data left"
PY
"$FLUSHKIT" compare "$out/s1-c1-a" "$out/s1-c1-b" >"$t/cmp" ||
	err "compare exit $?"
grep -q '^tps .*(?)' "$t/cmp" || err "compare: $(cat "$t/cmp")"

"$FLUSHKIT" bench series --clients 0 >/dev/null 2>&1
[ $? -eq 2 ] || err "--clients 0 not a usage error"
"$FLUSHKIT" bench series extra >/dev/null 2>&1
[ $? -eq 2 ] || err "extra argument not a usage error"

# A configuration whose every run fails is shown as failed: no "0.0" tps
# and no "-100%" gain in the table, no zeros in series-stats.csv.
"$FLUSHKIT" bench series --scales 1 --clients 1 -T 1 --runs 1 \
	--config-b "--flush=smooth --wal-segment-size=bogus" \
	--results "$t/failed" >"$t/failed.out" 2>"$t/failed.err"
[ $? -eq 1 ] || err "a failed configuration: exit not 1"
grep -qE '^ +1 +1 +[0-9.]+ .* failed ' "$t/failed.out" ||
	err "failed B not shown as failed: $(cat "$t/failed.out")"
grep -q -- '-100' "$t/failed.out" && err "failed B shown as -100%: $(cat "$t/failed.out")"
st=$(find "$t/failed" -name series-stats.csv | head -1)
[ -n "$st" ] && grep -q '^1,1,1,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,0,,,,,' "$st" ||
	err "series-stats.csv of a failed side: $(cat "$st" 2>/dev/null)"

# Without --results: a new directory results/series-YYYYMMDD-HHMMSS of
# the working directory ("results" made if missing), local time.
mkdir "$t/def"
(cd "$t/def" && "$FLUSHKIT" bench series --scales 1 --clients 1 -T 1 \
	--runs 1 >"$t/def.out" 2>&1) || err "default --results: $(tail -3 "$t/def.out")"
d=$(ls "$t/def/results" 2>/dev/null)
echo "$d" | grep -qxE 'series-[0-9]{8}-[0-9]{6}' &&
	[ -n "$(find "$t/def/results/$d" -name '*.jsonl')" ] ||
	err "default results directory: '$d'"
exit $fail
