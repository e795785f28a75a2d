#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bash completion (completion/flushkit.bash) completes what the command's
# --help offers: the commands, the benchmark kinds, each command's
# options, and option values (--method=, --sync-io=, --flush=), also
# when bash splits the word at "="; and "cmake --install" puts it where
# bash-completion looks (share/bash-completion/completions/flushkit).
set -u
fail() { echo "FAIL: $*"; exit 1; }
src=${FK_SRC:?}
build=$(dirname "$FLUSHKIT")
f=$src/completion/flushkit.bash
[ -f "$f" ] || fail "no completion/flushkit.bash"
# shellcheck source=/dev/null
. "$f"
complete -p flushkit >/dev/null 2>&1 || fail "the file does not register a completion for flushkit"

comp() {	# WORD... (the last is the one completed; "" for a new word)
	COMP_WORDS=("$FLUSHKIT" "$@")
	COMP_CWORD=$#
	COMP_LINE="flushkit $*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_flushkit
	printf '%s\n' "${COMPREPLY[@]}"
}
want() {	# WHAT EXPECTED... -- WORD...
	local what=$1 got
	shift
	local -a exp=()
	while [ "$1" != -- ]; do exp+=("$1"); shift; done
	shift
	got=$(comp "$@")
	for e in "${exp[@]}"; do
		grep -qx -- "$e" <<<"$got" || fail "$what: '$e' not offered for 'flushkit $*' (got: $(echo $got))"
	done
	echo "ok: $what: flushkit $* -> $(echo $got | cut -c1-100)"
}
want commands sync cp bench monitor report compare -- ""
want "command prefix" cp compare -- c
[ "$(comp c | grep -c .)" -eq 2 ] || fail "'flushkit c' offers more than cp, compare"
want kinds tpcb fsmark sync series -- bench ""
want "sync options" --method= --sync-io= --jobs= --json --progress -- sync --
want "cp options" --drop-cache --flush-after= -- cp --
want "tpcb options" --checkpoint-timeout= --check -- bench tpcb --ch
want "tpcb options" --shared-buffers= --max-wal-size= --flush= -- bench tpcb --
want "fsmark options" -S --queue-depth -- bench fsmark -
want "sync --method=" auto twopass fsync syncfs -- sync --method =
want "sync --method=tw" twopass -- sync --method = tw
want "cp --method= (table in the help)" auto writeback delayed fsync-each syncfs -- cp --method =
want "cp --sync-io=" auto uring threads sequential -- cp --sync-io =
want "tpcb --flush=" naive smooth -- bench tpcb --flush =
want "unsplit --flush=sm" smooth -- bench tpcb --flush=sm
[ "$(comp cp --method = | grep -c .)" -eq 5 ] || fail "cp --method= offers: $(comp cp --method = | tr '\n' ' ')"
# The first operand where the usage spells its words; an option named
# only in a help's prose is not offered (report's "--results").
want "reproduce operands" 000 001 002 003 004 all -- reproduce ""
want "disk subcommands" create list stats cut poweron fault destroy cleanup replay -- disk ""
comp report -- | grep -qx -- --results && fail "report -- offers --results, which report refuses"
want "report options" --output --svg -- report --
comp sync "" | grep -qx 000 && fail "sync's operand completes to reproduce's words"
# exec: the command, then (bash-completion loaded or not) its arguments.
want "exec COMMAND" tar -- exec ta
want "exec -- COMMAND" tar -- exec -- ta
want "exec --stats COMMAND" tar -- exec --stats ta
comp exec ta | grep -qx tar || fail "exec ta: no tar"

base=$(mktemp -d "${TMPDIR:-/var/tmp}/t-completion.XXXXXX")
trap 'rm -rf "$base"' EXIT
DESTDIR=$base/root cmake --install "$build" --prefix /usr >"$base/log" 2>&1 || { cat "$base/log"; fail install; }
[ -f "$base/root/usr/share/bash-completion/completions/flushkit" ] ||
	fail "not installed as share/bash-completion/completions/flushkit"
if pkg-config --exists bash-completion 2>/dev/null; then
	d=$(pkg-config --variable=completionsdir bash-completion)
	[ "$d" = /usr/share/bash-completion/completions ] ||
		echo "note: bash-completion's completionsdir is $d"
fi
echo ok
