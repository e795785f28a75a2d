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
if command -v python3 >/dev/null; then
	check 'python3 -c "import json,sys; [json.loads(l) for l in open(\"json.out\")]"'
else
	echo "not checked: monitor --json lines parse as JSON (no python3)"
fi

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

# The default output is the table on a pipe too (as iostat, vmstat):
# wall clock (ISO 8601 UTC), Dirty, Writeback, each disk's %util.
"$FLUSHKIT" monitor --interval 100 --path "$t" -- sleep 0.35 >tab.out 2>tab.err
rc=$?
check '[ $rc -eq 0 ]'
check 'head -n1 tab.out | grep -q "^time .*Dirty_KiB.*Wback_KiB"'
check '[ $(grep -cE "^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}Z " tab.out) -ge 3 ]'
check 'grep -q "peak Dirty" tab.out'
if grep -q _write_ios csv.out; then
	check 'head -n1 tab.out | grep -q "w_await.*%util"'
fi

# JSON samples carry the wall clock and, per disk, %util and w_await as
# iostat -x computes them from the interval's counters.
now=$(date +%s)
"$FLUSHKIT" monitor --interval 100 --json --path "$t" -- \
	sh -c 'dd if=/dev/zero of=w bs=1M count=8 status=none conv=fsync; sleep 0.2' >wall.out
check '[ $? -eq 0 ]'
if command -v python3 >/dev/null; then
	python3 - "$now" wall.out <<'PY' || { echo "FAIL: wall clock / util in JSON"; fail=1; }
import json, re, sys, datetime
now = float(sys.argv[1])
lines = [json.loads(l) for l in open(sys.argv[2])]
mon = [l for l in lines if l["type"] == "monitor"]
assert len(mon) >= 3, mon
prev = None
for o in mon:
    assert abs(o["epoch_s"] - now) < 30, (o["epoch_s"], now)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    t = datetime.datetime.strptime(o["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
    assert abs(t - o["epoch_s"]) < 0.002, (t, o["epoch_s"])
    if prev:
        # wall clock and monotonic time agree on the interval
        assert abs((o["epoch_s"] - prev["epoch_s"]) - o["interval_s"]) < 0.05, (o, prev)
    prev = o
    for d in o.get("devices", []):
        assert 0 <= d["util_pct"] <= 100, d
        iv = o["interval_s"] * 1000
        if iv > 0.5:
            # interval_s is printed to the ms: util from either end of it
            lo = min(100, 100 * d["io_ticks_ms"] / (iv + 0.5))
            hi = min(100, 100 * d["io_ticks_ms"] / (iv - 0.5))
            assert lo - 0.06 <= d["util_pct"] <= hi + 0.06, (d, iv)
        w = d["write_ios"]
        assert abs(d["w_await_ms"] - (d["write_ticks_ms"] / w if w else 0)) < 0.001, d
PY
else
	echo "not checked: wall clock, %util and w_await in the JSON samples (no python3)"
fi
check 'head -n1 csv.out | grep -q ",epoch_s,time"'

# --prometheus: the text exposition format on stdout, summary on stderr.
"$FLUSHKIT" monitor --interval 100 --prometheus --path "$t" -- sleep 0.25 >prom.out 2>prom.err
check '[ $? -eq 0 ]'
check 'grep -q "^# TYPE flushkit_dirty_bytes gauge$" prom.out'
check 'grep -qE "^flushkit_writeback_bytes [0-9]+$" prom.out'
check 'grep -q "peak Dirty" prom.err'
check '! grep -q "peak Dirty" prom.out'
if grep -q _write_ios csv.out; then
	check 'grep -qE "^flushkit_disk_written_bytes_total\{device=\"[a-z0-9]+\"\} [0-9]+$" prom.out'
fi
if command -v python3 >/dev/null; then
	python3 - prom.out <<'PY' || { echo "FAIL: prometheus format"; fail=1; }
import re, sys
# each sample is one exposition document: TYPE before samples, one TYPE
# per family, sample lines "name{labels} value"
docs = open(sys.argv[1]).read().split("\n\n")
assert len(docs) >= 2, len(docs)
for doc in docs:
    typed = {}
    for l in doc.strip("\n").split("\n"):
        if l.startswith("# TYPE "):
            _, _, name, kind = l.split(" ")
            assert name not in typed and kind in ("gauge", "counter"), l
            typed[name] = kind
        elif l.startswith("#"):
            continue
        else:
            m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{device="[^"\\\n]*"\})? (\d+(\.\d+)?)', l)
            assert m, l
            assert m.group(1) in typed, l
            if typed[m.group(1)] == "counter":
                assert m.group(1).endswith("_total"), l
PY
else
	echo "not checked: the Prometheus exposition format (no python3)"
fi
if command -v promtool >/dev/null; then
	awk 'BEGIN{RS=""} NR==1' prom.out | promtool check metrics >promtool.out 2>&1
	check '[ $? -eq 0 ]'
fi

# --prometheus=FILE: rewritten at each sample by rename (no temp file
# left), 0600 when new, a kept file's mode kept; stdout keeps the table.
"$FLUSHKIT" monitor --interval 100 --prometheus="$t/fk.prom" -- sleep 0.25 >pf.out 2>pf.err
check '[ $? -eq 0 ]'
check 'grep -qE "^flushkit_dirty_bytes [0-9]+$" "$t/fk.prom"'
check '[ "$(stat -c %a "$t/fk.prom")" = 600 ]'
check '[ -z "$(ls -A "$t" | grep "\.tmp$")" ]'
check 'head -n1 pf.out | grep -q "^time "'
chmod 644 "$t/fk.prom"
"$FLUSHKIT" monitor --interval 100 --prometheus="$t/fk.prom" -- true >/dev/null 2>&1
check '[ "$(stat -c %a "$t/fk.prom")" = 644 ]'
"$FLUSHKIT" monitor --prometheus=/nonexistent/dir/fk.prom -- true >/dev/null 2>pfe.err
check '[ $? -eq 1 ]'
check 'grep -q "/nonexistent/dir" pfe.err'
"$FLUSHKIT" monitor --prometheus= -- true >/dev/null 2>&1
check '[ $? -eq 2 ]'

# usage errors
"$FLUSHKIT" monitor --interval 50 -- true >/dev/null 2>&1
check '[ $? -eq 2 ]'
"$FLUSHKIT" monitor --path /nonexistent -- true >/dev/null 2>&1
check '[ $? -eq 1 ]'
"$FLUSHKIT" monitor --help | grep -q "usage: flushkit monitor"
check '[ $? -eq 0 ]'

[ $fail -eq 0 ] && echo ok
exit $fail
