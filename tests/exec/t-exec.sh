#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-exec.sh - "flushkit exec" as a newcomer meets it: tar xf under it
# gives the same tree; the command's exit status passes through (128+N
# for a signal), usage errors are 2, not found 127, not executable 126;
# static programs and set-user-ID ones of another user are refused (exit
# 1) unless --force, root's own set-user-ID program runs under the shim;
# --stats prints per-process counters; a malformed variable disables
# the shim with one message and changes nothing else.  And what the
# shim must leave alone (O_DIRECT, pipes, /proc, /dev/null) gets no
# sync_file_range at all (strace -f; skipped without strace), while a
# regular file in the same run does.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
so=$(dirname "$FLUSHKIT")/libflushkit-preload.so
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-exec.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if ! "$@"; then
		echo "FAIL: $what"
		fail=1
	fi
}
status() { # status EXPECTED DESCRIPTION COMMAND...: exit status is EXPECTED
	local want=$1 what=$2
	shift 2
	"$@" >"$t/out" 2>"$t/err"
	local rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $what: exit $rc, want $want"
		sed 's/^/    /' "$t/err"
		fail=1
	fi
}

check "shim built at $so" test -r "$so"
# It exports only the libc names it replaces: none of the library's.
check "shim exports no fk_ symbol" test -z "$(nm -D --defined-only "$so" | awk '{print $3}' | grep '^fk_')"
check "shim exports write" test -n "$(nm -D --defined-only "$so" | awk '$3 == "write"')"

# tar xf under flushkit exec: the same tree.
mkdir -p "$t/src/sub"
head -c 3000000 /dev/urandom >"$t/src/big"
for i in $(seq 1 50); do echo "file $i" >"$t/src/sub/f$i"; done
tar cf "$t/src.tar" -C "$t" src
mkdir "$t/x"
status 0 "tar xf" "$FLUSHKIT" exec --stats -- tar xf "$t/src.tar" -C "$t/x"
check "tar tree identical" diff -r "$t/src" "$t/x/src"
check "--stats summary" grep -q '^flushkit exec: 1 process reported: wrote ' "$t/err"
check "--stats per process" grep -q '^flushkit-preload: pid=[0-9]* files=5[0-9] ' "$t/err"
cat "$t/err"

# The defaults flushkit exec hands the shim are the documented ones
# (--max-dirty 8M, --flush-after 1M).
"$FLUSHKIT" exec -- env >"$t/env" 2>&1
check "default FLUSHKIT_MAX_DIRTY is 8 MiB" grep -qx 'FLUSHKIT_MAX_DIRTY=8388608' "$t/env"
check "default FLUSHKIT_FLUSH_AFTER is 1 MiB" grep -qx 'FLUSHKIT_FLUSH_AFTER=1048576' "$t/env"

# Exit statuses.
status 0 "true" "$FLUSHKIT" exec true
status 7 "exit 7" "$FLUSHKIT" exec -- sh -c 'exit 7'
status 143 "SIGTERM is 128+15" "$FLUSHKIT" exec -- sh -c 'kill -TERM $$'
status 137 "SIGKILL is 128+9" "$FLUSHKIT" exec -- sh -c 'kill -KILL $$'
status 2 "no command" "$FLUSHKIT" exec
status 2 "unknown option" "$FLUSHKIT" exec --nope true
status 2 "bad size" "$FLUSHKIT" exec --max-dirty lots true
status 2 "flush-after < 4k" "$FLUSHKIT" exec --flush-after 1k true
status 2 "max-dirty < flush-after" "$FLUSHKIT" exec --flush-after 8M --max-dirty 4M true
status 0 "max-dirty 0" "$FLUSHKIT" exec --max-dirty 0 true
status 0 "--help" "$FLUSHKIT" exec --help
status 127 "not found" "$FLUSHKIT" exec no-such-command-here
check "not found named" grep -q "exec 'no-such-command-here': No such file" "$t/err"
printf '#!/bin/sh\nexit 0\n' >"$t/noexec"
chmod 644 "$t/noexec"
status 126 "not executable" "$FLUSHKIT" exec "$t/noexec"
status 127 "missing path" "$FLUSHKIT" exec "$t/missing"
# Options after COMMAND are COMMAND's.
status 0 "COMMAND's own options" "$FLUSHKIT" exec sh -c 'exit 0' --max-dirty x

