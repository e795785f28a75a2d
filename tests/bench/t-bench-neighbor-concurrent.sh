#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-concurrent.sh - two "flushkit bench neighbor" runs
# with strict runs on one bdi at once: the second is refused before it
# changes anything (exit 1, naming the bdi and the pid of the run that
# holds it), the first runs to its end undisturbed, and the bdi's
# strict_limit and max ratio are what they were before.  Without that,
# the second saved the first's strict values as the ones to restore
# and each one's restore undid the other's live strict_limit (left
# strict_limit 1 on the disk).  Runs on a loop-mounted ext4 of its own,
# so the bdi is the test's.  A second run in the first one's --dir is
# refused as well (its data and neighbour live there under fixed
# names).  Not root: skip (77).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
# shellcheck source=lib/fkloop.sh
. "$(dirname "$0")/../lib/fkloop.sh"
fkt_loop_require
fail=0
err() { echo "FAIL: $*"; fail=1; }
pa=""
fkt_loop_cleanup_hook() {
	[ -n "$pa" ] && kill "$pa" 2>/dev/null && wait "$pa" 2>/dev/null
}
fkt_loop_setup t-bench-neighbor-concurrent
mkdir -p "$t/mnt/a" "$t/mnt/b"
fkt_loop_bdi "$t/mnt/a"

"$FLUSHKIT" bench neighbor --quick --config=strict --neighbor=tree \
	--tree-src=/usr/share/doc --dir "$t/mnt/a" --results "$t/ra" \
	>"$t/a.out" 2>&1 &
pa=$!
fkt_loop_wait_strict $pa || err "the first run never set strict_limit: $(cat "$t/a.out")"
"$FLUSHKIT" bench neighbor --quick --config=strict --neighbor=tree \
	--tree-src=/usr/share/doc --dir "$t/mnt/b" --results "$t/rb" \
	>"$t/b.out" 2>"$t/b.err"
rc=$?
[ $rc = 1 ] || err "the second run on bdi $mm: exit $rc, want 1 (refused): $(grep 'strict_limit' "$t/b.out")"
grep -q "bdi $mm .*another bench neighbor run (pid $pa)" "$t/b.err" ||
	err "the second run did not name the run holding bdi $mm: $(cat "$t/b.err")"
# A second run in the same --dir (plain: no bdi lock involved) would
# remove the first one's victim data and neighbour output mid-run: it
# is refused too, naming the directory and the holder.
if kill -0 "$pa" 2>/dev/null; then
	"$FLUSHKIT" bench neighbor --quick --config=plain --neighbor=tree \
		--tree-src=/usr/share/doc --dir "$t/mnt/a" --results "$t/rc" \
		>"$t/c.out" 2>"$t/c.err"
	rc=$?
	[ $rc = 1 ] || err "a second run in --dir $t/mnt/a: exit $rc, want 1 (refused)"
	grep -q "'$t/mnt/a' is in use by another bench neighbor run (pid $pa)" "$t/c.err" ||
		err "the run in the same --dir did not name the holder: $(cat "$t/c.err")"
	[ -e "$t/rc" ] && err "the refused run made its --results $t/rc"
else
	echo "not checked: the same --dir (the first run ended before the check)"
fi
wait $pa
rca=$?
pa=""
[ $rca = 0 ] || err "the first run: exit $rca: $(tail -3 "$t/a.out")"
[ "$(knobs)" = "$before" ] ||
	err "after both runs: bdi $mm knobs $(knobs), were $before"
[ $fail = 0 ] && echo PASS
exit $fail
