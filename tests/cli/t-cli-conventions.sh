#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cli-conventions.sh - what every command answers the GNU way:
# "--version" as the first option of every command and benchmark
# (exit 0, "flushkit CMD VERSION" on stdout, nothing on stderr) without
# running anything, "--help" (exit 0, a usage line on stdout), and
# "flushkit exec -- CMD --version" still running CMD's own --version.
# A usage error, the GNU way, in every command and benchmark: an unknown
# option, a missing operand or required option, a bad value: exit 2
# (cp and sync, drop-ins for GNU's, exit 1 as GNU cp and sync do),
# nothing on stdout, two lines on stderr, "flushkit CMD: MESSAGE" and
# "Try 'flushkit CMD --help' for more information." (cli_usage_error).
# The lab disk's refusals in 'disk create' (a bad --model, --size,
# --name) are usage errors of it; the daemon flushkit-diskd, which does
# not link the command's layer, speaks the same form as
# "flushkit-diskd: MESSAGE" and "Try 'flushkit-diskd --help' ...".
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

# usage_error CMD-WORDS -- ARGS...: "flushkit ARGS" is a usage error of
# "flushkit CMD-WORDS" (none: the top-level command); with WANT set, its
# first line is exactly "flushkit CMD: WANT".
usage_error() {
	local words=() want=${WANT-}
	while [ "$1" != -- ]; do words+=("$1"); shift; done
	shift
	local cmd="flushkit${words[*]:+ ${words[*]}}" want_rc=2
	case ${words[*]} in cp | sync) want_rc=1 ;; esac
	out=$("$FLUSHKIT" "$@" 2>"$t/err")
	rc=$?
	[ $rc -eq $want_rc ] || bad "'$*': exit $rc, not $want_rc: $(cat "$t/err")"
	[ -z "$out" ] || bad "'$*' wrote to stdout: $(echo "$out" | head -2)"
	[ "$(wc -l <"$t/err")" -eq 2 ] ||
		bad "'$*': not two lines on stderr: $(head -4 "$t/err")"
	case $(head -1 "$t/err") in
	"$cmd: "?*) ;;
	*) bad "'$*': first line not '$cmd: ...': $(head -1 "$t/err")" ;;
	esac
	[ -z "$want" ] || [ "$(head -1 "$t/err")" = "$cmd: $want" ] ||
		bad "'$*': '$(head -1 "$t/err")', want '$cmd: $want'"
	[ "$(tail -1 "$t/err")" = "Try '$cmd --help' for more information." ] ||
		bad "'$*': second line: $(tail -1 "$t/err")"
}
# The unknown option, long and short, of every command and benchmark.
WANT="unrecognized option '--no-such-option'" usage_error -- --no-such-option
WANT="invalid option -- 'Z'" usage_error -- -Z
for c in $cmds; do
	WANT="unrecognized option '--no-such-option'" \
		usage_error "$c" -- "$c" --no-such-option
done
for k in $kinds; do
	WANT="unrecognized option '--no-such-option'" \
		usage_error bench "$k" -- bench "$k" --no-such-option
	WANT="invalid option -- 'Z'" usage_error bench "$k" -- bench "$k" -Z
done
for c in cp sync exec monitor report compare reproduce; do
	WANT="invalid option -- 'Z'" usage_error "$c" -- "$c" -Z
done
# Missing operands and required options.
WANT="missing COMMAND operand" usage_error --
WANT="'no-such-command' is not a flushkit command" usage_error -- no-such-command
WANT="missing KIND operand" usage_error bench -- bench
WANT="'no-such-kind' is not a flushkit benchmark" usage_error bench -- bench no-such-kind
WANT="missing PATH operand" usage_error sync -- sync --summary
WANT="missing COMMAND operand" usage_error exec -- exec
WANT="-o DIR is required" usage_error report -- report r.jsonl
WANT="missing RESULT operand" usage_error report -- report -o "$t/html"
WANT="missing A and B operands" usage_error compare -- compare
WANT="missing B operand" usage_error compare -- compare a
WANT="extra operand 'c'" usage_error compare -- compare a b c
WANT="missing SEED operand" usage_error reproduce -- reproduce
WANT="extra operand '001'" usage_error reproduce -- reproduce 000 001
WANT="missing SUBCOMMAND operand" usage_error disk -- disk
WANT="'no-such' is not a disk subcommand" usage_error disk -- disk no-such
WANT="Must specify at least one directory with -d switch" \
	usage_error bench fsmark -- bench fsmark -n 1
for k in sync series neighbor; do
	WANT="extra operand 'x'" usage_error bench "$k" -- bench "$k" x
