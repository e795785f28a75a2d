#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/fuzz.sh [SECONDS [TARGET...]] - build the libFuzzer targets of
# tests/fuzz/fuzz-*.c with clang, AddressSanitizer and UBSan in
# build-fuzz/ (FK_FUZZ=ON; the library is instrumented too, with
# -fsanitize=fuzzer-no-link), then run each target (all, or those named)
# for SECONDS (default 30) over a copy of its corpus in
# tests/fuzz/corpus/TARGET/, one at a time.  Fails on any crash, leak,
# timeout, out-of-memory or sanitizer report; the input that did it is
# saved as build-fuzz/fuzz-artifacts/TARGET-*.  The grown corpus stays in
# build-fuzz/fuzz-work/TARGET/ (copy new finds into tests/fuzz/corpus/
# only when they matter: a crash's input, once fixed).
set -eu
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
dir=${FK_FUZZ_BUILD:-build-fuzz}
if [ $# -gt 0 ]; then
	targets=("$@")
else
	targets=()
	for f in tests/fuzz/fuzz-*.c; do
		t=$(basename "$f" .c)
		targets+=("$t")
	done
fi
command -v clang >/dev/null || { echo "fuzz.sh: clang not found" >&2; exit 2; }
mkdir -p "$dir"
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DFK_FUZZ=ON -DFK_SANITIZE=ON \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" >"$dir/cmake.log" 2>&1 || {
	cat "$dir/cmake.log" >&2
	exit 1
}
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}" -- \
	--no-print-directory >"$dir/build.log" 2>&1 || {
	cat "$dir/build.log" >&2
	exit 1
}
mkdir -p "$dir/fuzz-artifacts"
failed=0
for t in "${targets[@]}"; do
	work=$dir/fuzz-work/$t
	rm -rf "$work"
	mkdir -p "$work/corpus"
	if [ -d "tests/fuzz/corpus/$t" ]; then
		cp "tests/fuzz/corpus/$t"/* "$work/corpus/" 2>/dev/null || true
	fi
	log=$work/fuzz.log
	rc=0
	"$dir/tests/fuzz/$t" -max_total_time="$secs" -timeout=20 \
		-rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
		-print_final_stats=1 -artifact_prefix="$dir/fuzz-artifacts/$t-" \
		"$work/corpus" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	files=$(ls "$work/corpus" | wc -l)
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		echo "FAIL  $t: exit $rc after ${execs:-?} executions (log $log)"
		grep -E 'ERROR|SUMMARY|Test unit written|abort|==[0-9]+==' "$log" |
			head -n 20 | sed 's/^/      | /'
	else
		echo "ok    $t: ${execs:-?} executions in ${secs}s, $cov, corpus $files files"
	fi
done
[ "$failed" -eq 0 ]