# Static programs are refused (exit 1) unless --force.
static=""
if command -v cc >/dev/null &&
	printf 'int main(void){return 5;}\n' >"$t/s.c" &&
	cc -static -o "$t/static" "$t/s.c" 2>/dev/null; then
	static=$t/static
fi
if [ -n "$static" ]; then
	status 1 "static refused" "$FLUSHKIT" exec "$static"
	check "static named" grep -q "statically linked" "$t/err"
	status 5 "static with --force" "$FLUSHKIT" exec --force "$static"
else
	echo "note: no static C toolchain: static check with /sbin/ldconfig only"
fi
if [ -x /sbin/ldconfig ] && ! grep -q . <(readelf -l /sbin/ldconfig 2>/dev/null | grep INTERP); then
	status 1 "static-pie ldconfig refused" "$FLUSHKIT" exec /sbin/ldconfig --version
	check "ldconfig named" grep -q "statically linked" "$t/err"
fi

# Set-user-ID programs of another user are refused unless --force (root:
# owned by nobody).
if [ "$(id -u)" -eq 0 ]; then
	cp /bin/true "$t/suid"
	chown nobody "$t/suid" && chmod 4755 "$t/suid"
	status 1 "setuid refused" "$FLUSHKIT" exec "$t/suid"
	check "setuid named" grep -q "set-user-ID" "$t/err"
	status 0 "setuid with --force" "$FLUSHKIT" exec --force "$t/suid"
	# Root's own set-user-ID program changes no credentials: not in
	# secure mode, it runs under the shim (docs/exec.md).
	cp /bin/true "$t/rootsuid" && chmod 4755 "$t/rootsuid"
	status 0 "root's own setuid program runs" "$FLUSHKIT" exec --stats "$t/rootsuid"
	check "root's own setuid program: under the shim" \
		grep -q '^flushkit exec: 1 process reported' "$t/err"
fi

# A malformed variable: one message, the program unchanged.
LD_PRELOAD=$so FLUSHKIT_MAX_DIRTY=abc sh -c 'echo out; exit 3' >"$t/out" 2>"$t/err"
rc=$?
check "malformed: exit 3 (got $rc)" test $rc -eq 3
check "malformed: output kept" grep -qx out "$t/out"
check "malformed: one message" test "$(grep -c 'flushkit-preload: malformed FLUSHKIT_MAX_DIRTY' "$t/err")" -eq 1
cat "$t/err"

# Left alone: O_DIRECT, a pipe, /proc, /dev/null; a regular file is not.
if command -v strace >/dev/null; then
	# (LeakSanitizer cannot run under ptrace: a sanitized build's flushkit)
	ASAN_OPTIONS=detect_leaks=0 strace -f -y -qq -e trace=sync_file_range,fadvise64 -o "$t/strace" \
		"$FLUSHKIT" exec --stats="$t/stats" -- sh -c "
		dd if=/dev/zero of='$t/direct' bs=1M count=8 oflag=direct status=none
		dd if=/dev/zero bs=1M count=8 status=none | cat >/dev/null
		printf flushkit | dd of=/proc/self/comm status=none
		dd if=/dev/zero of=/dev/null bs=1M count=8 status=none
		dd if=/dev/zero of='$t/regular' bs=1M count=8 status=none"
	check "strace run exit 0" test $? -eq 0
	echo "--- strace"
	cat "$t/strace"
	echo "--- stats"
	cat "$t/stats"
	check "regular file hinted" grep -q "sync_file_range([0-9]*<$t/regular>" "$t/strace"
	check "nothing else hinted" test -z "$(grep sync_file_range "$t/strace" | grep -v "<$t/regular>")"
	check "no DONTNEED" test -z "$(grep 'fadvise64.*DONTNEED' "$t/strace")"
	check "O_DIRECT counted" grep -q ' ignored_direct=[1-9]' "$t/stats"
	check "/proc counted" grep -q ' ignored_pseudo=[1-9]' "$t/stats"
	check "pipe, /dev/null counted" grep -q ' ignored_notreg=[1-9]' "$t/stats"
