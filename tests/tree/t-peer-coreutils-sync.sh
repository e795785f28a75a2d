#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-peer-coreutils-sync.sh - coreutils' own tests/misc/sync*.sh (Debian
# 12's coreutils 9.1 source package, as t-peer-coreutils-cp.sh) against
# 'flushkit sync', as root and as nobody, checked against
# tests/tree/peers/coreutils-sync.expected.  Skipped (77) when the
# Debian source cannot be had or not as root (it runs the scripts as
# nobody too).  Seconds.
tool=sync
. "$(dirname "$0")/../lib/peer-coreutils.sh"
