#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-peer-coreutils-cp.sh - coreutils' own tests/cp/*.sh (Debian 12's
# coreutils 9.1 source package, fetched through apt by the runner into
# /var/cache/flushkit-peers/coreutils) against 'flushkit cp', checked
# against tests/tree/peers/coreutils-cp.expected: a script expected to pass
# (or to be refused by design) that does not is a failure, and so is a
# script missing from the list.  Skipped (77) when the Debian source
# cannot be had (no network, apt refuses) or not as root (the suite's
# root-only scripts act as nobody through chroot --user).  About three
# minutes on 2 shared cores.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
src=${FK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the coreutils suite runs as root here"; exit 77; }
logs=$(mktemp -d "${TMPDIR:-/var/tmp}/t-peer-coreutils-cp.XXXXXX")
trap 'rm -rf "$logs"' EXIT
chmod 0755 "$logs"
FK_PEER_LOGS=$logs FLUSHKIT=$FLUSHKIT "$src/tests/tree/peers/coreutils-cp.sh" \
	--impl=flushkit --expected="$src/tests/tree/peers/coreutils-cp.expected" >"$logs/out" 2>&1
rc=$?
cat "$logs/out"
[ $rc -eq 77 ] && exit 77
if [ $rc -ne 0 ]; then
	# The first lines of each regression's log, to see why.
	for s in $(sed -n 's/^flushkit \([^:]*\): .*\[REGRESSION.*/\1/p' "$logs/out"); do
		echo "---- $s.log (tail)"
		tail -15 "$logs/flushkit/$s.log" 2>/dev/null
	done
	echo "FAIL: coreutils tests/cp regressed against tests/tree/peers/coreutils-cp.expected"
	exit 1
fi
echo "t-peer-coreutils-cp: ok"
