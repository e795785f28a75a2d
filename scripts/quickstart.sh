#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/quickstart.sh - the README's first command: install the Debian
# packages, build, and run the main job: a TPC-B load of flushkit's page
# store, initialized at scale 10 and run for 30 s with 8 clients, a
# checkpoint every 10 s (smooth: sorted, paced, early writeback), progress
# every 5 s, then the TPC-B consistency check.
#   SCALE=10 CLIENTS=8 DURATION=30 DATA=./tpcb-data scripts/quickstart.sh
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh build
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-30}
DATA=${DATA:-./tpcb-data}
echo "== flushkit bench tpcb -i -s $SCALE --data-dir $DATA"
./build/flushkit bench tpcb -i -s "$SCALE" --data-dir "$DATA"
echo "== flushkit bench tpcb -c $CLIENTS -T $DURATION -P 5 --checkpoint-timeout 10s --check --data-dir $DATA"
./build/flushkit bench tpcb -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" -P 5 \
	--checkpoint-timeout 10s --check --data-dir "$DATA"
