#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-exec-ioprio.sh - "flushkit exec --ioprio=CLASS[:N]" runs COMMAND at
# that I/O priority, inherited by its children (ionice(1) with no
# arguments prints its own: "idle", "best-effort: prio 3"); without the
# option COMMAND keeps the caller's; a bad value is a usage error (2)
# and runs nothing.  (That the writeback the shim starts carries the
# priority follows from the shim submitting it from COMMAND's context:
# a benchmark's matter, not this test's.)
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
command -v ionice >/dev/null || { echo "SKIP: no ionice"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-exec-ioprio.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT

out=$("$FLUSHKIT" exec --ioprio=idle -- ionice 2>&1)
[ "$out" = idle ] || err "--ioprio=idle: ionice says '$out'"
out=$("$FLUSHKIT" exec --ioprio=be:3 -- sh -c 'ionice' 2>&1)
[ "$out" = "best-effort: prio 3" ] || err "--ioprio=be:3 (a child of sh): '$out'"
out=$("$FLUSHKIT" exec --ioprio=be -- ionice 2>&1)
[ "$out" = "best-effort: prio 4" ] || err "--ioprio=be: '$out'"
want=$(ionice 2>&1)
out=$("$FLUSHKIT" exec -- ionice 2>&1)
[ "$out" = "$want" ] || err "no --ioprio: '$out', the caller's is '$want'"
for bad in idle:3 be:8 be: xx rt:10 ""; do
	"$FLUSHKIT" exec --ioprio="$bad" -- touch "$t/ran" >/dev/null 2>"$t/err"
	rc=$?
	[ $rc -eq 2 ] || err "--ioprio='$bad': exit $rc, want 2"
	grep -qx "flushkit exec: invalid value '$bad' for --ioprio (idle, be\[:0-7\] or rt\[:0-7\])" "$t/err" || err "--ioprio='$bad': stderr '$(cat "$t/err")'"
	[ -e "$t/ran" ] && { err "--ioprio='$bad': the command ran"; rm -f "$t/ran"; }
done
[ $fail = 0 ] && echo PASS
exit $fail
