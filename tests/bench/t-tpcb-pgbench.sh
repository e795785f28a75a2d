#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench tpcb against pgbench 15's command lines and output: for
# each command line captured from a real pgbench 15 (tests/bench/data/pgbench15,
# see its README) run the same options here and compare the shape of
# the output (every line and label, numbers masked) with pgbench's, line
# for line; flushkit's own lines (storage, percentiles, stall ratio,
# checkpoints) come after pgbench's and are not compared.  Then the log
# files (names per thread, line layout, --sampling-rate, aggregates), the
# result file's log paths (relative to itself, so a copied results
# folder still plots), and the refused combinations with pgbench's
# messages (exit 2).  -T is shorter than pgbench's where the captured
# run was long: a duration is a number, and numbers are masked.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
ref=${FK_SRC:?}/tests/bench/data/pgbench15
t=$(mktemp -d /var/tmp/fk-t-tpcb-pgbench.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
d=$t/data
small=(--shared-buffers 4M --checkpoint-timeout 1s --log-checkpoints=off
	--data-dir "$d" --no-results)

err() { echo "FAIL: $*"; fail=1; }

# The shape of an output: the version line as VERSION, numbers as N.
shape() {
	sed -E -e '1s/^(pgbench|flushkit bench tpcb) \(.*\)$/VERSION/' \
		-e 's/[0-9]+(\.[0-9]+)?/N/g' "$1"
}
# pgbench's part of our stdout: everything before "storage:".
ours() { sed -n '/^storage: /q;p' "$1"; }

# compare NAME REF-FILE OPTIONS...: our stdout's pgbench part against
# the reference, shape for shape.
compare() {
	local name=$1 r=$2
	shift 2
	"$FLUSHKIT" bench tpcb "$@" "${small[@]}" >"$name.out" 2>"$name.err"
	local rc=$?
	[ $rc -eq 0 ] || { err "$name: exit $rc: $(cat "$name.err")"; return; }
	ours "$name.out" >"$name.pg"
	if ! diff <(shape "$ref/$r") <(shape "$name.pg") >"$name.diff"; then
		err "$name: shape differs from pgbench 15 ($r):"
		cat "$name.diff"
	fi
}

"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" >init.out 2>&1 ||
	err "init exit $?: $(cat init.out)"

mkdir run1 && cd run1 || exit 1
compare agg prepared-c8-j4-T10-P1-agg.out \
	-n -M prepared -c 8 -j 4 -T 2 -P 1 -l --aggregate-interval 1
# progress lines: the shape of pgbench's (", N failed" included)
sort -u <(shape "$ref/prepared-c8-j4-T10-P1-agg.err") >pg.prog
grep '^progress: ' agg.err >prog || err "no progress lines: $(cat agg.err)"
sort -u <(shape prog) >our.prog
diff pg.prog our.prog >/dev/null ||
	err "progress lines: $(diff pg.prog our.prog)"
# one log per thread, named as pgbench names them
n=$(ls pgbench_log.* 2>/dev/null | wc -l)
[ "$n" -eq 4 ] || err "-j 4 -l: $n log files: $(ls)"
for f in pgbench_log.*; do
	case $f in
	pgbench_log.[0-9]* ) ;;
	*) err "log name $f" ;;
	esac
done
[ "$(ls pgbench_log.* | grep -cE '^pgbench_log\.[0-9]+$')" -eq 1 ] ||
	err "thread 0's log is not pgbench_log.PID: $(ls)"
for k in 1 2 3; do
	ls pgbench_log.*."$k" >/dev/null 2>&1 || err "no pgbench_log.PID.$k"
done
# aggregate lines: pgbench 15's 15 fields
want=$(awk '{print NF}' "$ref/agg-log.17355" | sort -u)
got=$(cat pgbench_log.* | awk '{print NF}' | sort -u)
[ "$want" = "$got" ] || err "aggregate fields: pgbench $want, ours $got"
# the intervals' counts add up to the transactions processed
sum=$(cat pgbench_log.* | awk '{s += $2} END {print s}')
proc=$(sed -n 's/^number of transactions actually processed: //p' agg.out)
[ "$sum" = "$proc" ] || err "aggregates count $sum, summary $proc"
cd "$t" || exit 1

