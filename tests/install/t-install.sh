#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libflushkit installs the way liburing or json-c do, and programs build
# against the installed tree only:
#  - "cmake --install --prefix P": flushkit.pc says P (include/, lib/),
#    a third-party program and the three examples/ build with
#    "pkg-config --cflags --libs flushkit" and run against P's .so;
#    with "pkg-config --static" and -static they link libflushkit.a and
#    liburing and need no shared library; FK_VERSION_* of the header
#    match fk_version() and pkg-config --modversion;
#  - CMake find_package(flushkit): flushkit::flushkit (shared) and
#    flushkit::flushkit_static build and run the examples;
#  - DESTDIR staging with prefix /usr: the .pc says /usr, and
#    PKG_CONFIG_SYSROOT_DIR builds against the staged tree;
#  - the installed command links libflushkit.so.1, every fk_ symbol it
#    needs is exported by the installed library (nm -D), and it runs
#    with LD_LIBRARY_PATH set to the installed library.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
build=$(dirname "$FLUSHKIT")
src=${FK_SRC:?}
grep -q '^FK_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" &&
	skip "sanitizer build: a plain program cannot load an ASan libflushkit (the plain build tests the install)"
grep -q '^FK_TSAN:BOOL=ON' "$build/CMakeCache.txt" &&
	skip "TSan build: a plain program cannot load a TSan libflushkit (the plain build tests the install)"
for t in cc pkg-config cmake nm readelf make; do
	command -v $t >/dev/null || skip "$t not installed (scripts/install-deps.sh)"
done
base=$(mktemp -d "${TMPDIR:-/var/tmp}/t-install.XXXXXX")
trap 'rm -rf "$base"' EXIT

# 1. Install under a prefix chosen at install time.
P=$base/prefix
cmake --install "$build" --prefix "$P" >"$base/install.log" 2>&1 ||
	{ cat "$base/install.log"; fail "cmake --install --prefix"; }
echo "== installed tree ($P)"
(cd "$P" && find . | sort)
pc=$(find "$P" -name flushkit.pc)
[ -n "$pc" ] || fail "no flushkit.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in include/flushkit.h bin/flushkit; do
	[ -e "$P/$f" ] || fail "$f not installed"
done
# flushkit.h's sections: each header of include/flushkit/ installed, and
# none that is not in the source.
for h in "$src"/include/flushkit/*.h; do
	[ -e "$P/include/flushkit/$(basename "$h")" ] ||
		fail "include/flushkit/$(basename "$h") not installed"
done
for h in "$P"/include/flushkit/*.h; do
	[ -e "$src/include/flushkit/$(basename "$h")" ] ||
		fail "include/flushkit/$(basename "$h") installed but not in the source"
done
for f in libflushkit.so libflushkit.so.1 libflushkit.a \
	cmake/flushkit/flushkitConfig.cmake \
	cmake/flushkit/flushkitConfigVersion.cmake; do
	[ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
[ "$(readlink "$libdir/libflushkit.so")" = libflushkit.so.1 ] ||
	fail "libflushkit.so does not link to the SONAME"
soname=$(readelf -d "$libdir/libflushkit.so.1" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libflushkit.so.1 ] || fail "SONAME is '$soname'"
echo "== flushkit.pc"
cat "$pc"

export PKG_CONFIG_PATH=$libdir/pkgconfig
# Only our .pc and the system's: no leftover of another install.
cflags=$(pkg-config --cflags flushkit) || fail "pkg-config --cflags"
libs=$(pkg-config --libs flushkit) || fail "pkg-config --libs"
slibs=$(pkg-config --static --libs flushkit) || fail "pkg-config --static --libs"
echo "pkg-config --cflags --libs flushkit: $cflags $libs"
echo "pkg-config --static --libs flushkit: $slibs"
[ "$(pkg-config --variable=prefix flushkit)" = "$P" ] ||
	fail "prefix= is not the install prefix"
[ "$(pkg-config --variable=includedir flushkit)" = "$P/include" ] ||
	fail "includedir= is $(pkg-config --variable=includedir flushkit)"
[ "$(pkg-config --variable=libdir flushkit)" = "$libdir" ] ||
	fail "libdir= is $(pkg-config --variable=libdir flushkit)"

# A third-party program: the header's version against the library's.
cat >"$base/version.c" <<'C'
#include <flushkit.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	printf("header %s library %s\n", FK_VERSION_STRING, fk_version());
	if (strcmp(FK_VERSION_STRING, fk_version()))
		return 1;
	char num[32];
	snprintf(num, sizeof(num), "%d.%d.%d", FK_VERSION_MAJOR,
		 FK_VERSION_MINOR, FK_VERSION_PATCH);
	if (strcmp(num, fk_version()) ||
	    FK_VERSION_NUMBER != ((FK_VERSION_MAJOR << 16) |
				  (FK_VERSION_MINOR << 8) | FK_VERSION_PATCH))
		return 1;
	/* A function that needs liburing inside a static link. */
	struct fk_fsync_req req = {.fd = 1, .op = FK_FSYNC_OP_FSYNC};
	int backend = 0;
	fk_fsync_many(NULL, &req, 1, &backend);
	printf("backend %s\n", fk_sync_io_name(backend));
	return 0;
}
C
cd "$base" || exit 1
# A section's header alone is refused: programs include <flushkit.h>.
echo '#include <flushkit/store.h>' >"$base/section.c"
# shellcheck disable=SC2086
if cc -fsyntax-only $cflags "$base/section.c" 2>"$base/section.err"; then
	fail "<flushkit/store.h> alone compiled: it must say to include <flushkit.h>"
