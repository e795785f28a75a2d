#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-progress.sh - 'flushkit cp --progress' with stderr on a pipe (a
# log): at most one line a second, and the lines show the durability
# work (fsync counts) as well as the copy; the summary names each
# file's two fsyncs (data, then times).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp-progress.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$t/src"
for i in $(seq 1 2000); do
	head -c 8192 /dev/urandom >"$t/src/f$i"
done
# fsync-each: one fsync per file while copying, slow enough to last
# more than a second or two here.
start=$(date +%s.%N)
"$FLUSHKIT" cp --summary --progress --method=fsync-each "$t/src" "$t/dst" \
	>"$t/out" 2> >(while IFS= read -r l; do
		printf '%s %s\n' "$(date +%s.%N)" "$l"
	done >"$t/err")
rc=$?
end=$(date +%s.%N)
sleep 0.2	# the reader of the pipe
[ $rc -eq 0 ] || bad "exit $rc"
lines=$(grep -c 'copied .* files' "$t/err")
secs=$(echo "$end - $start" | bc)
echo "progress: $lines lines in $secs s"
# One line a second at most: never two within 0.9 s.
awk '{ if (NR > 1 && $1 - prev < 0.9) { print "too close: " prev " " $1; bad = 1 } prev = $1 }
	END { exit bad }' "$t/err" || bad "progress lines closer than a second: $(cat "$t/err")"
if [ "$(echo "$secs > 2.5" | bc)" -eq 1 ]; then
	[ "$lines" -ge 1 ] || bad "no progress line in $secs s"
fi
if [ "$lines" -ge 1 ]; then
	grep -q 'fsync [1-9][0-9]* files' "$t/err" ||
		bad "progress does not show the fsyncs: $(cat "$t/err")"
fi
grep -q $'\r' "$t/err" && bad "carriage return on a pipe"
grep -q '^  fsync         4000 files, 3 directories (each twice: contents, then times)$' "$t/out" ||
	bad "summary: $(cat "$t/out")"

[ $fail -eq 0 ] && echo "t-cp-progress: ok"
exit $fail
