#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-sync.sh - smoke test of the real "flushkit sync" binary on a small
# tree: every method exits 0 and counts the tree right, --json is one
# JSON object with the counts, usage errors exit 2, a missing PATH
# exits 1 naming it, and a FIFO in the tree does not block the command.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
fail=0
t=$(mktemp -d /var/tmp/t-sync.XXXXXX) || exit 1
trap 'rm -rf "$t"' EXIT

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if ! "$@"; then
		echo "FAIL: $what"
		fail=1
	fi
}

mkdir -p "$t/tree/sub dir/deep"
head -c 300000 /dev/urandom >"$t/tree/big"
: >"$t/tree/empty"
printf 'x\n' >"$t/tree/sub dir/deep/one"
ln "$t/tree/sub dir/deep/one" "$t/tree/two"
ln -s big "$t/tree/link"
mkfifo "$t/tree/fifo"
# 3 file inodes, 3 directories, 1 hard link, 1 symlink, 1 special.

for m in twopass fsync syncfs; do
	out=$(timeout 20 "$FLUSHKIT" sync --summary --method=$m "$t/tree" 2>"$t/err")
	rc=$?
	check "$m exits 0 (got $rc)" test "$rc" -eq 0
	check "$m: files" grep -q '^files: *3 (1 more hard links)$' <<<"$out"
	check "$m: directories" grep -q '^directories: *3$' <<<"$out"
	check "$m: result" grep -q '^result: *ok: durable$' <<<"$out"
	check "$m: nothing on stderr" test ! -s "$t/err"
	echo "--- $m"
	echo "$out"
done

out=$("$FLUSHKIT" sync --json "$t/tree")
check "json exit" test $? -eq 0
echo "$out"
check "json is one line" test "$(wc -l <<<"$out")" -eq 1
check "json files" grep -q '"files":3,' <<<"$out"
check "json dirs" grep -q '"dirs":3,' <<<"$out"
check "json fsync_calls" grep -q '"fsync_calls":3,' <<<"$out"
check "json result" grep -q '"result":"ok"' <<<"$out"
if command -v python3 >/dev/null; then
	check "json parses" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$out"
else
	echo "not checked: sync --json parses as JSON (no python3)"
fi

# GNU sync's command line: quiet, usage errors exit 1 as GNU sync's.
out=$("$FLUSHKIT" sync "$t/tree" 2>"$t/err")
check "plain sync exits 0" test $? -eq 0
check "plain sync prints nothing" test -z "$out" -a ! -s "$t/err"
"$FLUSHKIT" sync >/dev/null 2>&1
check "no PATH (sync(2)) exits 0" test $? -eq 0
"$FLUSHKIT" sync --summary >/dev/null 2>&1
check "--summary without PATH exits 1" test $? -eq 1
"$FLUSHKIT" sync --method=nope "$t/tree" >/dev/null 2>&1
check "bad method exits 1" test $? -eq 1
"$FLUSHKIT" sync --nope "$t/tree" >/dev/null 2>&1
check "bad option exits 1" test $? -eq 1
"$FLUSHKIT" sync -d -f "$t/tree" >/dev/null 2>"$t/err"
check "-d -f exits 1" test $? -eq 1
check "-d -f in GNU's words" test "$(cat "$t/err")" = "flushkit sync: cannot specify both --data and --file-system"
"$FLUSHKIT" sync --data >/dev/null 2>"$t/err"
check "-d without PATH exits 1" test $? -eq 1
check "-d without PATH in GNU's words" test "$(cat "$t/err")" = "flushkit sync: --data needs at least one argument"
for o in -d -f --data --file-system; do
	out=$("$FLUSHKIT" sync --summary $o "$t/tree/big" "$t/tree" 2>"$t/err")
	check "$o FILE DIR exits 0" test $? -eq 0
	check "$o: result" grep -q '^result: *ok: durable$' <<<"$out"
done
# A FIFO operand: not blocked on, fsync's EINVAL named, exit 1 (GNU's).
timeout 10 "$FLUSHKIT" sync "$t/tree/fifo" >/dev/null 2>"$t/err"
check "FIFO operand exits 1" test $? -eq 1
check "FIFO operand named" grep -qx "flushkit sync: error syncing '$t/tree/fifo': Invalid argument" "$t/err"
"$FLUSHKIT" sync --help | grep -q '^usage: flushkit sync'
check "--help" test $? -eq 0
"$FLUSHKIT" sync "$t/missing" >/dev/null 2>"$t/err"
check "missing PATH exits 1" test $? -eq 1
check "missing PATH named" grep -q "^flushkit sync: error opening '$t/missing': No such file or directory$" "$t/err"

[ $fail -eq 0 ] && echo "t-sync: all checks passed"
exit $fail