done
# bench tpcb takes pgbench's trailing database name (ignored, with a note).
WANT='too many command-line arguments (first is "y")' \
	usage_error bench tpcb -- bench tpcb x y
if [ "$(id -u)" -eq 0 ]; then # disk's subcommands want root first
	WANT="--model is required" usage_error disk create -- disk create
	WANT="missing DEV operand" usage_error disk stats -- disk stats
	WANT="missing DEV operand" usage_error disk cut -- disk cut
	WANT="unrecognized option '--no-such-option'" \
		usage_error disk create -- disk create --no-such-option
	usage_error disk create -- disk create --model=no-such-model
	grep -q "^flushkit disk create: invalid value 'no-such-model' for --model (hdd, .*ram" "$t/err" ||
		bad "'disk create --model=no-such-model': $(head -1 "$t/err")"
	WANT="invalid value '4097' for --size (a multiple of 4 KiB)" \
		usage_error disk create -- disk create --model=ram --size=4097
	usage_error disk create -- disk create --model=ram --name=a/b
fi
WANT="missing file operand" usage_error cp -- cp
WANT="missing destination file operand after 'a'" usage_error cp -- cp a
WANT="option '--suffix' requires an argument" usage_error cp -- cp a b --suffix
WANT="invalid attribute 'x' for '--no-preserve' (mode, ownership, timestamps, links, xattr, context, all)" \
	usage_error cp -- cp --no-preserve=x a b

# flushkit-diskd (next to the command in a build tree; installed, in
# LIBDIR/flushkit/): the same four answers.
diskd=$(dirname "$FLUSHKIT")/flushkit-diskd
[ -x "$diskd" ] || diskd=$(dirname "$FLUSHKIT")/../lib/flushkit/flushkit-diskd
if [ -x "$diskd" ]; then
	diskd_error() { # WANT ARGS...
		local want=$1
		shift
		out=$("$diskd" "$@" 2>"$t/err")
		rc=$?
		[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(wc -l <"$t/err")" -eq 2 ] &&
			[ "$(head -1 "$t/err")" = "flushkit-diskd: $want" ] &&
			[ "$(tail -1 "$t/err")" = "Try 'flushkit-diskd --help' for more information." ] ||
			bad "'flushkit-diskd $*': exit $rc: $(cat "$t/err")"
	}
	diskd_error "unrecognized option '--no-such-option'" --no-such-option
	diskd_error "invalid option -- 'Z'" -Z
	diskd_error "missing MOUNTPOINT operand" --model=ram
	diskd_error "--model is required" "$t/mnt"
	diskd_error "invalid value 'x' for --model" --model=x "$t/mnt"
	diskd_error "invalid value 'abc' for --size (bytes)" --model=ram --size=abc "$t/mnt"
	diskd_error "option '--model' requires an argument" --model
	diskd_error "extra operand 'b'" --model=ram a b
	out=$("$diskd" --version 2>"$t/err")
	[ $? -eq 0 ] && [ "$out" = "flushkit-diskd $ver" ] && [ ! -s "$t/err" ] ||
		bad "'flushkit-diskd --version' printed '$out'"
	"$diskd" --help | grep -q '^usage: flushkit-diskd' || bad "'flushkit-diskd --help'"
else
	echo "note: no flushkit-diskd next to $FLUSHKIT (built without libfuse3?): its checks skipped"
fi
# getopt's other mistakes, in GNU's words, and a bad value.
WANT="option '--method' requires an argument" usage_error sync -- sync --method
WANT="option '--method' requires an argument" usage_error sync -- sync --meth
WANT="option requires an argument -- 'i'" usage_error monitor -- monitor -i
WANT="option '--json' doesn't allow an argument" usage_error sync -- sync --json=1 .
WANT="option '--j' is ambiguous" usage_error sync -- sync --j .
WANT="invalid value 'x' for --method (auto, twopass, fsync or syncfs)" \
	usage_error sync -- sync --method=x .
WANT="invalid value '0' for -c" usage_error bench tpcb -- bench tpcb -c 0
WANT="invalid value '0' for --runs (1..100)" \
	usage_error bench series -- bench series --runs=0
WANT="invalid INTERVAL '0.01' (seconds, 0.1 to 86400)" \
	usage_error monitor -- monitor 0.01
for c in reproduce "bench sync" "bench neighbor"; do # the one --device parser
	# shellcheck disable=SC2086
	usage_error $c -- $c --device=floppy
	grep -q "^flushkit $c: invalid value 'floppy' for --device (" "$t/err" ||
		bad "'$c --device=floppy': $(head -1 "$t/err")"
done
# A usage error ran nothing: nothing was created here.
[ -z "$(ls -A "$t" | grep -v '^err$')" ] || bad "a usage error left $(ls -A "$t")"

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
