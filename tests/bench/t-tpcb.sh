#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench tpcb: init, a -t run with --check, a -T run with -P
# progress lines, --json, -l logs, standalone --check, re-init safety,
# and usage errors (exit 2).
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
t=$(mktemp -d /var/tmp/fk-t-tpcb.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
d=$t/data
small=(--shared-buffers 2M --checkpoint-timeout 1s)

err() { echo "FAIL: $*"; fail=1; }
has() { grep -q -- "$2" "$1" || err "'$2' not in $1: $(cat "$1")"; }

# Initialization prints pgbench -i's lines and builds a data directory.
"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" "${small[@]}" >init.out 2>&1 ||
	err "init exit $?: $(cat init.out)"
for l in "dropping old tables..." "creating tables..." \
	"generating data (client-side)..." \
	"100000 of 100000 tuples (100%) done (elapsed" "done in "; do
	has init.out "$l"
done

# A fixed number of transactions, then the consistency check.
"$FLUSHKIT" bench tpcb -c 4 -j 4 -t 200 -r --check --data-dir "$d" "${small[@]}" \
	>run.out 2>run.err || err "run exit $?: $(cat run.out run.err)"
for l in "transaction type: <builtin: TPC-B (sort of)>" \
	"scaling factor: 1" "storage: flushkit page store (flush=smooth)" \
	"number of clients: 4" "number of threads: 4" \
	"number of transactions per client: 200" \
	"number of transactions actually processed: 800/800" \
	"number of failed transactions: 0 (0.000%)" "latency average = " \
	"query mode: simple" "initial connection time = " \
	"statement latencies in milliseconds and failures:" \
	"(without initial connection time)" "latency percentiles: p50 = " \
	"stall ratio = " "checkpoints: " "backend fsyncs: " \
	"sum of history deltas: " "consistency check: OK"; do
	has run.out "$l"
done
grep -q "(800 rows)" run.out || err "history rows: $(cat run.out)"

# A timed run with progress lines and checkpoints (checkpoint_timeout 1s).
"$FLUSHKIT" bench tpcb -c 2 -T 3 -P 1 --flush=naive --data-dir "$d" \
	"${small[@]}" >timed.out 2>timed.err ||
	err "timed run exit $?: $(cat timed.out timed.err)"
has timed.out "duration: 3 s"
has timed.out "storage: flushkit page store (flush=naive)"
n=$(grep -cE '^progress: [0-9]+\.[0-9] s, [0-9.]+ tps, lat [0-9.]+ ms stddev [0-9.]+, 0 failed$' timed.err)
has timed.out "latency stddev = "
# the stall ratio over the 2 s after the warm-up, and the checkpoints'
# worst second against the others' (checkpoint_timeout 1s: some ran)
grep -qE '^stall ratio = [0-9.]+ \(worst one-second tps [0-9]+, median [0-9.]+, over 2 s after a 1-s warm-up\)$' timed.out ||
	err "stall ratio line: $(grep stall timed.out)"
grep -qE '^stall ratio during checkpoints = [0-9.]+ \(worst [0-9]+ tps, [12] of the 2 s\), outside = ([0-9.]+ \(worst [0-9]+ tps\)|n/a \(a checkpoint ran in every second\))$' timed.out ||
	err "stall ratio during checkpoints line: $(grep stall timed.out)"

# No checkpoint in the window: the summary says so.
"$FLUSHKIT" bench tpcb -c 2 -T 3 --checkpoint-timeout 1h --data-dir "$d" \
	--no-results >nock.out 2>nock.err ||
	err "run without checkpoints exit $?: $(cat nock.out nock.err)"
has nock.out "stall ratio during checkpoints = n/a (no checkpoint ran in the 2-s window: the stall ratio above says nothing about checkpoints)"
[ "$n" -ge 2 ] || err "progress lines: $n: $(cat timed.err)"
grep -qE '^checkpoint complete: wrote [0-9]+ buffers \([0-9.]+%\); write=[0-9.]+ s, sync=[0-9.]+ s, total=[0-9.]+ s; sync files=[0-9]+, longest=[0-9.]+ s, average=[0-9.]+ s$' timed.err ||
	err "no checkpoint line: $(cat timed.err)"

# Rate limit, latency limit and the per-transaction log.
"$FLUSHKIT" bench tpcb -c 2 -j 2 -T 2 -R 200 -L 50 -l --log-prefix "$t/lg" \
	--data-dir "$d" "${small[@]}" >rate.out 2>rate.err ||
	err "rate run exit $?: $(cat rate.out rate.err)"
has rate.out "rate limit schedule lag: avg "
has rate.out "number of transactions skipped: "
has rate.out "number of transactions above the 50.0 ms latency limit: "
logs=$(find "$t" -maxdepth 1 -name "lg.*" | wc -l)
[ "$logs" -eq 2 ] || err "expected 2 log files, got $logs"
bad=$(cat "$t"/lg.* | grep -vcE '^[01] [0-9]+ ([0-9]+|skipped) 0 [0-9]+ [0-9]+ [0-9]+$')
# -j 2: client 0 in lg.PID, client 1 in lg.PID.1
[ "$(cut -d' ' -f1 "$t"/lg.*.1 | sort -u)" = 1 ] || err "lg.PID.1 clients"
[ "$bad" -eq 0 ] || err "$bad malformed log lines"
logged=$(cat "$t"/lg.* | grep -vc skipped)
processed=$(sed -n 's/^number of transactions actually processed: //p' rate.out)
[ "$logged" = "$processed" ] || err "log has $logged, summary $processed"

# --json parses and carries the series and the check.
"$FLUSHKIT" bench tpcb -c 2 -T 2 --json --check --data-dir "$d" \
	"${small[@]}" >run.json 2>json.err || err "json exit $?"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["transactions"] > 0, d
assert d["failed"] == 0
assert len(d["tps_series"]) >= 2, d["tps_series"]
assert sum(d["tps_series"]) == d["transactions"], d
assert d["check"]["ok"] is True
assert "p99" in d["latency_ms"] and d["latency_ms"]["max"] > 0
assert isinstance(d["checkpoint_events"], list)
' run.json || err "bad json: $(cat run.json)"

# Standalone check: sums equal, history rows add up across runs.
"$FLUSHKIT" bench tpcb --check --data-dir "$d" >check.out 2>&1 ||
	err "check exit $?: $(cat check.out)"
has check.out "consistency check: OK"
grep -q "transaction type" check.out && err "--check alone ran transactions"

# A directory that is not ours is never removed by -i.
mkdir -p "$t/precious" && echo keep >"$t/precious/file"
"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$t/precious" >/dev/null 2>&1
[ $? -eq 1 ] || err "init over a foreign directory did not fail with 1"
[ -f "$t/precious/file" ] || err "foreign directory was touched"

# Re-init replaces the data directory: history is empty again.
"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" >/dev/null 2>&1 ||
	err "re-init failed"
"$FLUSHKIT" bench tpcb --check --data-dir "$d" >check2.out 2>&1
grep -q "(0 rows)" check2.out || err "re-init kept history: $(cat check2.out)"

# No store there: failure, not usage.
"$FLUSHKIT" bench tpcb -t 1 --data-dir "$t/empty" >/dev/null 2>&1
[ $? -eq 1 ] || err "run on an empty directory did not exit 1"

# Usage errors exit 2.
for args in "-c 0" "-c x" "-T 1 -t 1" "--no-such-option" "-i -c 2" \
	"--flush=fast" "--shared-buffers=lots" "--checkpoint-sorted=maybe" \
	"--wal-sync-method=none" "extra-arg two" "-R 0" "-c"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb $args --data-dir "$d" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || err "'$args' exit $rc, expected 2"
done
# A number out of range or not plain decimal is a usage error naming the
# option, from the parser, never an open failing with EINVAL (pgbench's
# "invalid ... value"): one parser for every such number.
for a in "--checkpoint-completion-target=0" \
	"--checkpoint-completion-target=0x1p-1" \
	"--checkpoint-completion-target=inf" \
	"--checkpoint-completion-target=1.5" \
	"--checkpoint-timeout=0x1p3" "--checkpoint-timeout=inf" \
	"-R 0x10" "-R nan" "-L 1e999" "--sampling-rate=0x1p-2"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb -t 1 $a --data-dir "$d" >num.out 2>&1
	rc=$?
	echo "bench tpcb $a: exit $rc: $(cat num.out)"
	[ $rc -eq 2 ] || err "'$a' exit $rc, expected 2"
	opt=${a%%[= ]*}
	grep -q -- "$opt\|${opt#--}" num.out || err "'$a': the option is not named: $(cat num.out)"
	grep -q "open store" num.out && err "'$a' reached the open: $(cat num.out)"
done
for a in "--checkpoint-completion-target=0.5" \
	"--checkpoint-completion-target=1" "--checkpoint-completion-target=.25" \
	"--checkpoint-timeout=1.5s" "-R 1e3"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb -t 1 $a --data-dir "$d" >num.out 2>&1 ||
		err "'$a' exit $?: $(cat num.out)"
done
"$FLUSHKIT" bench tpcb --help >help.out 2>&1 || err "--help exit $?"
has help.out "usage: flushkit bench tpcb"
"$FLUSHKIT" bench --help | grep -q tpcb || err "tpcb not in bench --help"

[ $fail -eq 0 ] && echo ok
exit $fail
