#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench tpcb and the store's open: a run never creates a store
# (a mistyped --data-dir is an error naming it, and nothing is created),
# and two invocations on one data directory cannot both have it: while a
# run is going, a second run, a --check alone and a -i each exit 1 with a
# message naming the directory, print nothing misleading before it (no
# "dropping old tables...") and change nothing; the first run's
# consistency check stays OK.
set -u
fail=0
t=$(mktemp -d /var/tmp/fk-t-tpcb-open.XXXXXX)
bg=
trap '[ -n "$bg" ] && kill "$bg" 2>/dev/null; rm -rf "$t"' EXIT
cd "$t" || exit 1
small=(--shared-buffers 2M --checkpoint-timeout 1s --wal-segment-size 1MB)

err() { echo "FAIL: $*"; fail=1; }
has() { grep -q -- "$2" "$1" || err "'$2' not in $1: $(cat "$1")"; }
listing() { (cd "$1" && find . -printf '%p %y %s %T@\n' | sort &&
	find . -type f -exec md5sum {} + | sort); }

# No store: a run and a --check alone exit 1, name the path, create nothing.
for args in "-t 10" "--check"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb $args --data-dir "$t/typo" >typo.out 2>&1
	rc=$?
	echo "bench tpcb $args --data-dir typo: exit $rc: $(cat typo.out)"
	[ $rc -eq 1 ] || err "'$args' on a missing directory: exit $rc"
	has typo.out "no store in '$t/typo'"
	[ -e "$t/typo" ] && err "'$args' created $t/typo: $(ls -la "$t/typo")"
	rm -rf "$t/typo"
done
mkdir "$t/empty"
"$FLUSHKIT" bench tpcb -t 10 --data-dir "$t/empty" >empty.out 2>&1
rc=$?
echo "bench tpcb -t 10 --data-dir empty: exit $rc: $(cat empty.out)"
[ $rc -eq 1 ] || err "run on an empty directory: exit $rc"
has empty.out "no store in '$t/empty'"
[ -z "$(ls -A "$t/empty")" ] || err "files created in $t/empty: $(ls -A "$t/empty")"

# A store, and a run on it that lasts.
d=$t/data
"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" "${small[@]}" >init.out 2>&1 ||
	err "init exit $?: $(cat init.out)"
"$FLUSHKIT" bench tpcb -c 2 -T 8 -P 1 --check --data-dir "$d" \
	"${small[@]}" >first.out 2>first.err &
bg=$!
for _ in $(seq 100); do
	grep -q '^progress: ' first.err && break
	sleep 0.2
done
grep -q '^progress: ' first.err || err "first run not going: $(cat first.err)"

# While it runs: each second invocation is refused and changes nothing.
i=0
for args in "-c 1 -t 50" "--check" "-i -s 1"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb $args --data-dir "$d" "${small[@]}" \
		>second$i.out 2>&1
	rc=$?
	echo "while a run is going: bench tpcb $args: exit $rc: $(cat second$i.out)"
	[ $rc -eq 1 ] || err "'$args' while a run is going: exit $rc"
	has second$i.out "data directory '$d' is in use"
	grep -q "transaction type" second$i.out &&
		err "'$args' ran transactions on a live store"
	# Nothing misleading before the refusal (pgbench says "dropping
	# old tables..." only when it drops them).
	grep -q "dropping old tables" second$i.out &&
		err "'$args' said it was dropping the tables of a live store: $(cat second$i.out)"
done
wait "$bg"
rc=$?
bg=
[ $rc -eq 0 ] || err "first run exit $rc: $(cat first.out first.err)"
has first.out "consistency check: OK"
"$FLUSHKIT" bench tpcb --check --data-dir "$d" >check.out 2>&1 ||
	err "check after exit $?: $(cat check.out)"
has check.out "consistency check: OK"

# A refused open changes no file: a store held by a run paused in its
# clients (SIGSTOP) does not change under the refused calls.
"$FLUSHKIT" bench tpcb -c 1 -T 30 -P 1 --data-dir "$d" "${small[@]}" \
	>held.out 2>held.err &
bg=$!
for _ in $(seq 100); do
	grep -q '^progress: ' held.err && break
	sleep 0.2
done
kill -STOP "$bg"
sleep 0.5
listing "$d" >before.lst
for args in "-c 1 -t 50" "--check" "-i -s 1"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb $args --data-dir "$d" "${small[@]}" \
		>/dev/null 2>&1 && err "'$args' on a held store exit 0"
done
listing "$d" >after.lst
kill -CONT "$bg"
cmp -s before.lst after.lst ||
	err "refused calls changed the directory: $(diff before.lst after.lst)"
kill -INT "$bg" 2>/dev/null
wait "$bg"
bg=
"$FLUSHKIT" bench tpcb --check --data-dir "$d" >check2.out 2>&1 ||
	err "check after the held run exit $?: $(cat check2.out)"
has check2.out "consistency check: OK"

# A damaged store (its catalog gone, its control file kept) is said to be
# damaged, never "no store ... create one with -i" (which would replace
# it); nothing changes.
cp -a "$d" dmg && rm dmg/catalog
listing dmg >dmg-before.lst
"$FLUSHKIT" bench tpcb --check --data-dir dmg >dmg.out 2>&1
rc=$?
[ $rc -eq 1 ] || err "damaged store: exit $rc"
has dmg.out "catalog file 'catalog' is missing"
has dmg.out "the store in 'dmg' is damaged"
grep -q "create one" dmg.out && err "damaged store: told to create one: $(cat dmg.out)"
listing dmg >dmg-after.lst
cmp -s dmg-before.lst dmg-after.lst || err "damaged store changed: $(diff dmg-before.lst dmg-after.lst)"

[ $fail -eq 0 ] && echo ok
exit $fail
