#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-ioprio.sh - the I/O-priority configurations of "flushkit
# bench neighbor": exec-idle runs the neighbour under "flushkit exec
# --ioprio=idle" (the shim's hints and the idle class), ionice under
# "ionice -c 3" without the shim (the control); each gets its line, its
# table and ratio rows and a good result file whose settings name the
# neighbour's argv; neither is in the default list.  Checks that they
# run, not their effect (a benchmark's matter).  Runs on a directory of
# its own under /var/tmp.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
command -v ionice >/dev/null || { echo "SKIP: no ionice"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-bench-neighbor-ioprio.XXXXXX) || exit 1
trap 'rm -rf "$t"' EXIT
[ "$(stat -f -c %T "$t")" = tmpfs ] && { echo "SKIP: /var/tmp is tmpfs"; exit 77; }

"$FLUSHKIT" bench neighbor --quick --config=exec-idle,ionice --dir "$t/fs" \
	--results "$t/r" >"$t/out" 2>"$t/err"
rc=$?
[ $rc -eq 0 ] || err "exit $rc: $(tail -3 "$t/err")"
for c in plain exec-idle ionice; do
	grep -Eq "^rate stream $c +r1 +tps +[0-9.]+ " "$t/out" ||
		err "no line for $c: $(cat "$t/out")"
	grep -Eq "^\| $c \| [0-9.]+ \|" "$t/r/table.md" || err "no table row for $c"
	[ $c = plain ] || grep -Eq "^\| $c/plain \| [0-9.]+ \|" "$t/r/table.md" ||
		err "no ratio row for $c"
	f=$(ls "$t/r/rate-stream-$c-r1"/neighbor-*.jsonl 2>/dev/null)
	[ -n "$f" ] && grep -q '"type":"summary".*"status":"ok"' "$f" ||
		err "$c: no good result file"
done
grep -q '"neighbor_argv":\["flushkit","exec","--stats=[^"]*","--ioprio=idle","--","dd"' \
	"$t/r/rate-stream-exec-idle-r1"/neighbor-*.jsonl ||
	err "exec-idle: not flushkit exec --ioprio=idle"
grep -q 'hints=[1-9]' "$t/r/rate-stream-exec-idle-r1/exec-stats" ||
	err "exec-idle: the shim gave no hints"
grep -q '"neighbor_argv":\["ionice","-c","3","dd"' \
	"$t/r/rate-stream-ionice-r1"/neighbor-*.jsonl || err "ionice: not ionice -c 3"
"$FLUSHKIT" bench neighbor --help | grep -q 'exec-idle' || err "--help: no exec-idle"
[ $fail = 0 ] && echo PASS
exit $fail