else
	echo "note: no strace: the untouched-descriptor check is not run"
fi

# --stats=FILE relative: one file, resolved where flushkit exec runs, not
# in each process's directory at its exit (a child that cd's elsewhere
# appended its line to whatever file of that name was there); an
# unwritable FILE fails before the command runs.
mkdir -p "$t/st/sub"
echo precious >"$t/st/sub/notes"
(cd "$t/st" && "$FLUSHKIT" exec --stats=notes -- sh -c \
	'cd sub && dd if=/dev/zero of=zz bs=1M count=2 status=none') >/dev/null 2>&1
check "--stats=relative: exit 0" test $? -eq 0
check "--stats=relative: a file where exec ran" grep -q "pid=" "$t/st/notes"
check "--stats=relative: the child's directory untouched" \
	test "$(cat "$t/st/sub/notes")" = precious
status 1 "--stats into /proc" "$FLUSHKIT" exec --stats=/proc/nope -- true
check "--stats into /proc: says so" grep -q "/proc/nope" "$t/err"

# Statistics go by path, never to a descriptor of the program's (bash:
# dash leaves by _exit, no line at all): a
# program that reopened fd 2 on a data file keeps its data byte-exact
# (with --stats and --stats=-), and its line still reaches our stderr.
for mode in --stats --stats=-; do
	rm -f "$t/data"
	status 0 "$mode, fd 2 a data file" "$FLUSHKIT" exec "$mode" -- bash -c \
		'exec 2>"$1"; printf "payload\n" >&2' bash "$t/data"
	check "$mode: the program's data untouched" \
		test "$(cat "$t/data")" = payload
	check "$mode: its line on flushkit's stderr" \
		grep -q '^flushkit-preload: pid=[0-9]* files=1 ' "$t/err"
done
# A program that closes stderr at exit (coreutils' close_stdout) keeps
# its line.
status 0 "--stats=-, cp" "$FLUSHKIT" exec --stats=- -- cp "$t/src/big" "$t/cpy"
check "--stats=-, cp: its line" grep -q '^flushkit-preload: pid=.* bytes_written=3000000 ' "$t/err"
# A FIFO, a device, /dev/full: refused before the command runs, naming
# the path (a FIFO hung before the command started; /dev/full lost the
# lines and exited 0).
mkfifo "$t/fifo"
status 1 "--stats=FIFO refused" timeout 20 "$FLUSHKIT" exec --stats="$t/fifo" -- touch "$t/ran"
check "--stats=FIFO: names it" grep -q "$t/fifo" "$t/err"
check "--stats=FIFO: the command did not run" test ! -e "$t/ran"
status 1 "--stats=/dev/full refused" "$FLUSHKIT" exec --stats=/dev/full -- touch "$t/ran"
check "--stats=/dev/full: names it" grep -q "/dev/full" "$t/err"
check "--stats=/dev/full: the command did not run" test ! -e "$t/ran"
# A process at its descriptor limit cannot open the stats file at exit:
# the summary counts the lines it got, and says so.
status 0 "--stats at the fd limit" "$FLUSHKIT" exec --stats -- bash -c \
	'ulimit -n 3; true'
check "--stats: 'N processes reported'" \
	grep -q '^flushkit exec: [0-9]* process\(es\)\? reported: ' "$t/err"

exit $fail
