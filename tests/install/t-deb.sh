#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages build and hold what Debian expects where Debian
# puts it:
#  - scripts/build-deb.sh (dpkg-buildpackage -us -uc -b on a copy of
#    the tree) builds libflushkit1, libflushkit-dev and flushkit, and
#    lintian reports no error;
#  - libflushkit1 holds only the shared library (SONAME link included),
#    libflushkit-dev the header, .so link, .a, flushkit.pc, the CMake
#    package and the section 3 pages, flushkit the command, its section
#    1 and 7 pages and the bash completion; flushkit depends on
#    libflushkit1, libflushkit-dev on the same version of it;
#  - the package version is the header's version;
#  - from the unpacked packages alone: a program builds with pkg-config
#    and runs, the packaged command runs on the packaged library, and
#    "man flushkit-cp" reads the packaged page.
# The package is built once, by the plain build's suite (about a
# minute); the sanitizer suites skip it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
src=${FK_SRC:?}
build=$(dirname "$FLUSHKIT")
grep -Eq '^FK_(SANITIZE|TSAN):BOOL=ON' "$build/CMakeCache.txt" &&
	skip "sanitizer build: the packages are built by the plain suite"
for t in dpkg-buildpackage dh lintian dpkg-deb dpkg-architecture pandoc; do
	command -v $t >/dev/null || skip "$t not installed (scripts/install-deps.sh)"
done
base=$(mktemp -d "${TMPDIR:-/var/tmp}/t-deb.XXXXXX")
trap 'rm -rf "$base"' EXIT
out=$base/deb
"$src/scripts/build-deb.sh" "$out" || fail "scripts/build-deb.sh"
ver=$(cd "$src" && dpkg-parsechangelog -S Version)
hv=$(awk '/^#define FK_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v == "" ? "" : ".") $3} END {print v}' "$src/include/flushkit.h")
[ "$ver" = "$hv" ] || fail "debian/changelog says $ver, flushkit.h $hv"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in libflushkit1 libflushkit-dev flushkit; do
	[ -f "$out/${p}_${ver}_$arch.deb" ] || fail "no ${p}_${ver}_$arch.deb"
done
list() { dpkg-deb -c "$out/${1}_${ver}_$arch.deb" | awk '{print $6}' | sed 's|^\./|/|'; }
has() {	# PACKAGE PATH
	list "$1" | grep -qx -- "$2" || fail "$1 lacks $2"
}
hasnot() {	# PACKAGE REGEX
	list "$1" | grep -Eq -- "$2" && fail "$1 holds $(list "$1" | grep -E -- "$2" | head -1)"
	return 0
}
has libflushkit1 /usr/lib/$ma/libflushkit.so.$ver
has libflushkit1 /usr/lib/$ma/libflushkit.so.1
hasnot libflushkit1 '\.h$|\.a$|\.pc$|/bin/|/man/'
for f in /usr/include/flushkit.h /usr/include/flushkit/store.h /usr/lib/$ma/libflushkit.so /usr/lib/$ma/libflushkit.a \
	/usr/lib/$ma/pkgconfig/flushkit.pc /usr/lib/$ma/cmake/flushkit/flushkitConfig.cmake \
	/usr/share/man/man3/libflushkit.3.gz /usr/share/man/man3/fk_tree_sync.3.gz \
	/usr/share/man/man3/fk_tree_copy.3.gz; do
	has libflushkit-dev "$f"
done
hasnot libflushkit-dev 'libflushkit\.so\.1|/bin/|/man1/'
for f in /usr/bin/flushkit /usr/share/man/man1/flushkit.1.gz /usr/share/man/man1/flushkit-cp.1.gz \
	/usr/share/man/man1/flushkit-bench-tpcb.1.gz /usr/share/man/man7/flushkit-durability.7.gz \
	/usr/share/bash-completion/completions/flushkit /usr/share/man/man1/flushkit-exec.1.gz \
	/usr/lib/$ma/flushkit/libflushkit-preload.so /usr/lib/$ma/flushkit/flushkit-diskd \
	/usr/share/man/man1/flushkit-disk.1.gz; do
	has flushkit "$f"
done
# the command's own shim (loaded by path from a private directory) and
# nothing of the library
hasnot flushkit 'libflushkit\.|\.h$|/man3/'
dep() { dpkg-deb -f "$out/${1}_${ver}_$arch.deb" Depends; }
dep flushkit | grep -q 'libflushkit1 (>= ' || fail "flushkit does not depend on libflushkit1: $(dep flushkit)"
dep libflushkit-dev | grep -q "libflushkit1 (= $ver)" || fail "libflushkit-dev: $(dep libflushkit-dev)"

root=$base/root
for p in libflushkit1 libflushkit-dev flushkit; do
	dpkg-deb -x "$out/${p}_${ver}_$arch.deb" "$root"
done
libdir=$root/usr/lib/$ma
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$libdir/pkgconfig
cat >"$base/prog.c" <<'C'
#include <flushkit.h>
#include <stdio.h>
int main(void)
{
	printf("%s %s\n", FK_VERSION_STRING, fk_version());
	return 0;
}
C
# shellcheck disable=SC2046
cc -o "$base/prog" "$base/prog.c" $(pkg-config --cflags --libs flushkit) ||
	fail "build against the packaged library"
[ "$(LD_LIBRARY_PATH=$libdir "$base/prog")" = "$ver $ver" ] || fail "prog"
[ "$(LD_LIBRARY_PATH=$libdir "$root/usr/bin/flushkit" --version)" = "flushkit $ver" ] ||
	fail "the packaged command on the packaged library"
MANWIDTH=80 man -M "$root/usr/share/man" flushkit-cp 2>/dev/null | grep -q 'cp -a' ||
	fail "man flushkit-cp from the package"
echo "lintian:"
cat "$out/lintian.txt"
echo ok
