#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shared library exports only fk_ symbols, and a pkg-config file is built.
set -u
build=$(dirname "$FLUSHKIT")
lib=$(ls "$build"/libflushkit.so.* 2>/dev/null | head -n1)
[ -n "$lib" ] || { echo "no libflushkit.so"; exit 1; }
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '^fk_' || true)
if [ -n "$bad" ]; then echo "non-fk_ exports:"; echo "$bad"; exit 1; fi
nm -D --defined-only "$lib" | grep -Eq ' T fk_strerror(@@FLUSHKIT_[0-9.]+)?$' || { echo "fk_strerror not exported"; exit 1; }
grep -q '^Libs: .*-lflushkit' "$build/flushkit.pc" || { echo "bad flushkit.pc"; exit 1; }
echo ok
