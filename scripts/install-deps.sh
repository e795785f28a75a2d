#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian 12 packages flushkit needs to build, test and run
# its benchmarks.  Run as root.  Skips apt when everything is present.
#
#   scripts/install-deps.sh           build, test and run (quickstart)
#   scripts/install-deps.sh --peers   also the peers the benchmarks run
#                                     beside flushkit: PostgreSQL 15
#                                     (bench/peers/tpcb.sh, reproduce 000
#                                     and 002) and fs_mark (bench
#                                     fsmark's peer, bench/peers/fsmark.sh)
set -eu
peers=0
case "${1:-}" in
'') ;;
--peers) peers=1 ;;
-h | --help)
	sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "install-deps: unrecognized argument '$1' (--peers)" >&2
	exit 2
	;;
esac
pkgs=(build-essential cmake pkg-config bc liburing-dev libjson-c-dev
      liblz4-dev libzstd-dev
      e2fsprogs xfsprogs btrfs-progs rsync util-linux procps
      gnuplot-nox python3 diffutils findutils
      fuse3 libfuse3-dev clang libclang-rt-14-dev
      pandoc man-db bash-completion dpkg-dev debhelper lintian file
      strace nocache clang-format abigail-tools fio)  # strace: t-exec.sh; fio: t-disk-behaviour.sh; nocache: bench neighbor's peer; clang-format: scripts/format.sh --check in .ci/run; abigail-tools: t-abi-compat.sh
[ "$peers" = 0 ] || pkgs+=(postgresql-15 fsmark)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: need root to install: ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}"
fi
