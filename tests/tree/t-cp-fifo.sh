#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-fifo.sh - 'flushkit cp' of a regular file onto an existing FIFO
# or character device writes into it, as GNU cp -a does (coreutils' test
# cp/sparse-to-pipe.sh): the reader of the FIFO gets the file (a sparse
# one read as its zeros), the FIFO stays a FIFO, exit 0; the same for a
# character device (/dev/null's numbers, made here, as root); with
# --remove-destination both are replaced by a copy, as with cp.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
GNU_CP=${GNU_CP:-/bin/cp}
"$GNU_CP" --version 2>/dev/null | grep -q GNU ||
	{ echo "SKIP: no GNU cp at $GNU_CP to compare with"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-fifo.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

truncate -s 1M "$t/sparse"
printf 'some data\n' >>"$t/sparse"

# onto_fifo CP...: the exit status, what the reader got, the type left.
onto_fifo() {
	rm -f "$t/pipe" "$t/got"
	mkfifo "$t/pipe" || return
	timeout 20 cat "$t/pipe" >"$t/got" &
	pid=$!
	"$@" "$t/sparse" "$t/pipe" >/dev/null 2>"$t/err"
	local rc=$?
	wait "$pid"
	pid=
	echo "exit $rc type $(stat -c %F "$t/pipe")"
	cmp -s "$t/sparse" "$t/got" && echo "reader got the file" ||
		echo "reader got $(stat -c %s "$t/got") bytes"
}
g=$(onto_fifo "$GNU_CP" -a)
k=$(onto_fifo "$FLUSHKIT" cp -a)
[ "$g" = "$k" ] || bad "onto a FIFO: GNU cp '$g', flushkit '$k': $(cat "$t/err")"
case $k in *"reader got the file"*) ;; *) bad "onto a FIFO: $k" ;; esac

# --remove-destination: replaced (no reader needed).
for cp in "$GNU_CP" "$FLUSHKIT cp"; do
	rm -f "$t/pipe"
	mkfifo "$t/pipe"
	# shellcheck disable=SC2086 # $cp: a command and its subcommand
	timeout 20 $cp -a --remove-destination "$t/sparse" "$t/pipe" >/dev/null ||
		bad "$cp --remove-destination onto a FIFO failed"
	cmp -s "$t/sparse" "$t/pipe" && [ -f "$t/pipe" ] ||
		bad "$cp --remove-destination: $(stat -c %F "$t/pipe")"
done

if [ "$(id -u)" -eq 0 ] && mknod "$t/null" c 1 3 2>/dev/null; then
	"$FLUSHKIT" cp -a "$t/sparse" "$t/null" >/dev/null 2>"$t/err" ||
		bad "onto a character device: $(cat "$t/err")"
	[ -c "$t/null" ] || bad "the character device was replaced"
	"$FLUSHKIT" cp -a --remove-destination "$t/sparse" "$t/null" \
		>/dev/null 2>"$t/err" && [ -f "$t/null" ] ||
		bad "--remove-destination onto a character device"
fi
exit $fail
