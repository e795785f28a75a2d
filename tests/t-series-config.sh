#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "flushkit bench series" checks --config-a/--config-b against bench
# tpcb's options (its store knob table and its other options) before it
# runs anything: a misspelt knob is a usage error (exit 2) naming the
# word, with no run started and no output directory filled; a word
# that is an option with a bad value still goes to bench tpcb (its runs
# fail: t-series.sh).
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
exit $fail
