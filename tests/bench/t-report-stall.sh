#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit report" computes the stall ratio of a result whose summary
# lacks it from the progress lines with the one definition bench tpcb's
# summary uses (results_stall_ratio): worst one-second tps / the
# conventional median (the mean of the two middle values for an even
# count) after the warm-up (the first second of a run this short).
# tps 1 (warm-up, left out), then 40 10 30 20: median 25, ratio 0.400
# (the upper middle, 30, would give 0.333; the warm-up's 1 would give
# 0.04); a checkpoint from 2.5 to 3.2 s covers the seconds ending at 3
# and 4 (10 and 30): during 0.400, outside (40, 20) 0.800.  One progress
# line is all warm-up: no ratio.
set -u
fail=0
err() { echo "FAIL: $*"; fail=1; }
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/fk-t-report-stall.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1

{
	echo '{"type":"settings","bench":"tpcb","flush":"smooth"}'
	i=0
	for tps in 1 40 10 30 20; do
		i=$((i + 1))
		echo "{\"type\":\"progress\",\"t_s\":$i,\"tps\":$tps,\"lat_avg_ms\":$i,\"lat_max_ms\":$((2 * i))}"
	done
	echo '{"type":"checkpoint","start_s":2.5,"end_s":3.2}'
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
echo "$even" | grep -q '<td>0.400<sup[^<]*</sup></td><td>0.400<sup[^<]*</sup></td><td>0.800<sup' ||
	err "even count: not 0.400, 0.400 during, 0.800 outside: $even"
echo "$one" | grep -q '<td>2.000<sup[^<]*</sup></td><td class=na>&ndash;</td>' ||
	err "one line: a stall ratio (the warm-up counted): $one"
exit $fail
