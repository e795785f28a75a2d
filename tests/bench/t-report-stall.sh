#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit report" computes the stall ratio of a result whose summary
# lacks it from the progress lines with the one definition bench tpcb's
# summary uses (results_stall_ratio): worst one-second tps / the
# conventional median (the mean of the two middle values for an even
# count).  tps 10 20 30 40: median 25, ratio 0.400 (the upper middle,
# 30, would give 0.333); one progress line: ratio 1.000.
set -u
fail=0
err() { echo "FAIL: $*"; fail=1; }
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/fk-t-report-stall.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1

{
	echo '{"type":"settings","bench":"tpcb","flush":"smooth"}'
	for i in 1 2 3 4; do
		echo "{\"type\":\"progress\",\"t_s\":$i,\"tps\":$((50 - 10 * i)),\"lat_avg_ms\":$i,\"lat_max_ms\":$((2 * i))}"
	done
	echo '{"type":"summary","tps":25,"status":"ok"}'
} >even.jsonl
{
	echo '{"type":"settings","bench":"tpcb","flush":"naive"}'
	echo '{"type":"progress","t_s":1,"tps":7,"lat_avg_ms":1,"lat_max_ms":2}'
	echo '{"type":"summary","tps":7,"status":"ok"}'
} >one.jsonl

"$FLUSHKIT" report even.jsonl one.jsonl -o out >rep.out 2>rep.err ||
	err "report exit $?: $(cat rep.err)"
# the summary table: one row per run, the stall ratio marked computed
row() { grep -o "<tr><td class=run>.*</span>$1</td>.*</tr>" out/index.html | head -1; }
even=$(row 'flush=smooth')
one=$(row 'flush=naive')
echo "$even" | grep -q '<td>0.400<sup' || err "even count: not 0.400: $even"
echo "$one" | grep -q '<td>1.000<sup' || err "one line: not 1.000: $one"
exit $fail
