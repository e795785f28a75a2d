#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit compare" on the small fixed result files of tests/bench/data/compare
# (hand-checked numbers in its README): the plain table and the CSV as
# expected; one run on a side gives "?" and says why; "run" lines (bench
# sync's files) count one run each; --json parses and carries the
# verdicts; a metric one side lacks is n/a with no verdict (never 0);
# copies of one result file in a side count once, with a warning; a
# missing file is exit 1, bad usage exit 2, and sides with no metric in
# common exit 1.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-compare.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$FK_SRC/tests/bench/data/compare" || exit 1

"$FLUSHKIT" compare naive smooth >"$t/table" 2>"$t/err" ||
	err "table exit $?: $(cat "$t/err")"
diff -u expected-table.txt "$t/table" || err "table differs"
"$FLUSHKIT" compare --csv naive smooth >"$t/csv" || err "csv exit $?"
diff -u expected.csv "$t/csv" || err "csv differs"
"$FLUSHKIT" compare naive one-smooth.jsonl >"$t/one" || err "one exit $?"
diff -u expected-one.txt "$t/one" || err "one-run table differs"
grep -q 'no verdict' "$t/one" || err "one run: no explanation"

# A bench-sync-style file: three "run" lines, the summary line ignored.
"$FLUSHKIT" compare --json sync-methods.jsonl naive/tpcb-20261201-100000-1.jsonl \
	>"$t/j" 2>&1 && err "no shared metric accepted: $(cat "$t/j")"
"$FLUSHKIT" compare --json sync-methods.jsonl sync-methods.jsonl >"$t/j" ||
	err "json exit $?"
python3 - "$t/j" "$t/jn" <<'PY' || err "json content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["a"]["runs"] == 3 and j["b"]["runs"] == 3, j
m = {x["metric"]: x for x in j["metrics"]}
assert "run" not in m and "runs" not in m, m.keys()
assert m["small_sync_s"]["a"]["n"] == 3
assert abs(m["small_sync_s"]["a"]["stddev"] - 0.01) < 1e-9
assert all(x["marker"] == "0" for x in j["metrics"])
PY
"$FLUSHKIT" compare --json naive smooth >"$t/j2" || err "json2 exit $?"
python3 - "$t/j2" <<'PY' || err "json verdicts"
import json, sys
j = json.load(open(sys.argv[1]))
m = {x["metric"]: x["marker"] for x in j["metrics"]}
assert m == {"tps": "+", "lat_avg_ms": "0", "lat_max_ms": "-",
             "checkpoints": "0", "stall_ratio": "+",
             "backend_fsyncs": None}, m
PY

# Labels: each side by the settings that differ from the other's, not
# by its path; a setting that differs within a side is no label.
mkdir "$t/c4" "$t/c8" "$t/mixed"
for c in 4 8; do
	for i in 1 2; do
		printf '%s\n' '{"type":"settings","bench":"tpcb","flush":"smooth","clients":'$c',"data_dir":"/d'$i'","seed":'$i'}' \
			'{"type":"summary","status":"ok","tps":'$((c * 100 + i))'}' \
			>"$t/c$c/tpcb-$i.jsonl"
	done
	cp "$t/c$c/tpcb-1.jsonl" "$t/mixed/tpcb-c$c.jsonl"
done
"$FLUSHKIT" compare "$t/c4" "$t/c8" >"$t/lab" || err "labels exit $?"
head -n 2 "$t/lab" | grep -q "^A: clients=4 ($t/c4, 2 runs)$" ||
	err "label A: $(head -n 2 "$t/lab")"
head -n 2 "$t/lab" | grep -q "^B: clients=8 ($t/c8, 2 runs)$" ||
	err "label B: $(head -n 2 "$t/lab")"
"$FLUSHKIT" compare --json "$t/mixed" "$t/c8" >"$t/labj" || err "labels json exit $?"
python3 - "$t/labj" <<'PY' || err "json labels: $(cat "$t/labj")"
import json, sys
j = json.load(open(sys.argv[1]))
# "mixed" has clients 4 and 8: no label from clients on either side
assert j["a"]["label"] == "" and j["b"]["label"] == "", j
PY