fi
grep -q 'include <flushkit.h>' "$base/section.err" ||
	{ cat "$base/section.err"; fail "<flushkit/store.h> alone: not the #error that names <flushkit.h>"; }
echo "== shared: cc version.c \$(pkg-config --cflags --libs flushkit)"
# shellcheck disable=SC2086
cc -Wall -Werror -o version-shared version.c $cflags $libs ||
	fail "shared link with pkg-config"
readelf -d version-shared | grep -q 'NEEDED.*libflushkit.so.1' ||
	fail "version-shared does not need libflushkit.so.1"
LD_LIBRARY_PATH=$libdir ./version-shared >out.txt || { cat out.txt; fail "version-shared"; }
cat out.txt
grep -q "library $(pkg-config --modversion flushkit)\$" out.txt ||
	fail "fk_version() is not pkg-config --modversion"
LD_LIBRARY_PATH=$libdir ldd ./version-shared | grep -q "libflushkit.so.1 => $libdir/" ||
	fail "version-shared does not load the installed library"

echo "== static: cc -static version.c \$(pkg-config --static --cflags --libs flushkit)"
# shellcheck disable=SC2086
cc -static -Wall -Werror -o version-static version.c $cflags $slibs 2>link.txt ||
	{ cat link.txt; fail "static link with pkg-config --static"; }
readelf -d version-static 2>/dev/null | grep -q NEEDED &&
	fail "version-static needs shared libraries"
./version-static >out.txt || { cat out.txt; fail "version-static"; }
cat out.txt

echo "== examples with pkg-config (make -C examples, shared and STATIC=1)"
cp -r "$src/examples" ex-pc
make -s -C ex-pc >make.log 2>&1 || { cat make.log; fail "make examples"; }
cp -r "$src/examples" ex-pc-static
make -s -C ex-pc-static STATIC=1 >make.log 2>&1 || { cat make.log; fail "make examples STATIC=1"; }
run_examples() {	# DIR [ENV...]
	local d=$1
	shift
	mkdir -p "$d/out"
	env "$@" "$d/writeback-hints" "$d/out/big" 4 || fail "$d/writeback-hints"
	[ "$(stat -c %s "$d/out/big")" = 4194304 ] || fail "$d: big file size"
	env "$@" "$d/durable-replace" "$d/out/conf" "old" || fail "$d/durable-replace"
	env "$@" "$d/durable-replace" "$d/out/conf" "new contents" || fail "$d/durable-replace 2"
	[ "$(cat "$d/out/conf")" = "new contents" ] || fail "$d: replaced contents"
	[ -e "$d/out/conf.tmp" ] && fail "$d: temporary file left"
	# the old file's mode kept; a symlink planted at the temporary name
	# is refused, not written through
	chmod 0644 "$d/out/conf"
	env "$@" "$d/durable-replace" "$d/out/conf" "third" || fail "$d/durable-replace 3"
	[ "$(stat -c %a "$d/out/conf")" = 644 ] || fail "$d: mode not kept: $(stat -c %a "$d/out/conf")"
	echo precious >"$d/out/victim"
	ln -s "$d/out/victim" "$d/out/conf.tmp"
	env "$@" "$d/durable-replace" "$d/out/conf" "hacked" 2>/dev/null &&
		fail "$d: durable-replace wrote through a planted symlink"
	[ "$(cat "$d/out/victim")" = precious ] || fail "$d: victim overwritten"
	[ "$(cat "$d/out/conf")" = third ] || fail "$d: conf changed by a refused replace"
	rm "$d/out/conf.tmp"
	mkdir "$d/out/many"
	env "$@" "$d/fsync-many" "$d/out/many" 50 || fail "$d/fsync-many"
	[ "$(ls "$d/out/many" | wc -l)" = 50 ] || fail "$d: fsync-many files"
}
run_examples ex-pc LD_LIBRARY_PATH="$libdir"
run_examples ex-pc-static
readelf -d ex-pc-static/fsync-many | grep -q NEEDED && fail "static example is dynamic"

