#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-preserve-link.sh - 'flushkit cp -u' keeps hard links as GNU cp
# -au does (coreutils' test cp/preserve-link.sh): every name of a source
# inode ends up a link of one copy, whether the destination had that
# name missing, already linked, older, or newer (cp -u links over a
# newer separate file too).  Both orders of the first name (f, linkm).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
GNU_CP=${GNU_CP:-/bin/cp}
"$GNU_CP" --version 2>/dev/null | grep -q GNU ||
	{ echo "SKIP: no GNU cp at $GNU_CP to compare with"; exit 77; }
t=$(mktemp -d /var/tmp/t-cp-preserve-link.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# trees FIRST: the source s (one inode, five names) and the destination
# t/s holding FIRST, linke linked to it, an older fileo, a newer fileu.
trees() {
	rm -rf "$t/w"
	mkdir -p "$t/w/s" "$t/w/t/s"
	cd "$t/w" || exit 1
	touch s/f
	for n in linkm linke fileo fileu; do ln s/f "s/$n"; done
	touch "t/s/$1"
	ln "t/s/$1" t/s/linke
	touch -d '-1 hour' t/s/fileo
	touch -d '+1 hour' t/s/fileu
}
inodes() {
	stat -c %i t/s/f t/s/linkm t/s/linke t/s/fileo t/s/fileu | sort -u | wc -l
}
for first in f linkm; do
	trees "$first"
	"$GNU_CP" -au s t || bad "GNU cp -au failed"
	g=$(inodes)
	trees "$first"
	"$FLUSHKIT" cp -au s t >/dev/null || bad "flushkit cp -au failed"
	k=$(inodes)
	[ "$g" = 1 ] || bad "$first: GNU cp left $g inodes (the test is off)"
	[ "$k" = "$g" ] || bad "$first: flushkit cp -u left $k inodes, GNU cp $g"
done
exit $fail
