#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-bench-neighbor-cli.sh - "flushkit bench neighbor" on bad ground:
# a --results directory whose parent does not exist is a clear error
# naming it (exit 1, as bench series and reproduce) before anything
# runs: no --dir created, no victim started; and with nocache not in
# PATH, --config=nocache says "skip nocache: not installed" and prints
# no ratio table without rows (the only configuration besides plain
# could not run); a bad --device (an unknown model) is one error line
# naming it, exit 2, before anything runs.  Runs plain on a directory of
# its own under /var/tmp
# (not tmpfs: the benchmark refuses a file system without writeback).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-bench-neighbor-cli.XXXXXX) || exit 1
trap 'rm -rf "$t"' EXIT
[ "$(stat -f -c %T "$t")" = tmpfs ] && { echo "SKIP: /var/tmp is tmpfs"; exit 77; }

# 1. --results under a missing parent: refused before anything runs.
"$FLUSHKIT" bench neighbor --quick --dir "$t/fs" \
	--results "$t/missing/parent/r" >"$t/out1" 2>"$t/err1"
rc=$?
[ $rc -eq 1 ] || err "--results with a missing parent: exit $rc, want 1"
grep -q "mkdir '$t/missing/parent/r': No such file or directory" "$t/err1" ||
	err "--results with a missing parent: stderr '$(cat "$t/err1")'"
[ -e "$t/fs" ] && err "--results with a missing parent: --dir $t/fs was created"
[ -s "$t/out1" ] && err "--results with a missing parent: it ran: $(cat "$t/out1")"

# 1b. A bad --device: one line and the Try line of a usage error, exit 2,
# nothing made.
out=$("$FLUSHKIT" bench neighbor --quick --device=hdd:3 --dir "$t/fs" \
	--results "$t/rd" 2>&1)
rc=$?
[ $rc -eq 2 ] || err "--device=hdd:3: exit $rc, want 2: $out"
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] &&
	printf '%s\n' "$out" | head -1 | grep -q "^flushkit bench neighbor: invalid value 'hdd:3' for --device" &&
	[ "$(printf '%s\n' "$out" | tail -1)" = "Try 'flushkit bench neighbor --help' for more information." ] ||
	err "--device=hdd:3: not one clear line: '$out'"
[ -e "$t/fs" ] || [ -e "$t/rd" ] && err "--device=hdd:3: something was created"

# 2. nocache missing: a PATH with the tools the benchmark runs, not nocache.
mkdir "$t/bin"
for p in dd cp rm; do
	q=$(command -v $p) || { echo "SKIP: no $p"; exit 77; }
	ln -s "$q" "$t/bin/$p"
done
PATH=$t/bin "$FLUSHKIT" bench neighbor --quick --config=nocache \
	--dir "$t/fs" --results "$t/r" >"$t/out2" 2>"$t/err2"
rc=$?
[ $rc -eq 0 ] || err "nocache missing: exit $rc: $(tail -3 "$t/err2")"
grep -q '^skip nocache: not installed' "$t/out2" ||
	err "nocache missing: no 'skip nocache: not installed' line: $(grep skip "$t/out2")"
grep -Eq '^rate stream plain +r1 +tps' "$t/out2" || err "nocache missing: plain did not run"
# a ratio table has a row under its header, or is not printed
awk '/^ratio to plain/ {r = 1; next}
	r && /^\| config/ {h = 1; next}
	r && h && /^\|---/ {next}
	r && h && /^\| [a-z]+\/plain/ {rows++}
	r && h && !/^\|/ && NF {exit}
	END {exit !(r && !rows)}' "$t/out2" &&
	err "nocache missing: a ratio table without rows: $(sed -n '/^ratio to plain/,$p' "$t/out2" | head -6)"
[ -f "$t/r/table.md" ] && grep -q '^ratio to plain' "$t/r/table.md" &&
	! grep -q '^| [a-z]*/plain |' "$t/r/table.md" &&
	err "nocache missing: table.md has a ratio table without rows"
[ $fail = 0 ] && echo PASS
exit $fail
