#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-exec-enoexec.sh - an executable text file without a "#!" line (exec
# fails with ENOEXEC) runs under "flushkit exec" as under env(1): glibc's
# execvp runs it with /bin/sh, so both give the same exit status and the
# same output, arguments and $0 included; by a path and found in PATH.
# And a file that is neither (not executable) is still 126, as env's.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-exec-enoexec.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1

printf 'echo "script $0 args:$# [$1] [$2]"\necho "to stderr" >&2\nexit 7\n' \
	>noshebang
chmod 755 noshebang
mkdir bin
cp noshebang bin/fk-noshebang-cmd
printf 'echo "not executable"\n' >noexec
chmod 644 noexec

same() { # same DESCRIPTION ARGS...: env ARGS and flushkit exec -- ARGS
	local what=$1
	shift
	env "$@" >env.out 2>env.err
	local erc=$?
	"$FLUSHKIT" exec -- "$@" >fk.out 2>fk.err
	local frc=$?
	if [ "$erc" != "$frc" ]; then
		echo "FAIL: $what: flushkit exec exit $frc, env exit $erc"
		sed 's/^/    fk: /' fk.err
		fail=1
	fi
	if ! cmp -s env.out fk.out; then
		echo "FAIL: $what: stdout differs: env '$(cat env.out)'," \
			"flushkit exec '$(cat fk.out)'"
		fail=1
	fi
}

same "./noshebang" ./noshebang "a b" c
grep -q '^script ./noshebang args:2 \[a b\] \[c\]$' fk.out ||
	{ echo "FAIL: ./noshebang output '$(cat fk.out)'"; fail=1; }
grep -q '^to stderr$' fk.err ||
	{ echo "FAIL: ./noshebang stderr '$(cat fk.err)'"; fail=1; }
PATH=$t/bin:$PATH same "fk-noshebang-cmd in PATH" fk-noshebang-cmd x
# not executable at all: 126 from both (env's message differs)
env ./noexec >/dev/null 2>&1
erc=$?
"$FLUSHKIT" exec -- ./noexec >/dev/null 2>&1
frc=$?
[ "$erc" = 126 ] && [ "$frc" = 126 ] ||
	{ echo "FAIL: ./noexec: flushkit exec $frc, env $erc (want 126)"; fail=1; }
[ $fail = 0 ] && echo PASS
exit $fail
