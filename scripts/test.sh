#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/test.sh [--sanitize|--tsan] [--tier TIER [--list] | TEST...] - build
# and run the tests (--tier: the tiers of tests/tiers, see tests/run.sh).
#   (no option)  build/ with -Werror, all tests
#   --sanitize   build-asan/ with AddressSanitizer + UBSan
#   --tsan       build-tsan/ with ThreadSanitizer
set -eu
cd "$(dirname "$0")/.."
dir=build
args=(-DFK_WERROR=ON)
case ${1:-} in
--sanitize) dir=build-asan; args+=(-DFK_SANITIZE=ON); shift;;
--tsan) dir=build-tsan; args+=(-DFK_TSAN=ON); shift;;
esac
./scripts/build.sh "$dir" "${args[@]}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-exitcode=66:second_deadlock_stack=1:atexit_sleep_ms=0}
exec tests/run.sh "$dir" "$@"
