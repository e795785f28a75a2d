#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/build.sh [BUILD_DIR [CMAKE_ARGS...]] - configure and build.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)" -- --no-print-directory >"$dir/build.log" 2>&1 || {
	cat "$dir/build.log" >&2
	exit 1
}
