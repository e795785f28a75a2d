#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The flushkit command is a client of the public library: every
# "#include" under cli/, tools/ and bench/ (the command's helpers, the
# command proper and the benchmark floor) names flushkit.h or a header
# of those directories
# (never src/'s private sys.h, tree.h, fsync_batch.h, ...), every
# such .c compiles with only them and include/ on the include path, and
# the built command needs libflushkit.so.1 instead of containing the
# library.  The lab disk's client headers (disk/labdisk.h, disk/model.h:
# bench/lib/disk.c makes its disks through them) count as the command's
# own: they include no header of src/.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
src=${FK_SRC:?}
# cli/, tools/ and every directory of the benchmark floor
dirs=(cli tools)
while IFS= read -r d; do dirs+=("${d#"$src"/}"); done < <(find "$src/bench" -type d | sort)
hdirs=("${dirs[@]}" disk disk/model)
incs=()
for d in "${hdirs[@]}"; do incs+=("-I$src/$d"); done
is_ours() {
	local d
	for d in "${hdirs[@]}"; do [ -f "$src/$d/$1" ] && return 0; done
	return 1
}
# The lab disk's headers themselves: standard headers only.
for h in disk/labdisk.h disk/model.h; do
	grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$src/$h" &&
		fail "$h includes a header of the tree"
done
bad=0
nfiles=0
for d in "${dirs[@]}"; do
	for f in "$src/$d"/*.[ch]; do
		[ -f "$f" ] || continue
		nfiles=$((nfiles + 1))
		while IFS= read -r inc; do
			h=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$inc")
			[ -n "$h" ] || continue
			if [ "$h" = flushkit.h ] || is_ours "$h"; then continue; fi
			echo "$d/$(basename "$f"): #include \"$h\": not the public header nor a cli/, tools/ or bench/ header"
			bad=1
		done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	done
done
[ $bad -eq 0 ] || fail "cli/, tools/ or bench/ includes private headers"
[ $nfiles -ge 20 ] || fail "only $nfiles sources found under ${dirs[*]}"

command -v cc >/dev/null || skip "no C compiler"
jc=$(pkg-config --cflags json-c 2>/dev/null) || skip "json-c not found by pkg-config"
for d in "${dirs[@]}"; do
	for f in "$src/$d"/*.c; do
		[ -f "$f" ] || continue
		# shellcheck disable=SC2086
		cc -std=c11 -fsyntax-only -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
			"${incs[@]}" -I"$src/include" $jc "$f" 2>"${TMPDIR:-/tmp}/err.txt" ||
			{ cat "${TMPDIR:-/tmp}/err.txt"; fail "$d/$(basename "$f") does not compile on the public header alone"; }
	done
done
rm -f "${TMPDIR:-/tmp}/err.txt"

readelf -d "$FLUSHKIT" | grep -q 'NEEDED.*\[libflushkit\.so\.1\]' ||
	fail "the flushkit command does not link libflushkit.so.1"
n=$(nm -D --undefined-only "$FLUSHKIT" | grep -c ' fk_')
[ "$n" -ge 20 ] || fail "the command imports only $n fk_ symbols"
echo "ok: cli/, tools/ and bench/ ($nfiles files) on flushkit.h only; the command imports $n fk_ symbols from libflushkit.so.1"
