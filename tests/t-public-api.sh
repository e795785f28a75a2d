#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The flushkit command is a client of the public library: every
# "#include" under tools/ names flushkit.h or a header of tools/ itself
# (never src/'s private sys.h, tree.h, fsync_batch.h, ...), every
# tools/*.c compiles with only tools/ and include/ on the include path,
# and the built command needs libflushkit.so.0 instead of containing
# the library.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
src=${FK_SRC:?}
bad=0
for f in "$src"/tools/*.[ch]; do
	while IFS= read -r inc; do
		h=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$inc")
		[ -n "$h" ] || continue
		if [ "$h" = flushkit.h ] || [ -f "$src/tools/$h" ]; then continue; fi
		echo "$(basename "$f"): #include \"$h\": not the public header nor a tools/ header"
		bad=1
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done
[ $bad -eq 0 ] || fail "tools/ includes private headers"

command -v cc >/dev/null || skip "no C compiler"
jc=$(pkg-config --cflags json-c 2>/dev/null) || skip "json-c not found by pkg-config"
for f in "$src"/tools/*.c; do
	# shellcheck disable=SC2086
	cc -std=c11 -fsyntax-only -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
		-I"$src/tools" -I"$src/include" $jc "$f" 2>"${TMPDIR:-/tmp}/err.txt" ||
		{ cat "${TMPDIR:-/tmp}/err.txt"; fail "$(basename "$f") does not compile on the public header alone"; }
done
rm -f "${TMPDIR:-/tmp}/err.txt"

readelf -d "$FLUSHKIT" | grep -q 'NEEDED.*\[libflushkit\.so\.0\]' ||
	fail "the flushkit command does not link libflushkit.so.0"
n=$(nm -D --undefined-only "$FLUSHKIT" | grep -c ' fk_')
[ "$n" -ge 20 ] || fail "the command imports only $n fk_ symbols"
echo "ok: tools/ on flushkit.h only; the command imports $n fk_ symbols from libflushkit.so.0"
