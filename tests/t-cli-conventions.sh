#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cli-conventions.sh - what every command answers the GNU way:
# "--version" as the first option of every command and benchmark
# (exit 0, "flushkit CMD VERSION" on stdout, nothing on stderr) without
# running anything, "--help" (exit 0, a usage line on stdout), and
# "flushkit exec -- CMD --version" still running CMD's own --version.
# Also the README lines a new user runs first: monitor's iostat-style
# "INTERVAL [COUNT]" operands, and bench fsmark's -d creating its
# parents (fs_mark creates the path).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cli-conventions.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$t" || exit 1
ver=$("$FLUSHKIT" --version | awk '{print $2}')
[ -n "$ver" ] || bad "flushkit --version printed no version"

# Every command of 'flushkit --help' and every kind of 'bench --help'.
cmds=$("$FLUSHKIT" --help | awk '/^commands:/ {on=1; next} on && !NF {exit} on {print $1}')
kinds=$("$FLUSHKIT" bench --help | awk '/^kinds:/ {on=1; next} on && !NF {exit} on {print $1}')
[ "$(echo "$cmds" | wc -w)" -ge 8 ] || bad "flushkit --help lists $(echo $cmds)"
for c in exec reproduce bench; do
	echo "$cmds" | grep -qx "$c" || bad "flushkit --help leaves out $c"
done
echo "$kinds" | grep -qx neighbor || bad "flushkit bench --help leaves out neighbor"
check() {	# WORDS...: "flushkit WORDS --version" and "--help"
	out=$("$FLUSHKIT" "$@" --version 2>"$t/err")
	rc=$?
	[ $rc -eq 0 ] || bad "'$* --version': exit $rc"
	[ "$out" = "flushkit $* $ver" ] || bad "'$* --version' printed '$out'"
	[ -s "$t/err" ] && bad "'$* --version' wrote to stderr: $(cat "$t/err")"
	out=$("$FLUSHKIT" "$@" --help 2>&1)
	rc=$?
	[ $rc -eq 0 ] || bad "'$* --help': exit $rc"
	echo "$out" | grep -qi '^usage: flushkit' ||
		bad "'$* --help' has no usage line: $(echo "$out" | head -2)"
}
for c in $cmds; do
	[ "$c" = bench ] && continue
	check "$c"
done
for k in $kinds; do check bench "$k"; done
# --version reached no command: nothing was created here.
[ -z "$(ls -A "$t" | grep -v '^err$')" ] || bad "a --version run left $(ls -A "$t")"

# exec: after the command name, --version is the command's.
out=$("$FLUSHKIT" exec -- true --version 2>/dev/null | head -1)
echo "$out" | grep -q coreutils || bad "'exec -- true --version' printed '$out'"

# monitor INTERVAL COUNT: 3 samples 0.2 s apart, then the summary.
out=$("$FLUSHKIT" monitor --csv 0.2 3 2>"$t/err")
rc=$?
[ $rc -eq 0 ] || bad "'monitor --csv 0.2 3': exit $rc: $(cat "$t/err")"
rows=$(echo "$out" | grep -c '^[0-9]')
[ "$rows" -eq 3 ] || bad "'monitor --csv 0.2 3': $rows samples"
grep -q 'summary over' "$t/err" || bad "'monitor --csv 0.2 3': no summary"
"$FLUSHKIT" monitor 0.01 >/dev/null 2>&1
[ $? -eq 2 ] || bad "'monitor 0.01' is not a usage error"
"$FLUSHKIT" monitor 1 2 true >/dev/null 2>&1
[ $? -eq 2 ] || bad "'monitor 1 2 true' (a command without --) is not a usage error"
"$FLUSHKIT" monitor --interval 100 -- true >/dev/null 2>&1
[ $? -eq 0 ] || bad "'monitor -- true' failed"

# bench fsmark -d A/B/C creates A and B too.
out=$("$FLUSHKIT" bench fsmark -d "$t/fs/a/b" -n 5 -s 4096 --no-results 2>&1)
rc=$?
[ $rc -eq 0 ] || bad "'bench fsmark -d fs/a/b': exit $rc: $out"
[ -d "$t/fs/a/b" ] || bad "'bench fsmark -d fs/a/b' did not create it"
: >"$t/file"
out=$("$FLUSHKIT" bench fsmark -d "$t/file/x" -n 5 --no-results 2>&1)
rc=$?
[ $rc -eq 1 ] || bad "'bench fsmark -d file/x': exit $rc"
echo "$out" | grep -q "mkdir '$t/file': Not a directory" ||
	bad "'bench fsmark -d file/x' said: $out"
rm -rf "$t/fs" "$t/file" "$t/err"
exit $fail
