#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-tpcb-pgbench-args.sh - pgbench 15 command lines that bench tpcb takes
# although the page store has no SQL: a trailing database name (ignored
# with a note), -C (ignored with a note), -v and -q (accepted),
# --max-tries=N (shown in pgbench's line); and what it refuses with one
# line that says why: -f and -D (custom SQL scripts), two operands.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-tpcb-args.XXXXXX")
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$t" || exit 1
F() { "$FLUSHKIT" bench tpcb --data-dir "$t/db" --no-results "$@"; }

F -i -q -s 1 pgbench_db >init.out 2>init.err || bad "-i -q DBNAME: exit $?: $(cat init.err)"
grep -q "database name 'pgbench_db' ignored" init.err || bad "-i DBNAME: no note: $(cat init.err)"
F -C -v --max-tries=3 -c 2 -t 20 pgbench_db >run.out 2>run.err ||
	bad "-C -v --max-tries=3 DBNAME: exit $?: $(cat run.err)"
grep -q '^maximum number of tries: 3$' run.out || bad "--max-tries=3 not shown: $(grep tries run.out)"
grep -q '^number of transactions actually processed: 40/40$' run.out ||
	bad "the run: $(grep processed run.out)"
[ "$(grep -c 'ignored' run.err)" -eq 2 ] || bad "-C and DBNAME notes: $(cat run.err)"
F -t 5 >plain.out 2>plain.err || bad "plain run: exit $?"
grep -q '^maximum number of tries: 1$' plain.out || bad "default tries: $(grep tries plain.out)"
[ -s plain.err ] && grep -q ignored plain.err && bad "a plain run printed a note: $(cat plain.err)"

for o in "-f x.sql" "-D a=1" "--file=x.sql" "--define=a=1"; do
	# shellcheck disable=SC2086
	F $o -t 5 >/dev/null 2>o.err
	rc=$?
	[ $rc -eq 2 ] || bad "'$o': exit $rc, want 2"
	# One line that says why, then the Try line of every usage error.
	[ "$(wc -l <o.err)" -eq 2 ] || bad "'$o': not two lines: $(cat o.err)"
	head -1 o.err | grep -q '^flushkit bench tpcb: .*need SQL' || bad "'$o' says: $(cat o.err)"
	[ "$(tail -1 o.err)" = "Try 'flushkit bench tpcb --help' for more information." ] ||
		bad "'$o': no Try line: $(cat o.err)"
done
F -t 5 a b >/dev/null 2>two.err
[ $? -eq 2 ] || bad "two operands: not a usage error"
grep -q 'too many command-line arguments (first is "b")' two.err || bad "two operands: $(cat two.err)"
F --max-tries=0 -t 5 >/dev/null 2>&1
[ $? -eq 2 ] || bad "--max-tries=0 accepted"
exit $fail
