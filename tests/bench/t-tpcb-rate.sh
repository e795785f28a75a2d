#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench tpcb -R with -T, as pgbench: the run stops at -T even
# when the store cannot keep up with the schedule (the schedule falls
# behind; the lag is reported, not worked off after the end), -L skips
# transactions already later than the limit when their turn comes, and
# a reachable rate processes about rate x duration transactions.
set -u
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/fk-t-tpcb-rate.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
d=$t/data
small=(--shared-buffers 2M --checkpoint-timeout 1s --no-results)

err() { echo "FAIL: $*"; fail=1; }
has() { grep -q -- "$2" "$1" || err "'$2' not in $1: $(cat "$1")"; }
now() { date +%s.%N; }
# Seconds between two "now" stamps.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
processed() { sed -n 's/^number of transactions actually processed: //p' "$1"; }

"$FLUSHKIT" bench tpcb -i -s 1 --data-dir "$d" "${small[@]}" >init.out 2>&1 ||
	err "init exit $?: $(cat init.out)"

# A rate far above what the store can do here (every commit is an
# fdatasync): the run still ends at -T.  Not a timing test: the bound is
# five times the duration (a loaded machine); the unthrottled schedule
# would need 100000 transactions, tens of seconds.
t0=$(now)
"$FLUSHKIT" bench tpcb -c 2 -T 2 -R 50000 --data-dir "$d" "${small[@]}" \
	>fast.out 2>fast.err || err "-R 50000 exit $?: $(cat fast.err)"
t1=$(now)
el=$(secs "$t0" "$t1")
echo "-T 2 -R 50000: ran $el s, $(processed fast.out) transactions"
awk -v e="$el" 'BEGIN { exit !(e < 10) }' ||
	err "-T 2 -R 50000 ran $el s, not about 2 s"
has fast.out "^duration: 2 s$"
has fast.out "^rate limit schedule lag: avg [0-9.]* (max [0-9.]*) ms$"
n=$(processed fast.out)
[ "${n:-0}" -gt 0 ] && [ "$n" -lt 100000 ] ||
	err "-R 50000: $n transactions processed"
# the schedule fell behind: the lag is large (not the sleep jitter)
lag=$(sed -n 's/^rate limit schedule lag: avg \([0-9.]*\) .*/\1/p' fast.out)
awk -v l="$lag" 'BEGIN { exit !(l > 1) }' || err "lag $lag ms: the rate was reachable?"

# With -L 1: transactions already more than 1 ms late when scheduled are
# skipped (counted, not run), and the run still ends at -T.
t0=$(now)
"$FLUSHKIT" bench tpcb -c 2 -T 2 -R 50000 -L 1 --data-dir "$d" \
	"${small[@]}" >skip.out 2>skip.err || err "-L 1 exit $?: $(cat skip.err)"
t1=$(now)
el=$(secs "$t0" "$t1")
awk -v e="$el" 'BEGIN { exit !(e < 10) }' ||
	err "-T 2 -R 50000 -L 1 ran $el s, not about 2 s"
has skip.out "^rate limit schedule lag: avg "
sk=$(sed -n 's/^number of transactions skipped: \([0-9]*\) (\([0-9.]*\)%)$/\1/p' skip.out)
echo "-T 2 -R 50000 -L 1: ran $el s, $(processed skip.out) processed, $sk skipped"
[ "${sk:-0}" -gt 0 ] || err "no skipped transactions: $(cat skip.out)"
has skip.out "^number of transactions above the 1.0 ms latency limit: "

# A reachable rate: about rate x duration transactions (Poisson: 400 +-
# 20 standard deviations is 400 +- 60 at most; allow 300..500).
"$FLUSHKIT" bench tpcb -c 1 -T 2 -R 200 --data-dir "$d" "${small[@]}" \
	>slow.out 2>slow.err || err "-R 200 exit $?: $(cat slow.err)"
n=$(processed slow.out)
echo "-T 2 -R 200: $n transactions"
[ "${n:-0}" -ge 300 ] && [ "$n" -le 500 ] ||
	err "-T 2 -R 200 processed $n, not about 400"
has slow.out "^duration: 2 s$"

[ $fail -eq 0 ] && echo ok
exit $fail
