#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit monitor: samples as CSV and JSON lines, the command's exit
# status passed on (128+N when killed by signal N), a summary at the end,
# SIGTERM ends a run without a command, usage errors exit 2.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAIL: $1"; fail=1; fi; }
t=$(mktemp -d /var/tmp/t-monitor.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t"

# CSV: header + at least 3 samples over ~0.45 s at 100 ms; exit status 3
"$FLUSHKIT" monitor --interval 100 --csv --path "$t" -- \
	sh -c 'sleep 0.45; exit 3' >csv.out 2>csv.err
rc=$?
check '[ $rc -eq 3 ]'
check 'head -n1 csv.out | grep -q "^t_s,interval_s,dirty_kb,writeback_kb,"'
rows=$(($(wc -l <csv.out) - 1))
check '[ $rows -ge 3 ]'
# every row has as many fields as the header, t_s increasing
check "awk -F, 'NR==1{n=NF; next} NF!=n{bad=1} NR>2 && \$1<prev{bad=1} {prev=\$1} END{exit bad}' csv.out"
# the summary goes to stderr with --csv
check 'grep -q "peak Dirty" csv.err'
check 'grep -q "time with Writeback > 0" csv.err'
if grep -q _write_ios csv.out; then
	check 'grep -q "writes completed" csv.err'
	check 'grep -q "average write wait" csv.err'
fi

# JSON lines: monitor samples, then one summary with the command status
"$FLUSHKIT" monitor --interval 100 --json -- sh -c 'sleep 0.25; exit 0' >json.out
rc=$?
check '[ $rc -eq 0 ]'
check '[ $(grep -c "^{\"type\":\"monitor\"" json.out) -ge 2 ]'
check '[ $(tail -n1 json.out | grep -c "^{\"type\":\"summary\".*\"command_status\":0") -eq 1 ]'
check 'python3 -c "import json,sys; [json.loads(l) for l in open(\"json.out\")]" 2>/dev/null || ! command -v python3 >/dev/null'

# killed by a signal: 128+15
"$FLUSHKIT" monitor --interval 100 --json -- sh -c 'kill -TERM $$' >/dev/null
rc=$?
check '[ $rc -eq 143 ]'

# a command that does not exist: 127
"$FLUSHKIT" monitor --interval 100 --csv -- /nonexistent/cmd >/dev/null 2>err.out
rc=$?
check '[ $rc -eq 127 ]'
check 'grep -q "exec .*/nonexistent/cmd" err.out'

# no command: SIGTERM ends the run with a summary and exit 0
"$FLUSHKIT" monitor --interval 100 --json >term.out &
pid=$!
sleep 0.35
kill -TERM $pid
wait $pid
rc=$?
check '[ $rc -eq 0 ]'
check 'tail -n1 term.out | grep -q "\"type\":\"summary\""'

# usage errors
"$FLUSHKIT" monitor --interval 50 -- true >/dev/null 2>&1
check '[ $? -eq 2 ]'
"$FLUSHKIT" monitor --path /nonexistent -- true >/dev/null 2>&1
check '[ $? -eq 1 ]'
"$FLUSHKIT" monitor --help | grep -q "usage: flushkit monitor"
check '[ $? -eq 0 ]'

[ $fail -eq 0 ] && echo ok
exit $fail
