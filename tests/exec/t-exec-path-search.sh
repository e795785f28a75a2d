#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-exec-path-search.sh - "flushkit exec -- NAME" finds NAME in PATH as
# env(1) (glibc's execvp) does: an empty PATH entry (leading, doubled,
# trailing ':', or PATH set to "") is the current directory, and the
# command then runs as "NAME" (its $0), not "./NAME"; a directory or a
# non-executable file of that name in an earlier entry is passed over.
# Exit status and stdout are compared with env's.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-exec-path-search.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1

printf '#!/bin/sh\necho "here $0 [$1]"\nexit 5\n' >fk-here-cmd
chmod 755 fk-here-cmd
mkdir -p d1/fk-later-cmd d2 d3
printf 'echo "not executable"\n' >d2/fk-later-cmd
chmod 644 d2/fk-later-cmd
printf '#!/bin/sh\necho "later $0"\n' >d3/fk-later-cmd
chmod 755 d3/fk-later-cmd

same() { # same DESCRIPTION PATH ARGS...: env ARGS vs flushkit exec -- ARGS
	local what=$1 p=$2
	shift 2
	PATH=$p "$envcmd" "$@" >env.out 2>env.err
	local erc=$?
	PATH=$p "$FLUSHKIT" exec -- "$@" >fk.out 2>fk.err
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

envcmd=$(command -v env) || exit 1
sys=/usr/bin:/bin
same "leading empty PATH entry" ":$sys" fk-here-cmd a
same "doubled ':' in PATH" "/usr/bin::/bin" fk-here-cmd a
same "trailing empty PATH entry" "$sys:" fk-here-cmd a
same "PATH empty" "" fk-here-cmd a
grep -q '^here fk-here-cmd \[a\]$' env.out ||
	{ echo "FAIL: env itself gave '$(cat env.out)'"; fail=1; }
same "directory, then non-executable, then the command" \
	"$t/d1:$t/d2:$t/d3:$sys" fk-later-cmd
same "only a non-executable file (126)" "$t/d1:$t/d2:$sys" fk-later-cmd
same "nowhere (127)" "$sys" fk-no-such-cmd
[ $fail = 0 ] && echo PASS
exit $fail
