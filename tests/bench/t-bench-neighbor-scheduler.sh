#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-scheduler.sh - "bench neighbor --scheduler=NAME" runs
# every configuration under that I/O scheduler of the disk and puts the
# disk's own back: on a loop ext4 of its own, a run with another
# scheduler than the loop device's names it in the banner and in each
# run's settings ("scheduler":"NAME"), and the queue has its scheduler
# of before after the run; a run SIGKILLed under it leaves NAME, and
# "bench neighbor --cleanup" restores the one before and says so; a
# name the disk does not offer is refused before anything runs (exit 1,
# the offered list named, the scheduler unchanged); a malformed name is
# a usage error (exit 2).  Not root: skip (77).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
# shellcheck source=lib/fkloop.sh
. "$(dirname "$0")/../lib/fkloop.sh"
fkt_loop_require
fail=0
err() { echo "FAIL: $*"; fail=1; }
orig=""
# the loop device keeps its scheduler after it is detached: put it back
# whatever the code under test left
fkt_loop_cleanup_hook() { [ -n "$orig" ] && echo "$orig" >"$q" 2>/dev/null; }
fkt_loop_setup t-bench-neighbor-scheduler
dir=$t/mnt/fs
mkdir -p "$dir"
fkt_loop_bdi "$dir"
q=/sys/dev/block/$mm/queue/scheduler
cur() { sed 's/.*\[\(.*\)\].*/\1/' "$q"; }
orig=$(cur)
want=""
for s in mq-deadline bfq kyber none; do
	[ "$s" != "$orig" ] && grep -qw -- "$s" "$q" && { want=$s; break; }
done
[ -n "$want" ] || { echo "SKIP: $q offers only $orig"; exit 77; }
echo "disk $mm: $(cat "$q"); runs under $want"

# 1. a run under $want: named, used, restored.
"$FLUSHKIT" bench neighbor --quick --config=plain --scheduler="$want" \
	--dir "$dir" --results "$t/r1" >"$t/r1.out" 2>"$t/r1.err"
rc=$?
[ $rc -eq 0 ] || err "--scheduler=$want: exit $rc: $(tail -3 "$t/r1.err")"
grep -q "^bench neighbor: disk $mm: scheduler $want (restored to $orig at the end)" "$t/r1.out" ||
	err "--scheduler=$want: banner: $(head -2 "$t/r1.out")"
n=$(cat "$t"/r1/rate-stream-plain-r1/neighbor-*.jsonl 2>/dev/null |
	grep -c "\"scheduler\": *\"$want\"")
[ "$n" -ge 1 ] || err "--scheduler=$want: the run's settings do not name it"
[ "$(cur)" = "$orig" ] || err "after the run: scheduler $(cur), was $orig"

# 2. SIGKILL under $want; --cleanup restores the one before.
"$FLUSHKIT" bench neighbor --quick --config=plain --scheduler="$want" \
	-T 20 --dir "$dir" --results "$t/r2" >"$t/r2.out" 2>&1 &
pid=$!
seen=0
for _ in $(seq 1 600); do
	[ "$(cur)" = "$want" ] && grep -q '^rate\|^bench neighbor: dir' "$t/r2.out" &&
		{ seen=1; break; }
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
[ $seen = 1 ] || err "the scheduler was never $want: $(cat "$t/r2.out")"
kill -KILL $pid
wait $pid 2>/dev/null
sleep 0.5
[ "$(cur)" = "$want" ] || echo "note: after SIGKILL the scheduler is $(cur)"
"$FLUSHKIT" bench neighbor --cleanup >"$t/c.out" 2>"$t/c.err"
rc=$?
[ $rc -eq 0 ] || err "--cleanup: exit $rc: $(cat "$t/c.err")"
[ "$(cur)" = "$orig" ] || err "after --cleanup: scheduler $(cur), was $orig"
grep -q "restored $q to $orig left by a killed run (pid $pid)" "$t/c.err" ||
	err "--cleanup did not say what it restored: $(cat "$t/c.err")"
rm -rf "$dir/nb" "$dir/tpcb" "$dir/.flushkit-neighbor.lock"

# 3. a scheduler the disk does not offer: refused, nothing changed.
"$FLUSHKIT" bench neighbor --quick --config=plain --scheduler=nosuch \
	--dir "$dir" --results "$t/r3" >"$t/r3.out" 2>"$t/r3.err"
rc=$?
[ $rc -eq 1 ] || err "--scheduler=nosuch: exit $rc, want 1"
grep -q "scheduler=nosuch: disk $mm offers " "$t/r3.err" ||
	err "--scheduler=nosuch: stderr '$(cat "$t/r3.err")'"
grep -q '^rate ' "$t/r3.out" && err "--scheduler=nosuch: a run ran"
[ "$(cur)" = "$orig" ] || err "--scheduler=nosuch: scheduler $(cur), was $orig"

# 4. a malformed name: a usage error.
"$FLUSHKIT" bench neighbor --quick --scheduler='bfq x' --dir "$dir" \
	--results "$t/r4" >/dev/null 2>"$t/r4.err"
rc=$?
[ $rc -eq 2 ] || err "--scheduler='bfq x': exit $rc, want 2: $(cat "$t/r4.err")"
grep -q "invalid value 'bfq x' for --scheduler" "$t/r4.err" ||
	err "--scheduler='bfq x': stderr '$(cat "$t/r4.err")'"

[ $fail = 0 ] && echo "ok: --scheduler=$want used and restored, after SIGKILL too; bad names refused"
exit $fail
