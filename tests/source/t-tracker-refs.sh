#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No tracker references in the tree: code, CMake, scripts, tests, docs
# and banners name the property a line is about ("a failed fsync stops
# the store"), never the ticket that asked for it ("issue 7", "the
# issue-3 benchmark"), which means nothing to a reader of the tree; and
# docs/ points at no file outside the repository (../shared/...).
set -u
fail() { echo "FAIL: $*"; exit 1; }
src=${FK_SRC:?}
cd "$src" || fail "cd $src"
dirs=()
for d in src include tools bench tests scripts docs cmake completion \
	debian examples .ci CMakeLists.txt README.md; do
	[ -e "$d" ] && dirs+=("$d")
done
[ ${#dirs[@]} -ge 8 ] || fail "only ${dirs[*]} found under $src"
hits=$(grep -rniIE --exclude=t-tracker-refs.sh 'issue[ -]?[0-9]+|issues? #[0-9]+' "${dirs[@]}")
[ -z "$hits" ] || fail "tracker references (name the property instead):
$hits"
out=$(grep -rnIE '\.\./shared/|/work/shared' docs README.md)
[ -z "$out" ] || fail "docs point outside the repository:
$out"
echo "ok: no tracker references in ${dirs[*]}"
