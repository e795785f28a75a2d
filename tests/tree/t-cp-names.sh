#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-names.sh - file names that are not plain text in 'flushkit cp' and
# 'flushkit sync' output: a name with a newline or a byte that is not
# UTF-8 gives one-line messages (C escapes: \n, \xff) and valid UTF-8
# JSON (the bad byte as U+FFFD); the copy itself keeps the exact bytes.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp-names.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

odd=$(printf 'x\377y\nz')
mkdir -p "$t/$odd"
printf 'data\n' >"$t/$odd/$(printf 'q\nr')"

# Every line of stderr is a flushkit message.
one_line_msgs() {
	local n
	n=$(grep -vcE '^flushkit( cp| sync)?: ' "$1")
	[ "$n" -eq 0 ] || { bad "$2: message split over lines:"; cat -A "$1"; }
}
# No byte that is not UTF-8 (checked by iconv when present).
valid_utf8() {
	if command -v iconv >/dev/null; then
		iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 ||
			{ bad "$2: not valid UTF-8"; cat -A "$1"; }
	else
		echo "not checked: $2 is valid UTF-8 (no iconv)"
	fi
	LC_ALL=C grep -q "$(printf '\377')" "$1" && bad "$2: raw 0xff byte"
	if command -v python3 >/dev/null; then
		python3 -m json.tool "$1" >/dev/null 2>&1 || bad "$2: bad JSON"
	else
		echo "not checked: $2 parses as JSON (no python3)"
	fi
}

# A copy with such names: exact bytes kept, JSON valid.
"$FLUSHKIT" cp --json "$t/$odd" "$t/copy" >"$t/json" 2>"$t/err" ||
	bad "cp exit $?: $(cat -A "$t/err")"
cmp "$t/$odd/$(printf 'q\nr')" "$t/copy/$(printf 'q\nr')" || bad "content"
valid_utf8 "$t/json" "cp --json"
grep -q "$(printf 'x\357\277\275y')"'\\nz' "$t/json" ||
	bad "src not shown: $(cat -A "$t/json")"

# Errors naming such paths: one line each, escaped.
"$FLUSHKIT" cp --summary "$t/$odd/missing" "$t/c2" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] || bad "cp of a missing source: exit not 1"
one_line_msgs "$t/err" "cp error"
grep -q 'x\\xffy\\nz/missing' "$t/err" || bad "cp: escaped name: $(cat -A "$t/err")"
[ "$(grep -c . "$t/out")" -ge 1 ] && head -1 "$t/out" | grep -q 'x\\xffy\\nz' ||
	bad "cp summary line: $(head -2 "$t/out" | cat -A)"

"$FLUSHKIT" sync "$t/$odd/missing" >/dev/null 2>"$t/err"
[ $? -eq 1 ] || bad "sync of a missing path: exit not 1"
one_line_msgs "$t/err" "sync error"
grep -q 'x\\xffy\\nz/missing' "$t/err" || bad "sync: escaped name: $(cat -A "$t/err")"

"$FLUSHKIT" sync --json "$t/$odd" >"$t/json" 2>"$t/err" || bad "sync exit $?"
valid_utf8 "$t/json" "sync --json"

[ $fail -eq 0 ] && echo "t-cp-names: ok"
exit $fail
