#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-window.sh - one window: what "flushkit report" shades
# as the neighbour's window in a "bench neighbor" result file is the
# window the summary's figures are measured over.  The transactions of
# the per-transaction logs (txlog.*, epoch end times) that end inside
# the shaded span, on the result file's clock, are the summary's
# "transactions" (within 3, for the rounding of the span to ms), and
# the summary's tps is that count over the span's length.  The stream
# neighbour of --quick exits long before the victim's end, so a span
# that stops at the neighbour's exit misses most of them.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-bench-neighbor-window.XXXXXX) || exit 1
trap 'rm -rf "$t"' EXIT
[ "$(stat -f -c %T "$t")" = tmpfs ] && { echo "SKIP: /var/tmp is tmpfs"; exit 77; }

"$FLUSHKIT" bench neighbor --quick --config=plain --dir "$t/fs" \
	--results "$t/r" >"$t/out" 2>"$t/err" ||
	{ echo "FAIL: bench neighbor: $(tail -3 "$t/err")"; exit 1; }
run=$t/r/rate-stream-plain-r1
f=$(ls "$run"/neighbor-*.jsonl) || { echo "FAIL: no result file"; exit 1; }
"$FLUSHKIT" report "$f" -o "$t/rep" >"$t/rep.out" 2>&1 ||
	{ echo "FAIL: report: $(cat "$t/rep.out")"; exit 1; }
python3 - "$f" "$t/rep/plots.gp" "$run" <<'PY' || fail=1
import glob, json, re, sys
res, gp, run = sys.argv[1:4]
epoch = summ = None
for line in open(res):
    o = json.loads(line)
    if o["type"] == "clock":
        epoch = o["epoch_s"]
    elif o["type"] == "summary":
        summ = o
spans = set(re.findall(r"rect from ([0-9.]+), graph 0 to ([0-9.]+), graph 1 "
                       r"behind fc rgb '#707070'", open(gp).read()))
if len(spans) != 1:
    sys.exit("FAIL: %d shaded windows in plots.gp (want 1)" % len(spans))
a, b = (float(x) for x in spans.pop())
ends = []
for p in glob.glob(run + "/txlog.*"):
    for line in open(p):
        x = line.split()
        if len(x) >= 6 and x[2] != "skipped":
            ends.append(int(x[4]) + int(x[5]) / 1e6 - epoch)
inside = sum(1 for e in ends if a <= e <= b)
n = summ["transactions"]
print("shaded %.3f-%.3f s: %d of %d logged transactions; summary: %d, "
      "tps %.1f" % (a, b, inside, len(ends), n, summ["tps"]))
bad = 0
if abs(inside - n) > 3:
    print("FAIL: the shaded window holds %d transactions, the summary's "
          "window %d" % (inside, n))
    bad = 1
if b > a and abs(summ["tps"] - n / (b - a)) > max(1.0, 0.01 * summ["tps"]):
    print("FAIL: summary tps %.1f, %d transactions over the shaded %.3f s "
          "are %.1f" % (summ["tps"], n, b - a, n / (b - a)))
    bad = 1
sys.exit(bad)
PY
[ $fail = 0 ] && echo PASS
exit $fail
