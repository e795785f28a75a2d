#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-symlink-xattr.sh - extended attributes on symlinks (trusted.*, as
# 'setfattr -h' sets them) are copied, as 'cp -a' copies them: a symlink
# at the top and one inside a tree, compared with GNU cp -a's copy.
# Root only (trusted.*); skipped where the file system refuses them.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: trusted.* xattrs need root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-cp-symlink-xattr.XXXXXX")
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$t" || exit 1
mkdir src && ln -s nowhere src/l && ln -s src/l top && echo x >src/f
python3 -c '
import os, sys
for p in ("src/l", "top"):
    os.setxattr(p, "trusted.x", b"1", follow_symlinks=False)
    os.setxattr(p, "trusted.long", b"v" * 3000, follow_symlinks=False)
' 2>/dev/null || { echo "SKIP: cannot set trusted.* on a symlink here"; exit 77; }
xattrs() { # the symlink's own xattrs and values, sorted
	python3 -c '
import os, sys
p = sys.argv[1]
for n in sorted(os.listxattr(p, follow_symlinks=False)):
    print(n, os.getxattr(p, n, follow_symlinks=False)[:8], len(os.getxattr(p, n, follow_symlinks=False)))
' "$1"
}
"$FLUSHKIT" cp src fk-tree || bad "flushkit cp src"
"$FLUSHKIT" cp top fk-top || bad "flushkit cp top"
cp -a src gnu-tree && cp -a top gnu-top || bad "GNU cp -a"
for p in tree/l top; do
	g=$(xattrs "gnu-$p") f=$(xattrs "fk-$p")
	[ -n "$g" ] || bad "GNU cp -a kept no xattr on $p: the case is not tested"
	[ "$f" = "$g" ] || bad "$p: xattrs '$f', GNU cp -a '$g'"
	echo "$p: $f"
done
[ $fail -eq 0 ] && echo "t-cp-symlink-xattr: ok"
exit $fail
