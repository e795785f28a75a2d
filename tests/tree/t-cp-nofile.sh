#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-nofile.sh - 'flushkit cp' and 'flushkit sync' under low descriptor
# limits (ulimit -n, soft and hard): at 64, 256 and the default, every
# method copies (syncs) a tree of 2000 files and a chain of directories
# 100 levels deep with exit 0, nothing on stderr, every file's content,
# mode and mtime (ns) and every directory's mtime right.  At an absurd
# limit (12), a clear error naming the limit, exit 1, no "ok".
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp-nofile.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

src=$t/src
mkdir -p "$src"
for d in $(seq 1 20); do
	mkdir "$src/d$d"
	for f in $(seq 1 100); do
		printf 'file %s/%s\n' "$d" "$f" >"$src/d$d/f$f"
	done
done
deep=$src/deep
for i in $(seq 1 100); do deep=$deep/l$i; done
mkdir -p "$deep"
p=$src/deep
for i in $(seq 1 100); do
	p=$p/l$i
	printf 'level %s\n' "$i" >"$p/at$i"
done
# Old times, bottom-up (a directory after its contents).
find "$src" -depth -exec touch -h -d @1111111111.123456789 {} +
nr_files=$(find "$src" -type f | wc -l)

describe() { (cd "$1" && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort); }
want=$(describe "$src")

run_limited() { # run_limited LIMIT CMD...: the command under ulimit -n
	local lim=$1
	shift
	if [ "$lim" = default ]; then
		"$@"
	else
		(ulimit -n "$lim" && exec "$@")
	fi
}

for lim in 64 256 default; do
	for m in writeback delayed fsync-each syncfs; do
		dst=$t/dst-$lim-$m
		run_limited $lim "$FLUSHKIT" cp --summary --method=$m "$src" "$dst" >"$t/out" 2>"$t/err"
		rc=$?
		[ $rc -eq 0 ] || bad "ulimit -n $lim, cp --method=$m: exit $rc: $(head -c 600 "$t/err")"
		[ ! -s "$t/err" ] || bad "ulimit -n $lim, cp --method=$m: stderr: $(grep -c . "$t/err") lines, first: $(head -1 "$t/err")"
		grep -q ": ok (method $m)" "$t/out" || bad "ulimit -n $lim, cp --method=$m: no ok"
		diff -r "$src" "$dst" >/dev/null || bad "ulimit -n $lim, cp --method=$m: content differs"
		[ "$(describe "$dst")" = "$want" ] ||
			bad "ulimit -n $lim, cp --method=$m: metadata differs: $(diff <(echo "$want") <(describe "$dst") | grep -c '^>') entries"
		echo "ulimit -n $lim cp $m: exit $rc, $(grep '^  files' "$t/out" | tr -s ' ')"
		rm -rf "$dst"
	done
	for m in twopass fsync syncfs; do
		run_limited $lim "$FLUSHKIT" sync --summary --method=$m "$src" >"$t/out" 2>"$t/err"
		rc=$?
		[ $rc -eq 0 ] || bad "ulimit -n $lim, sync --method=$m: exit $rc: $(head -c 600 "$t/err")"
		[ ! -s "$t/err" ] || bad "ulimit -n $lim, sync --method=$m: stderr: $(head -1 "$t/err")"
		grep -q "^files: *$nr_files " "$t/out" || bad "ulimit -n $lim, sync --method=$m: files: $(grep '^files' "$t/out")"
		echo "ulimit -n $lim sync $m: exit $rc"
	done
done

# An absurd limit: a clear error, exit 1, no "ok", nothing copied durable.
for m in writeback fsync-each syncfs; do
	run_limited 12 "$FLUSHKIT" cp --summary --method=$m "$src" "$t/dst-12-$m" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 1 ] || bad "ulimit -n 12, cp --method=$m: exit $rc (want 1)"
	grep -q "descriptor" "$t/err" || bad "ulimit -n 12, cp: no clear error: $(head -3 "$t/err")"
	[ "$(grep -c . "$t/err")" -le 3 ] || bad "ulimit -n 12, cp: $(grep -c . "$t/err") lines on stderr"
	grep -q ": ok" "$t/out" && bad "ulimit -n 12, cp --method=$m: says ok"
done
echo "ulimit -n 12: $(head -1 "$t/err")"
# Several sources (their hard links kept across them, so one run):
# the limit is said once, not once per source.
mkdir -p "$t/dst-12-many" "$t/s1" "$t/s2" "$t/s3"
echo x >"$t/s1/x" && ln "$t/s1/x" "$t/s2/x" && ln "$t/s1/x" "$t/s3/x"
run_limited 12 "$FLUSHKIT" cp "$t/s1" "$t/s2" "$t/s3" "$t/dst-12-many/" >"$t/out" 2>"$t/err"
rc=$?
[ $rc -eq 1 ] || bad "ulimit -n 12, cp of three sources: exit $rc (want 1)"
n=$(grep -c "descriptor limit" "$t/err")
[ "$n" -eq 1 ] || bad "ulimit -n 12, cp of three sources: the limit said $n times: $(cat "$t/err")"
echo "ulimit -n 12, three sources: the limit said $n time(s)"
for m in twopass fsync syncfs; do
	run_limited 12 "$FLUSHKIT" sync --summary --method=$m "$src" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 1 ] || bad "ulimit -n 12, sync --method=$m: exit $rc (want 1)"
	grep -q "descriptor" "$t/err" || bad "ulimit -n 12, sync: no clear error: $(head -3 "$t/err")"
	grep -q "ok: durable" "$t/out" && bad "ulimit -n 12, sync --method=$m: says ok"
done

[ $fail -eq 0 ] && echo "t-cp-nofile: ok"
exit $fail
