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
# minutes on 2 shared cores.  The runner is tests/tree/peers/coreutils.sh,
# this file's body is tests/lib/peer-coreutils.sh (also
# t-peer-coreutils-sync.sh's).
tool=cp
. "$(dirname "$0")/../lib/peer-coreutils.sh"
