#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench tpcb --device: the run on its own fresh file system (a lab disk
# of the ram model here, the quickest), loaded at -s as -i loads, run,
# and removed: the "device:" line, the summary, the result file's
# settings.device; no lab disk of the run left behind; --device with
# -i or a --check alone is a usage error (exit 2), a bad device too.
set -u
fail=0
err() { echo "FAIL: $*"; fail=1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: --device needs root"; exit 77; }
[ -e /dev/fuse ] || { echo "SKIP: no /dev/fuse (lab disks)"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/fk-t-tpcb-device.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1

"$FLUSHKIT" bench tpcb --device=ram -s 1 -c 2 -T 2 --checkpoint-timeout 1s \
	--max-wal-size 64MB --results res >run.out 2>run.err ||
	err "run exit $?: $(cat run.out run.err)"
grep -qE '^device: ram, ext4 on /dev/loop[0-9]+ \([0-9.]+ GiB\) mounted on ' run.err ||
	err "no device line: $(head -3 run.err)"
grep -q '^scaling factor: 1$' run.out || err "scale: $(grep scaling run.out)"
grep -q '^stall ratio = ' run.out || err "no stall ratio: $(cat run.out)"
rf=$(sed -n 's/^result file: //p' run.err)
[ -f "$rf" ] || err "no result file: $(tail -2 run.err)"
grep -q '"device":"ram"' "$rf" || err "settings without the device: $(head -2 "$rf")"
pid=$(basename "$rf" .jsonl)
pid=${pid##*-}
if "$FLUSHKIT" disk list 2>/dev/null | grep -q "^fkrun-$pid-"; then
	err "a lab disk of the run is left: $("$FLUSHKIT" disk list)"
fi

for args in "-i -s 1" "--check"; do
	# shellcheck disable=SC2086
	"$FLUSHKIT" bench tpcb --device=ram $args >u.out 2>&1
	rc=$?
	[ "$rc" = 2 ] || err "--device $args: exit $rc, not 2: $(cat u.out)"
	grep -q 'not with -i or --check alone' u.out || err "--device $args: $(cat u.out)"
done
"$FLUSHKIT" bench tpcb --device=floppy -T 1 >u.out 2>&1
rc=$?
[ "$rc" = 2 ] || err "--device=floppy: exit $rc, not 2"
grep -q "invalid value 'floppy' for --device" u.out || err "--device=floppy: $(cat u.out)"
exit $fail