compare plain c2-T3.out -c 2 -T 1
compare mix r-mix.out -n -r -c 2 -T 1 -b tpcb-like@1 -b select-only@9
compare select r-S.out -n -r -S -c 2 -T 1
compare sn S-N.out -n -S -N
compare ts progress-timestamp.out -n -c 2 -T 2 -P 1 --progress-timestamp
grep '^progress: ' ts.err | head -1 >ts.prog
diff <(shape "$ref/progress-timestamp.err" | sort -u) <(shape ts.prog) \
	>/dev/null || err "--progress-timestamp: $(cat ts.prog)"
now=$(date +%s)
ep=$(sed -E 's/^progress: ([0-9]+)\..*/\1/' ts.prog)
[ $((now - ep)) -ge 0 ] && [ $((now - ep)) -lt 60 ] ||
	err "--progress-timestamp is not the epoch: $ep (now $now)"

# the mix draws by weight: select-only has about 90% of the transactions
pct=$(sed -n '/^SQL script 2/,$ s/^ - [0-9]* transactions (\([0-9.]*\)%.*/\1/p' \
	mix.out)
awk -v p="$pct" 'BEGIN {exit !(p > 80 && p < 97)}' ||
	err "select-only@9 of 10: $pct% of the transactions"
# -r: every statement of the builtin script, in pgbench's order
diff <(sed -n 's/^ *[0-9.]* *[0-9]*  //p' "$ref/r-mix.out") \
	<(sed -n 's/^ *[0-9.]* *[0-9]*  //p' mix.pg) >/dev/null ||
	err "-r statements differ: $(cat mix.pg)"

# --sampling-rate: about half the transactions logged, pgbench's layout
mkdir run2 && cd run2 || exit 1
compare sampled N-t50-sampling.out -n -N -c 2 -t 200 -l \
	--sampling-rate 0.5 --log-prefix pfx
lines=$(cat pfx.* | wc -l)
[ "$lines" -gt 140 ] && [ "$lines" -lt 260 ] ||
	err "--sampling-rate 0.5 of 400: $lines lines"
bad=$(cat pfx.* | grep -vcE '^[01] [0-9]+ [0-9]+ 0 [0-9]+ [0-9]+$')
[ "$bad" -eq 0 ] || err "$bad log lines not in pgbench's layout"
cd "$t" || exit 1

# -c 3 -j 2: clients 0 and 1 in th.PID, client 2 in th.PID.1
mkdir run3 && cd run3 || exit 1
compare threads c3-j2-t10.out -n -c 3 -j 2 -t 10 -l --log-prefix th
[ "$(cut -d' ' -f1 th.[0-9]* | sort -u | grep -c .)" -ge 1 ] || err "th logs"
f0=$(ls | grep -E '^th\.[0-9]+$')
f1=$(ls | grep -E '^th\.[0-9]+\.1$')
[ "$(cut -d' ' -f1 "$f0" | sort -u | tr '\n' ' ')" = "0 1 " ] ||
	err "thread 0 logs clients $(cut -d' ' -f1 "$f0" | sort -u)"
[ "$(cut -d' ' -f1 "$f1" | sort -u | tr '\n' ' ')" = "2 " ] ||
	err "thread 1 logs clients $(cut -d' ' -f1 "$f1" | sort -u)"
cd "$t" || exit 1

# The result file names its logs relative to itself: copy the folder
# (results and logs) elsewhere and the paths still resolve.
mkdir -p w/logs && cd w/logs || exit 1
"$FLUSHKIT" bench tpcb -c 2 -j 2 -T 1 -l --results ../res \
	--shared-buffers 4M --log-checkpoints=off --data-dir "$d" \
	>rel.out 2>rel.err || err "result run: $(cat rel.err)"
