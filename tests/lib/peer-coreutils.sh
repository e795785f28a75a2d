# SPDX-License-Identifier: MIT
# tests/lib/peer-coreutils.sh - the body of t-peer-coreutils-TOOL.sh
# (sourced, with $tool set to cp or sync): coreutils' own tests of TOOL
# through tests/tree/peers/coreutils.sh --tool=TOOL, checked against
# tests/tree/peers/coreutils-TOOL.expected; on a regression the tail of
# each regressed script's log.  Skipped (77) not as root or when the
# Debian source cannot be had.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
: "${tool:?tool must be set}"
src=${FK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the coreutils suite runs as root here"; exit 77; }
logs=$(mktemp -d "${TMPDIR:-/var/tmp}/t-peer-coreutils-$tool.XXXXXX")
trap 'rm -rf "$logs"' EXIT
chmod 0755 "$logs"
expected=$src/tests/tree/peers/coreutils-$tool.expected
FK_PEER_LOGS=$logs FLUSHKIT=$FLUSHKIT "$src/tests/tree/peers/coreutils.sh" \
	--tool="$tool" --impl=flushkit --expected="$expected" >"$logs/out" 2>&1
rc=$?
cat "$logs/out"
[ $rc -eq 77 ] && exit 77
if [ $rc -ne 0 ]; then
	# The last lines of each regression's log, to see why.
	sed -n 's/^flushkit \([^:]*\): .*\[REGRESSION.*/\1/p' "$logs/out" |
		while read -r s; do
			name=${s%@*} at=
			[ "$name" = "$s" ] || at=@${s#*@}
			echo "---- $s.log (tail)"
			tail -15 "$logs/flushkit$at/$name.log" 2>/dev/null
		done
	echo "FAIL: coreutils tests of $tool regressed against $expected"
	exit 1
fi
echo "t-peer-coreutils-$tool: ok"
