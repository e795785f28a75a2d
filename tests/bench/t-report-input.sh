#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit report" and "flushkit compare" on files that are not result
# files: /etc/passwd, an empty file, a truncated JSON line, JSON that is
# not a result line, a bad line in the middle, a run without a summary.
# Each fails with exit 1 and one message naming the file (and the line),
# and report writes no page, not even an empty one.  A torn last line
# after good lines (a run cut off while writing it) is skipped with a
# warning.
set -u
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/fk-t-report-input.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
good=$FK_SRC/tests/bench/data/results/tpcb-20261129-121500-1002.jsonl

err() { echo "FAIL: $*"; fail=1; }

: >empty.jsonl
printf '{"type":"settings","bench":"tpcb","fl' >truncated.jsonl
printf '[1, 2, 3]\n' >array.jsonl
printf '{"tps": 5}\n' >notype.jsonl
{ head -n 3 "$good"; echo '{"type":"progress","t_s":'; tail -n 2 "$good"; } >middle.jsonl
grep -v '"type":"summary"' "$good" >nosummary.jsonl
cp /etc/passwd passwd

# FILE LINE-TEXT: report and compare fail with one message naming it.
refused() {
	local f=$1 want=$2 rc
	rm -rf out
	"$FLUSHKIT" report "$f" -o out >rep.out 2>rep.err
	rc=$?
	[ $rc -eq 1 ] || err "report $f: exit $rc, not 1: $(cat rep.err)"
	[ "$(wc -l <rep.err)" -eq 1 ] || err "report $f: not one message: $(cat rep.err)"
	grep -qF -- "$want" rep.err || err "report $f: '$want' not in: $(cat rep.err)"
	[ ! -e out ] || err "report $f wrote a page: $(ls -R out)"
	[ ! -s rep.out ] || err "report $f printed: $(cat rep.out)"
	echo "report $f: $(cat rep.err)"
	"$FLUSHKIT" compare "$f" "$good" >cmp.out 2>cmp.err
	rc=$?
	[ $rc -eq 1 ] || err "compare $f: exit $rc, not 1: $(cat cmp.out cmp.err)"
	grep -qF -- "$f" cmp.err || err "compare $f: not named: $(cat cmp.err)"
}

refused passwd "passwd:1: not a result file"
refused empty.jsonl "empty.jsonl: empty: not a result file"
refused truncated.jsonl "truncated.jsonl:1: not a result file: a truncated JSON line"
refused array.jsonl "array.jsonl:1: not a result file"
refused notype.jsonl "notype.jsonl:1: not a result file"
refused middle.jsonl "middle.jsonl:4: not a result file"

# A run without a summary did not finish: report refuses it (compare
# finds no run in it).
rm -rf out
"$FLUSHKIT" report nosummary.jsonl -o out >/dev/null 2>rep.err
[ $? -eq 1 ] || err "report without a summary: not exit 1"
grep -q "nosummary.jsonl': no summary line: the run did not finish" rep.err ||
	err "no-summary message: $(cat rep.err)"
[ ! -e out ] || err "report of an unfinished run wrote a page"

# A good file next to a bad one: still no page.
rm -rf out
"$FLUSHKIT" report "$good" passwd -o out >/dev/null 2>&1
[ $? -eq 1 ] || err "report good + passwd: not exit 1"
[ ! -e out ] || err "report good + passwd wrote a page"

# A torn last line after good lines: skipped with a warning, the run kept.
{ cat "$good"; printf '{"type":"monitor","t_s":6'; } >torn.jsonl
"$FLUSHKIT" report torn.jsonl -o torn >/dev/null 2>torn.err
rc=$?
[ $rc -eq 0 ] || err "torn last line: exit $rc: $(cat torn.err)"
n=$(($(wc -l <"$good") + 1))
grep -q "torn.jsonl:$n: not a JSON object, skipped" torn.err ||
	err "torn line warning: $(cat torn.err)"

# a directory stands for its result files (as in compare); one with
# none is an error of its own, and nothing is written
mkdir adir
"$FLUSHKIT" report adir -o adir-out >/dev/null 2>adir.err
rc=$?
[ $rc -eq 1 ] || err "report on an empty directory: exit $rc"
grep -q "report: 'adir' holds no result file" adir.err || err "report on an empty directory: $(cat adir.err)"
[ -e adir-out ] && err "report on an empty directory wrote adir-out"
cp "$good" adir/one.jsonl
cp "$good" adir/two.jsonl
: >adir/.hidden.jsonl
echo notjson >adir/notes.txt
"$FLUSHKIT" report adir -o adir-out >adir.out 2>adir.err ||
	err "report on a directory: exit $?: $(cat adir.err)"
[ "$(grep -c 'one.jsonl\|two.jsonl' adir-out/index.html)" -ge 2 ] ||
	err "report on a directory did not draw both of its result files"

[ $fail -eq 0 ] && echo ok
exit $fail