cd "$t" || exit 1
cp -a w w2
python3 - "$t/w2/res" <<'EOF' || err "log paths in the copied result file"
import glob, json, os, sys
f = glob.glob(sys.argv[1] + "/tpcb-*.jsonl")[0]
s = [json.loads(l) for l in open(f) if '"settings"' in l][0]
logs = s["latency_log"]
assert len(logs) == 2, logs
for p in logs:
    assert not p.startswith("/"), p
    q = os.path.join(os.path.dirname(f), p)
    assert os.path.getsize(q) > 0, q
EOF

# --random-seed: the same seed draws the same transactions (the history
# deltas of a fresh data directory sum the same), another seed others;
# "rand" is accepted.
hist() { # SEED
	"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$t/seed" >/dev/null 2>&1 ||
		err "seed init"
	"$FLUSHKIT" bench tpcb -c 1 -t 50 --random-seed "$1" --check \
		--data-dir "$t/seed" --no-results 2>/dev/null |
		sed -n 's/^sum of history deltas: //p'
}
h1=$(hist 42)
h2=$(hist 42)
h3=$(hist 43)
[ -n "$h1" ] && [ "$h1" = "$h2" ] || err "--random-seed 42 twice: '$h1' '$h2'"
[ "$h1" != "$h3" ] || err "--random-seed 42 and 43 drew the same: $h1"
[ -n "$(hist rand)" ] || err "--random-seed rand"

# --json: the scripts, their weights and with -r their statements
"$FLUSHKIT" bench tpcb -n -r -c 2 -t 50 -b tpcb-like@3 -S --json \
	"${small[@]}" >mix.json 2>/dev/null || err "--json mix exit $?"
python3 - mix.json <<'EOF' || err "--json scripts: $(cat mix.json)"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["scripts"]
assert [x["name"] for x in s] == ["tpcb-like", "select-only"], s
assert [x["weight"] for x in s] == [3, 1], s
assert sum(x["transactions"] for x in s) == j["transactions"] == 100, j
assert len(s[0]["statements"]) == 11 and len(s[1]["statements"]) == 2, s
assert s[0]["statements"][10]["statement"] == "END;", s[0]
assert j["query_mode"] == "simple" and j["threads"] == 1, j
EOF

# Refused combinations: pgbench's messages, exit 2, as a usage error of
# every flushkit command: "flushkit bench tpcb: " before the message and
# "Try 'flushkit bench tpcb --help' ..." as the last line.
refuse() { # REF-FILE OPTIONS...
	local r=$1
	shift
	"$FLUSHKIT" bench tpcb "$@" "${small[@]}" >/dev/null 2>refuse.err
	local rc=$?
	[ $rc -eq 2 ] || err "'$*': exit $rc, expected 2"
	[ "$(tail -1 refuse.err)" = "Try 'flushkit bench tpcb --help' for more information." ] ||
		err "'$*': no Try line: $(tail -1 refuse.err)"
	diff <(sed 's/^pgbench: error: //' "$ref/$r") \
		<(sed '$d; s/^flushkit bench tpcb: //' refuse.err) >refuse.diff ||
		err "'$*': message differs from pgbench's: $(cat refuse.diff)"
}
refuse error-M-bogus.err -n -M bogus
refuse error-b-nosuch.err -n -b nosuch
refuse error-sampling-without-l.err -n --sampling-rate 0.5
refuse error-sampling-with-agg.err -n -l --aggregate-interval 1 \
	--sampling-rate 0.5
refuse error-agg-without-l.err -n --aggregate-interval 1
for args in "-j 0" "-b tpcb-like@x" "-b tpcb-like@0" "--sampling-rate 2 -l" \
	"-l --aggregate-interval 0" "-T 3 -l --aggregate-interval 2" \
	"-N --check" "-b s" "--random-seed x"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb $args "${small[@]}" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || err "'$args' exit $rc, expected 2"
done
"$FLUSHKIT" bench tpcb -b list >/dev/null 2>list.err ||
	err "-b list exit $?"
grep -q "select-only: <builtin: select only>" list.err || err "-b list"

[ $fail -eq 0 ] && echo ok
exit $fail
