#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-fuzz-corpus.sh - replay the committed fuzz corpora: every
# tests/fuzz/corpus/fuzz-NAME/ through the normal build's
# BUILD/tests/fuzz/fuzz-NAME (linked with tests/fuzz/replay.c), so every
# seed and every input that once crashed a target (kept as regression
# cases) runs in each test build, also under ASan/UBSan.  Fails if a
# target has no corpus or a corpus no target, or if a replay crashes,
# aborts or reports.
set -u
: "${FLUSHKIT:?}" "${FK_SRC:?}"
bin=$(dirname "$FLUSHKIT")/tests/fuzz
fail=0 n=0
for src in "$FK_SRC"/tests/fuzz/fuzz-*.c; do
	t=$(basename "$src" .c)
	corpus=$FK_SRC/tests/fuzz/corpus/$t
	if [ ! -x "$bin/$t" ]; then
		echo "FAIL: $bin/$t not built"; fail=1; continue
	fi
	if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
		echo "FAIL: no corpus for $t in $corpus"; fail=1; continue
	fi
	out=$("$bin/$t" "$corpus" 2>&1)
	rc=$?
	files=$(ls "$corpus" | wc -l)
	if [ $rc -ne 0 ] || ! grep -q "^$files inputs run" <<<"$out"; then
		echo "FAIL: $t exit $rc over $files inputs:"
		tail -n 30 <<<"$out" | sed 's/^/  | /'
		fail=1
		continue
	fi
	echo "ok: $t, $files inputs"
	n=$((n + 1))
done
for d in "$FK_SRC"/tests/fuzz/corpus/*/; do
	t=$(basename "$d")
	[ -f "$FK_SRC/tests/fuzz/$t.c" ] || { echo "FAIL: corpus $t has no target"; fail=1; }
done
[ $n -gt 0 ] || { echo "FAIL: no fuzz target replayed"; fail=1; }
exit $fail
