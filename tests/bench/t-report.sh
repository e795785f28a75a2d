#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit report on the fixed result set in tests/bench/data/results (a naive
# and a smooth TPC-B run, synthetic): the page, the plots and the data
# files, with the series the result files hold.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAIL: $1"; fail=1; fi; }
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed"; exit 77; }
data=$FK_SRC/tests/bench/data/results
naive=$data/tpcb-20261129-120000-1001.jsonl
smooth=$data/tpcb-20261129-121500-1002.jsonl
t=$(mktemp -d /var/tmp/t-report.XXXXXX)
trap 'rm -rf "$t"' EXIT
out=$t/rep

"$FLUSHKIT" report "$naive" "$smooth" -o "$out" >"$t/stdout" 2>"$t/stderr"
rc=$?
check '[ $rc -eq 0 ]'
check 'grep -qx "$out/index.html" "$t/stdout"'
check '[ ! -s "$t/stderr" ]'
html=$out/index.html
for p in tps latency scatter dirty iops mbps; do
	check "grep -q 'src=\"$p.png\"' '$html'"
	# a real PNG, not empty
	check "[ \"\$(head -c 8 '$out/$p.png' | od -An -tx1 | tr -d ' \n')\" = 89504e470d0a1a0a ]"
	check "[ \$(stat -c %s '$out/$p.png') -gt 5000 ]"
done
# labels from the differing setting, colours naive red / smooth blue
check 'grep -q "flush=naive" "$html" && grep -q "flush=smooth" "$html"'
check 'grep -q "background:#d62728\"></span>flush=naive" "$html"'
check 'grep -q "background:#1f77b4\"></span>flush=smooth" "$html"'
# summary numbers from the summary lines
check 'grep -q "<td>1499.1</td><td>5.337</td><td>410.000</td>" "$html"'
check 'grep -q "<td>0.938</td>" "$html"'
# nothing from the network
check '! grep -Eq "https?://" "$html"'

# progress series: every t_s and tps of the result file, in order
jq_progress() { grep '"type":"progress"' "$1" | sed -E 's/.*"t_s":([0-9.]+),"tps":([0-9.]+).*/\1 \2/'; }
check '[ "$(jq_progress "$naive" | awk "{printf \"%.3f %g\n\", \$1, \$2}")" = "$(grep -v "^#" "$out/data/r1-progress.dat" | awk "{printf \"%.3f %g\n\", \$1, \$2}")" ]'
check '[ "$(jq_progress "$smooth" | awk "{printf \"%.3f %g\n\", \$1, \$2}")" = "$(grep -v "^#" "$out/data/r2-progress.dat" | awk "{printf \"%.3f %g\n\", \$1, \$2}")" ]'
check '[ $(grep -vc "^#" "$out/data/r1-progress.dat") -eq 60 ]'
# lat_max column present (5th)
check '[ "$(grep -v "^#" "$out/data/r1-progress.dat" | awk "NF!=5" | wc -l)" -eq 0 ]'

# monitor series: Dirty in MiB and write IOPS per sample
jq_mon() { grep '"type":"monitor"' "$1" | sed -E 's/.*"t_s":([0-9.]+),"interval_s":([0-9.]+),"dirty_kb":([0-9]+),"writeback_kb":([0-9]+).*"write_ios":([0-9]+),.*/\1 \2 \3 \4 \5/' | awk 'NR>1 {printf "%.3f %.3f %.3f %.3f\n", $1, $3/1024, $4/1024, $5/$2}'; }
got=$(grep -v "^#" "$out/data/r1-monitor.dat" | awk 'NR>1 {printf "%.3f %.3f %.3f %.3f\n", $1, $2, $3, $6}')
check '[ "$(jq_mon "$naive")" = "$got" ]'
check '[ $(grep -vc "^#" "$out/data/r2-monitor.dat") -eq 61 ]'
# the first sample has no interval: no rate
check 'grep -v "^#" "$out/data/r1-monitor.dat" | head -n1 | grep -q "NaN NaN$"'

# checkpoints: start and end of each
check '[ "$(grep -v "^#" "$out/data/r1-checkpoints.dat" | cut -d" " -f1,2 | tr "\n" " ")" = "20.000 27.900 40.000 48.300 " ]'
check '[ "$(grep -v "^#" "$out/data/r2-checkpoints.dat" | cut -d" " -f1,2 | tr "\n" " ")" = "20.000 38.500 40.000 58.600 " ]'
# latency scatter: one point per log line, t_s from the clock line
check '[ $(grep -vc "^#" "$out/data/r1-latency.dat") -eq $(wc -l <"$data/pgbench_log.1001") ]'
check 'grep -v "^#" "$out/data/r1-latency.dat" | awk "\$1 < 0 || \$1 > 60 {bad=1} END {exit bad}"'

# the script plots each series and marks the checkpoints
gp=$out/plots.gp
for f in r1-progress r2-progress r1-monitor r2-monitor r1-latency r2-latency; do
	check "grep -q \"'data/$f.dat'\" '$gp'"
done
check 'grep -q "rect from 20.000, graph 0 to 27.900, graph 1" "$gp"'
check 'grep -q "rect from 40.000, graph 0 to 58.600, graph 1" "$gp"'
check 'grep -q "title .checkpoints (flush=naive)." "$gp"'
# two latency clouds: one panel each (overlaid, the second hides the
# first), on common scales
check 'grep -q "set multiplot layout 2,1" "$gp"'
check 'grep -q "stats .data/r1-latency.dat. using 2" "$gp" && grep -q "stats .data/r2-latency.dat. using 2" "$gp"'
check '[ "$(sed -n "/multiplot layout/,/unset multiplot/p" "$gp" | grep -c "^plot ")" -eq 2 ]'
check 'grep -q "set ylabel .transactions per second." "$gp"'
# the settings both runs share are named once, above the table
check 'grep -q "<p class=meta>Same in every run: .*clients=8" "$html"'
check '! grep -q "Same in every run: [^<]*flush=" "$html"'

# one result alone; SVG output
"$FLUSHKIT" report "$smooth" -o "$t/one" --svg >/dev/null 2>&1
check '[ $? -eq 0 ]'
check 'grep -q "flush=smooth" "$t/one/index.html"'
check 'grep -q "<svg" "$t/one/tps.svg"'
check '[ ! -e "$t/one/data/r2-progress.dat" ]'

# hostile settings are sanitized before they reach gnuplot and HTML; a
# broken line is skipped with a warning
sed -e 's/"flush":"naive"/"flush":"x`touch BAD`'"'"'<b>"/' "$naive" >"$t/evil.jsonl"
echo '{not json' >>"$t/evil.jsonl"
( cd "$t" && "$FLUSHKIT" report evil.jsonl "$smooth" -o ev >/dev/null 2>ev.err )
check '[ $? -eq 0 ]'
check '[ ! -e "$t/BAD" ] && [ ! -e "$t/ev/BAD" ]'
check '! grep -q "[\`<]" <(grep title "$t/ev/plots.gp")'
check '! grep -q "<b>" "$t/ev/index.html"'
check 'grep -q "evil.jsonl:128: not a JSON object" "$t/ev.err"'

# usage and errors
"$FLUSHKIT" report "$naive" >/dev/null 2>&1
check '[ $? -eq 2 ]'
"$FLUSHKIT" report /nonexistent.jsonl -o "$t/x" >/dev/null 2>&1
check '[ $? -eq 1 ]'

[ $fail -eq 0 ] && echo ok
exit $fail
