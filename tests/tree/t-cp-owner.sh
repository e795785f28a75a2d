#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-owner.sh - 'flushkit cp' run by a user who is not root, checked
# against GNU cp -a run the same way (coreutils' tests cp/special-bits.sh
# and cp/preserve-gid.sh): the copy of a root-owned set-user-ID and
# set-group-ID file is the user's and loses those bits (-r-sr-sr--
# becomes -r-xr-xr--); the copy of a file in another of the user's
# groups keeps that group; one in a group the user is not in gets the
# user's.  Each also through a directory (its setgid bit as its file's).
# Run as root, the user is nobody (setpriv, with two supplementary
# groups of numbers no group has); skipped (77) where that cannot be
# set up.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
GNU_CP=${GNU_CP:-/bin/cp}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (to act as nobody)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv not found"; exit 77; }
"$GNU_CP" --version 2>/dev/null | grep -q GNU ||
	{ echo "SKIP: no GNU cp at $GNU_CP to compare with"; exit 77; }
uid=$(id -u nobody 2>/dev/null) || { echo "SKIP: no user nobody"; exit 77; }
# Two group numbers no group has, and one more the user is not in.
free_gid() {
	local g=$1
	while getent group "$g" >/dev/null; do g=$((g + 1)); done
	echo "$g"
}
g1=$(free_gid 61001)
g2=$(free_gid $((g1 + 1)))
g3=$(free_gid $((g2 + 1)))
as_user() { setpriv --reuid="$uid" --regid="$g1" --groups="$g1,$g2" -- "$@"; }
as_user true 2>/dev/null || { echo "SKIP: setpriv cannot switch to nobody"; exit 77; }

t=$(mktemp -d /var/tmp/t-cp-owner.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The sources, owned by root: the user reads them and writes only in
# out.gnu and out.fk.
chmod 0755 "$t"
mkdir "$t/src" "$t/src/sdir"
touch "$t/src/c" "$t/src/g2" "$t/src/g3" "$t/src/mine"
chmod a=r,ug+sx "$t/src/c"		# -r-sr-sr--, root:root
chown "0:$g2" "$t/src/g2"		# another group of the user's
chown "0:$g3" "$t/src/g3"		# a group the user is not in
chown "$uid:$g2" "$t/src/mine"		# the user's own
chmod 6755 "$t/src/mine"		# keeps its bits: the user's
chown "0:$g2" "$t/src/sdir"
chmod 2775 "$t/src/sdir"
chmod 0755 "$t/src"
mkdir "$t/out.gnu" "$t/out.fk"
chown "$uid:$g1" "$t/out.gnu" "$t/out.fk"

for f in c g2 g3 mine sdir; do
	as_user "$GNU_CP" -a "$t/src/$f" "$t/out.gnu/$f" 2>"$t/gnu.err"
	grc=$?
	as_user "$FLUSHKIT" cp -a "$t/src/$f" "$t/out.fk/$f" >/dev/null 2>"$t/fk.err"
	frc=$?
	[ "$grc" -eq "$frc" ] ||
		bad "$f: GNU cp exit $grc, flushkit exit $frc: $(cat "$t/gnu.err") / $(cat "$t/fk.err")"
	g=$(stat -c '%u %g %A' "$t/out.gnu/$f" 2>&1)
	k=$(stat -c '%u %g %A' "$t/out.fk/$f" 2>&1)
	[ "$g" = "$k" ] || bad "$f: GNU cp gives '$g', flushkit '$k'"
done
# Not vacuous: what cp -a itself does here.
[ "$(stat -c %A "$t/out.gnu/c")" = "-r-xr-xr--" ] ||
	bad "GNU cp kept set-ID bits: $(stat -c %A "$t/out.gnu/c")"
[ "$(stat -c %g "$t/out.gnu/g2")" = "$g2" ] ||
	bad "GNU cp did not keep group $g2: $(stat -c %g "$t/out.gnu/g2")"
exit $fail