echo "== examples with CMake find_package(flushkit)"
for kind in shared static; do
	opt=OFF
	[ $kind = static ] && opt=ON
	cmake -S "$src/examples" -B "ex-cmake-$kind" -DCMAKE_PREFIX_PATH="$P" \
		-DFK_EXAMPLES_STATIC=$opt >cmake.log 2>&1 || { cat cmake.log; fail "cmake examples ($kind)"; }
	cmake --build "ex-cmake-$kind" >cmake.log 2>&1 || { cat cmake.log; fail "build examples ($kind)"; }
	grep -q "flushkit_DIR:PATH=$libdir/cmake/flushkit" "ex-cmake-$kind/CMakeCache.txt" ||
		fail "find_package did not find the installed package"
done
readelf -d ex-cmake-shared/fsync-many | grep -q 'NEEDED.*libflushkit.so.1' ||
	fail "cmake shared example does not need libflushkit.so.1"
readelf -d ex-cmake-static/fsync-many | grep -q 'NEEDED.*libflushkit' &&
	fail "cmake static example needs libflushkit.so"
run_examples ex-cmake-shared LD_LIBRARY_PATH="$libdir"
run_examples ex-cmake-static

echo "== the installed command on the installed library"
fk=$P/bin/flushkit
readelf -d "$fk" | grep -q 'NEEDED.*libflushkit.so.1' || fail "flushkit does not need libflushkit.so.1"
# outside the loader's directories: a RUNPATH relative to itself, so it
# runs as installed, without LD_LIBRARY_PATH (and so does exec's shim,
# found in LIBDIR/flushkit/ relative to the command)
readelf -d "$fk" | grep -q 'RUNPATH.*\$ORIGIN/\.\./lib' ||
	fail "installed flushkit has no RUNPATH to its library: $(readelf -d "$fk" | grep -E 'RPATH|RUNPATH')"
"$fk" --version >/dev/null 2>&1 || fail "installed flushkit does not run without LD_LIBRARY_PATH"
env -u LD_LIBRARY_PATH "$fk" exec -- true || fail "installed flushkit exec: exit $?"
nm -D --undefined-only "$fk" | awk '{print $2}' | sed 's/@.*//' | grep '^fk_' | sort -u >needed.txt
nm -D --defined-only "$libdir/libflushkit.so.1" | awk '{print $3}' | sed 's/@.*//' | grep '^fk_' | sort -u >exported.txt
[ "$(wc -l <needed.txt)" -ge 20 ] || fail "flushkit needs only $(wc -l <needed.txt) fk_ symbols: is the library linked in?"
missing=$(comm -23 needed.txt exported.txt)
[ -z "$missing" ] || fail "flushkit needs symbols libflushkit.so does not export: $missing"
echo "flushkit needs $(wc -l <needed.txt) fk_ symbols, all among the $(wc -l <exported.txt) exported"
nm "$fk" 2>/dev/null | awk '$2 ~ /^[TtDdBb]$/ && $3 ~ /^fk_/' | grep . &&
	fail "flushkit defines library symbols itself"
v=$(LD_LIBRARY_PATH=$libdir "$fk" --version) || fail "installed flushkit --version"
[ "$v" = "flushkit $(pkg-config --modversion flushkit)" ] || fail "version: $v"
LD_LIBRARY_PATH=$libdir ldd "$fk" | grep -q "libflushkit.so.1 => $libdir/" ||
	fail "installed flushkit does not load the installed library"
mkdir -p tree/a && echo x >tree/a/f
LD_LIBRARY_PATH=$libdir "$fk" sync --summary tree >sync.txt || { cat sync.txt; fail "installed flushkit sync"; }
grep -q 'result: *ok: durable' sync.txt || { cat sync.txt; fail "flushkit sync output"; }

echo "== DESTDIR staging, prefix /usr"
S=$base/stage
DESTDIR=$S cmake --install "$build" --prefix /usr >"$base/install.log" 2>&1 ||
	{ cat "$base/install.log"; fail "DESTDIR install"; }
spc=$(find "$S" -name flushkit.pc)
grep -qx 'prefix=/usr' "$spc" || fail "staged flushkit.pc: $(head -1 "$spc")"
grep -q "$S" "$spc" && fail "the DESTDIR leaked into flushkit.pc"
grep -rq "$S" "$S"/usr/lib*/cmake 2>/dev/null && fail "the DESTDIR leaked into the CMake package"
scflags=$(PKG_CONFIG_SYSROOT_DIR=$S PKG_CONFIG_PATH=$(dirname "$spc") pkg-config --cflags --libs flushkit)
echo "staged: $scflags"
# shellcheck disable=SC2086
cc -o version-staged version.c $scflags || fail "build against the staged tree"
LD_LIBRARY_PATH=$(dirname "$(dirname "$spc")") ./version-staged >/dev/null || fail "version-staged"
echo ok
