#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One name and one parser per quantity: --jobs (fsyncs in flight at
# most) and --sync-io (how a batch of fsyncs is issued) are parsed by
# cli_parse_jobs and cli_parse_sync_io for cp, sync, bench tpcb and
# bench fsmark: the same values are refused by all four with the same
# message (exit 2, "flushkit CMD: invalid value 'X' for --jobs (1..4096)",
# cli_bad_jobs and cli_bad_sync_io); bench fsmark takes --jobs, keeps --queue-depth as
# its old name, and its --json and result file say "sync_jobs" as bench
# tpcb's do ("queue_depth" stays in --json as the old name).
set -u
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-jobs-sync-io.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src" "$t/d"

# CMD-WORDS... : the words before the option, and after it
run() {
	local name=$1 opt=$2
	case $name in
	cp) "$FLUSHKIT" cp "$opt" "$t/src" "$t/dst" ;;
	sync) "$FLUSHKIT" sync "$opt" "$t/src" ;;
	tpcb) "$FLUSHKIT" bench tpcb "$opt" --data-dir "$t/tpcb" --no-results ;;
	fsmark) "$FLUSHKIT" bench fsmark -d "$t/d" -n 1 -S batch "$opt" --no-results ;;
	esac
}
for cmd in cp sync tpcb fsmark; do
	label=$cmd want=2
	# cp and sync, drop-ins for GNU's, exit 1 on a usage error as they do.
	[ "$cmd" = cp ] || [ "$cmd" = sync ] && want=1
	[ "$cmd" = tpcb ] || [ "$cmd" = fsmark ] && label="bench $cmd"
	for v in 0 x 4097 -3 " 4"; do
		run $cmd "--jobs=$v" >/dev/null 2>"$t/err"
		rc=$?
		[ $rc -eq $want ] || err "$cmd --jobs='$v': exit $rc"
		grep -qxF "flushkit $label: invalid value '$v' for --jobs (1..4096)" "$t/err" ||
			err "$cmd --jobs='$v': $(head -1 "$t/err")"
	done
	for v in bogus URING ""; do
		run $cmd "--sync-io=$v" >/dev/null 2>"$t/err"
		rc=$?
		[ $rc -eq $want ] || err "$cmd --sync-io='$v': exit $rc"
		grep -qxF "flushkit $label: invalid value '$v' for --sync-io (auto, uring, threads or sequential)" "$t/err" ||
			err "$cmd --sync-io='$v': $(head -1 "$t/err")"
	done
done

for opt in --jobs --queue-depth; do
	"$FLUSHKIT" bench fsmark -d "$t/d" -n 3 -s 4096 -S batch --sync-io=threads \
		$opt 3 --json --results "$t/res$opt" >"$t/json" 2>"$t/err" ||
		err "fsmark $opt 3: exit $?: $(cat "$t/err")"
	python3 - "$t/json" "$t/res$opt" <<'PY' || err "fsmark $opt: json/result"
import glob, json, sys
j = json.load(open(sys.argv[1]))
assert j["sync_jobs"] == 3 and j["queue_depth"] == 3, j
f = glob.glob(sys.argv[2] + "/*.jsonl")
assert len(f) == 1, f
s = [json.loads(l) for l in open(f[0]) if '"settings"' in l][0]
assert s["sync_jobs"] == 3 and "queue_depth" not in s, s
PY
done
exit $fail
