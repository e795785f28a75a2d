#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench series" checks --config-a/--config-b against bench
# tpcb's options (its store knob table and its other options) before it
# runs anything: a misspelt knob is a usage error (exit 2) naming the
# word, with no run started and no output directory filled; a word
# that is an option with a bad value still goes to bench tpcb (its runs
# fail: t-series.sh).  An option the series sets itself (-c, -T, -s,
# --data-dir...) is refused the same way, and so are --scales/--clients
# lists with an empty element or a value twice.
set -u
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-series-config.XXXXXX)
trap 'rm -rf "$t"' EXIT

for cfg in "--flush=smooth --checkpoint-timout=1s" "--flush=smooth -Z" \
	"--flush smooth --no-such-knob 3"; do
	"$FLUSHKIT" bench series --scales 1 --clients 1 -T 1 --runs 1 \
		--config-b "$cfg" --results "$t/out" >"$t/stdout" 2>"$t/stderr"
	rc=$?
	[ $rc -eq 2 ] || err "'$cfg': exit $rc, not 2"
	bad=$(echo "$cfg" | grep -o -- ' -[-a-zA-Z]*' | tail -1 | tr -d ' ')
	grep -q -- "--config-b: '$bad.*' is not an option of bench tpcb" "$t/stderr" ||
		err "'$cfg': message: $(cat "$t/stderr")"
	grep -q "series: init" "$t/stderr" && err "'$cfg': a run was started"
	[ -e "$t/out/series.csv" ] && err "'$cfg': series.csv written"
	rm -rf "$t/out"
done

# Options the series sets for every run (clients, duration, scale, data
# and result directories, -i) are refused in --config-a/-b, each named:
# "-c 4 -T 3" made side A run another shape than the cell said, and
# "--data-dir=X" re-initialized X.
mkdir "$t/precious" && echo keep >"$t/precious/file"
for cfg in "-c 4 -T 3" "--client=4" "-lc4" "--time=3" "-t 100" "-s 5" \
	"--scale=5" "--data-dir=$t/precious" "--data-dir $t/precious" "-i" \
	"--results=$t/elsewhere" "--no-results" "-P 5"; do
	"$FLUSHKIT" bench series --scales 1 --clients 1 -T 1 --runs 1 \
		--config-a "$cfg --flush=naive" --results "$t/out" \
		>"$t/stdout" 2>"$t/stderr"
	rc=$?
	echo "--config-a '$cfg': exit $rc: $(cat "$t/stderr")"
	[ $rc -eq 2 ] || err "'$cfg': exit $rc, not 2"
	first=${cfg%% *}
	grep -q -- "--config-a: '$first' (--[a-z-]*) is set by the series" "$t/stderr" ||
		err "'$cfg': not named: $(cat "$t/stderr")"
	grep -q "series: init" "$t/stderr" && err "'$cfg': a run was started"
	[ -e "$t/out/series.csv" ] && err "'$cfg': series.csv written"
	rm -rf "$t/out"
done
[ "$(cat "$t/precious/file" 2>/dev/null)" = keep ] || err "--data-dir in --config-a touched it"
[ -e "$t/precious/lock" ] && err "--data-dir in --config-a made a store there"
# Both words of "-c 4 -T 3" are named.
"$FLUSHKIT" bench series --scales 1 --clients 1 -T 1 --runs 1 \
	--config-b "-c 4 -T 3" --results "$t/out" >/dev/null 2>"$t/stderr"
grep -q -- "'-c' (--client)" "$t/stderr" && grep -q -- "'-T' (--time)" "$t/stderr" ||
	err "not both named: $(cat "$t/stderr")"
rm -rf "$t/out"

# --scales and --clients: no empty element, no value twice (two runs of
# one cell would be pooled into one verdict), exit 2 naming the option.
for opt in --clients --scales; do
	for v in "1,1" "1,,2" ",1" "1," "" "2,1,2" "1,x" "0"; do
		"$FLUSHKIT" bench series "$opt=$v" -T 1 --runs 1 \
			--results "$t/out" >"$t/stdout" 2>"$t/stderr"
		rc=$?
		echo "$opt='$v': exit $rc: $(cat "$t/stderr")"
		[ $rc -eq 2 ] || err "$opt='$v': exit $rc, not 2"
		grep -q -- "^flushkit bench series: invalid value '$v' for $opt" "$t/stderr" ||
			err "$opt='$v': message: $(cat "$t/stderr")"
		grep -q "series: init" "$t/stderr" && err "$opt='$v': a run was started"
		rm -rf "$t/out"
	done
done
"$FLUSHKIT" bench series --clients=1,1 --help >/dev/null 2>"$t/stderr"
grep -q "1 is given twice" "$t/stderr" || err "the value given twice is not named: $(cat "$t/stderr")"
exit $fail