# A metric one side's runs lack is shown as missing (n/a), never as 0,
# with no change and no verdict; in --csv its fields are empty, in
# --json null.
mkdir "$t/has" "$t/lacks"
for i in 1 2; do
	printf '%s\n' '{"type":"settings","bench":"tpcb","flush":"naive"}' \
		'{"type":"summary","status":"ok","tps":'$((1500 + i))',"backend_fsyncs":'$((3 + i))'}' \
		>"$t/has/tpcb-$i.jsonl"
	printf '%s\n' '{"type":"settings","bench":"tpcb","flush":"smooth"}' \
		'{"type":"summary","status":"ok","tps":'$((1600 + i))'}' \
		>"$t/lacks/tpcb-$i.jsonl"
done
"$FLUSHKIT" compare "$t/has" "$t/lacks" >"$t/miss" 2>&1 || err "missing metric exit $?: $(cat "$t/miss")"
cat "$t/miss"
grep -Eq '^backend_fsyncs +4\.500 +0\.7071 +n/a +n/a +- +n/a$' "$t/miss" ||
	err "a metric B lacks is not shown as missing: $(cat "$t/miss")"
grep -q "^n/a: the metric is not in that side's runs" "$t/miss" || err "n/a not explained"
"$FLUSHKIT" compare "$t/lacks" "$t/has" >"$t/miss2" 2>&1
grep -Eq '^backend_fsyncs +n/a +n/a +4\.500 +0\.7071 +- +n/a$' "$t/miss2" ||
	err "a metric A lacks is not shown as missing: $(cat "$t/miss2")"
"$FLUSHKIT" compare --csv "$t/has" "$t/lacks" >"$t/missc" || err "csv exit $?"
grep -q '^backend_fsyncs,2,4.5,0.707106781,0,,,,,$' "$t/missc" ||
	err "csv of a missing metric: $(cat "$t/missc")"
"$FLUSHKIT" compare --json "$t/has" "$t/lacks" >"$t/missj" || err "json exit $?"
python3 - "$t/missj" <<'PY' || err "json of a missing metric: $(cat "$t/missj")"
import json, sys
j = json.load(open(sys.argv[1]))
m = {x["metric"]: x for x in j["metrics"]}
b = m["backend_fsyncs"]
assert b["b"] == {"n": 0, "avg": None, "stddev": None}, b
assert b["marker"] is None and b["change_pct"] is None, b
assert m["tps"]["marker"] == "+", m["tps"]
PY

# Two copies of one result file in a side are one run, counted once with
# a warning naming both (not two runs: a smaller stddev, a verdict the
# runs do not support).
cp "$t/has/tpcb-1.jsonl" "$t/has/tpcb-1-copy.jsonl"
ln "$t/has/tpcb-2.jsonl" "$t/has/tpcb-2-link.jsonl"
"$FLUSHKIT" compare --json "$t/has" "$t/lacks" >"$t/dupj" 2>"$t/dupe" || err "copies exit $?"
cat "$t/dupe"
python3 - "$t/dupj" <<'PY' || err "copies counted: $(cat "$t/dupj")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["a"]["runs"] == 2 and j["a"]["copies_counted_once"] == 2, j["a"]
m = {x["metric"]: x for x in j["metrics"]}
assert m["tps"]["a"]["n"] == 2, m["tps"]
PY
grep -q "has the same content as" "$t/dupe" || err "no warning for a copy: $(cat "$t/dupe")"
grep -q "tpcb-1-copy.jsonl" "$t/dupe" || err "the copy is not named: $(cat "$t/dupe")"
"$FLUSHKIT" compare "$t/has" "$t/lacks" 2>/dev/null | head -n 1 | grep -q "2 runs; 2 copies of a result file counted once" ||
	err "header: $("$FLUSHKIT" compare "$t/has" "$t/lacks" 2>/dev/null | head -n 1)"

# Errors.
"$FLUSHKIT" compare naive no-such-dir >/dev/null 2>"$t/e"
[ $? -eq 1 ] || err "missing input not exit 1"
grep -q "no-such-dir" "$t/e" || err "missing input not named"
"$FLUSHKIT" compare naive >/dev/null 2>&1
[ $? -eq 2 ] || err "one argument not exit 2"
"$FLUSHKIT" compare --csv --json naive smooth >/dev/null 2>&1
[ $? -eq 2 ] || err "--csv --json not exit 2"
mkdir "$t/empty"
"$FLUSHKIT" compare naive "$t/empty" >/dev/null 2>&1
[ $? -eq 1 ] || err "directory without result files not exit 1"
exit $fail
