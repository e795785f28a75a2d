#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench series" finds each run's result file in the run's
# result directory (the one file the run added), not by reading the
# child's log: with a --results directory whose name holds a newline
# (a legal file name, which a "result file: PATH" log line cannot carry
# whole) every run is still a result, linked from index.html, and
# series.csv has its figures.
set -u
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-series-results.XXXXXX)
trap 'rm -rf "$t"' EXIT
out="$t/two
lines"

"$FLUSHKIT" bench series --scales 1 --clients 1 -T 1 --runs 1 \
	--config-a "--flush=naive" --config-b "--flush=smooth" \
	--results "$out" >"$t/stdout" 2>"$t/stderr" ||
	err "series exit $?: $(cat "$t/stderr")"
python3 - "$out" <<'PY' || err "outputs: $(cat "$t/stderr")"
import csv, os, re, sys, urllib.parse
out = sys.argv[1]
rows = list(csv.reader(open(os.path.join(out, "series.csv"))))
assert len(rows) == 2 and float(rows[1][2]) > 0 and float(rows[1][4]) > 0, rows
html = open(os.path.join(out, "index.html")).read()
links = [urllib.parse.unquote(l) for l in re.findall(r'href="([^"]+)"', html)]
results = [l for l in links if l.endswith(".jsonl")]
assert len(results) == 2, links
for l in results:
    assert os.path.exists(os.path.join(out, l)), l
PY
exit $fail
