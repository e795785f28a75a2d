#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-pseudo.sh - files whose st_size lies: procfs files say 0 bytes,
# sysfs files 4096, whatever their content.  'flushkit cp' copies what a
# read gives (as cat and cp -a do), with every method: /proc/cpuinfo,
# /proc/self/status, a /sys/kernel file, and the sysfs directory tree
# /sys/kernel/mm/transparent_hugepage (each file compared with cat, for
# the files whose content did not change during the copy).  And
# 'flushkit sync' on such files neither hangs nor fails: fsync of a
# procfs file or a sysfs directory is not supported (EINVAL), a warning
# and exit 3 (durability degraded); syncfs of them succeeds (exit 0).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
[ -r /proc/cpuinfo ] && [ -d /sys/kernel ] || { echo "no /proc or /sys"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-pseudo.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

thp=/sys/kernel/mm/transparent_hugepage
sysfile=/sys/kernel/mm/transparent_hugepage/enabled
[ -r "$sysfile" ] || sysfile=/sys/kernel/profiling
[ -r "$sysfile" ] || { echo "no readable /sys/kernel file"; exit 77; }

# cpuinfo's "cpu MHz" lines may change from one read to the next.
stable_cpuinfo() { grep -v MHz "$1"; }

for m in writeback delayed fsync-each syncfs; do
	d=$t/$m
	mkdir "$d"
	for f in /proc/cpuinfo /proc/self/status "$sysfile"; do
		b=$(basename "$f")
		"$FLUSHKIT" cp --summary --method=$m "$f" "$d/$b" >"$t/out" 2>"$t/err"
		rc=$?
		[ $rc -eq 0 ] || bad "cp --method=$m $f: exit $rc: $(cat "$t/err")"
		grep -q ": ok (method $m)" "$t/out" || bad "cp $f ($m): no ok"
		[ -s "$d/$b" ] || bad "cp --method=$m $f: empty copy ($(stat -c %s "$d/$b" 2>&1) bytes)"
		! tr -d '\n' <"$d/$b" | grep -q -P '\x00' ||
			bad "cp --method=$m $f: NUL bytes (padded to st_size?)"
	done
	[ "$(stable_cpuinfo "$d/cpuinfo")" = "$(stable_cpuinfo /proc/cpuinfo)" ] ||
		bad "cpuinfo differs from cat ($m)"
	# Through a pipe: cmp trusts st_size and would call them different.
	cat "$sysfile" | cmp -s - "$d/$(basename "$sysfile")" ||
		bad "$sysfile differs from cat ($m): $(stat -c %s "$d/$(basename "$sysfile")") bytes"
	# /proc/self/status of flushkit itself.
	head -1 "$d/status" | grep -q '^Name:[[:space:]]*flushkit' ||
		bad "status ($m) is not flushkit's: $(head -c 80 "$d/status")"
	grep -q '^VmRSS:' "$d/status" || bad "status ($m) has no VmRSS line"
done
echo "cp of /proc/cpuinfo: $(stat -c %s "$t/writeback/cpuinfo") bytes, cat: $(cat /proc/cpuinfo | wc -c)"

# A sysfs tree: each file whose content is the same before and after the
# copy must be copied as cat shows it.
if [ -d "$thp" ]; then
	snap() { (cd "$thp" && find . -type f -readable | LC_ALL=C sort |
		while read -r f; do printf '%s %s\n' "$f" "$(cat "$f" 2>/dev/null | md5sum)"; done); }
	for m in writeback syncfs; do
		before=$(snap)
		"$FLUSHKIT" cp --summary --method=$m "$thp" "$t/thp-$m" >"$t/out" 2>"$t/err"
		rc=$?
		after=$(snap)
		[ $rc -eq 0 ] || bad "cp --method=$m $thp: exit $rc: $(cat "$t/err")"
		stable=0 checked=0
		while read -r f sum _; do
			grep -qxF "$f $sum  -" <<<"$after" || continue
			stable=$((stable + 1))
			got=$(md5sum <"$t/thp-$m/$f")
			if [ "$got" != "$sum  -" ]; then
				bad "$thp/$f copied ($m) differs from cat: $(stat -c %s "$t/thp-$m/$f") bytes, cat $(cat "$thp/$f" | wc -c)"
			fi
			checked=$((checked + 1))
		done <<<"$before"
		[ $checked -ge 10 ] || bad "only $checked stable sysfs files compared"
		echo "cp $thp ($m): $checked stable files compared with cat"
	done
fi

# flushkit sync on pseudo files given as PATH: no hang, GNU sync's
# answer (fsync of a /proc file is EINVAL: named, exit 1).
for m in twopass fsync; do
	timeout 60 "$FLUSHKIT" sync --summary --method=$m /proc/cpuinfo /proc/self/status >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 1 ] || bad "sync --method=$m /proc files: exit $rc (want 1, as GNU sync): $(cat "$t/err")"
	grep -qx "flushkit sync: error syncing '/proc/cpuinfo': Invalid argument" "$t/err" ||
		bad "sync --method=$m: no error naming /proc/cpuinfo: $(cat "$t/err")"
	grep -q "ok: durable" "$t/out" && bad "sync --method=$m /proc files: says ok: durable"
done
timeout 60 "$FLUSHKIT" sync --method=syncfs /proc/cpuinfo /proc/self/status "$thp" >"$t/out" 2>"$t/err"
rc=$?
[ $rc -eq 0 ] || bad "sync --method=syncfs /proc and /sys: exit $rc: $(cat "$t/err")"
if [ -d "$thp" ]; then
	timeout 60 "$FLUSHKIT" sync --method=fsync "$thp" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 3 ] || bad "sync --method=fsync $thp: exit $rc (want 3): $(cat "$t/err")"
fi

[ $fail -eq 0 ] && echo "t-cp-pseudo: ok"
exit $fail
