# SPDX-License-Identifier: MIT
# tests/lib/fkloop.sh - sourced by the "bench neighbor" shell tests that
# run on a file system of their own: a 2 GiB ext4 on a loop device,
# mounted at $t/mnt, so the bdi whose strict_limit and max ratio a
# strict run changes is the test's, not the machine's disk.  The shell
# side of tests/lib/fkloop.[ch].
#
#   fkt_loop_require          skip (77) without loop devices or mkfs.ext4
#   fkt_loop_setup NAME [MODE]
#                             t=/var/tmp/fk-NAME.XXXXXX (chmod MODE if
#                             given), cleanup at exit, the ext4 made and
#                             mounted at $t/mnt (on failure: FAIL, exit 1)
#   fkt_loop_bdi DIR          mm, bdi, ratio of the bdi holding DIR;
#                             knobs prints "strict_limit ratio"; before
#                             gets the knobs as they are now
#   fkt_loop_wait_strict PID  wait (120 s at most) until the bdi has
#                             strict_limit 1 while PID runs; 0 if seen
#
# At exit the bdi knobs (if fkt_loop_bdi ran) are put back to $before,
# whatever the code under test left, then the file system is unmounted,
# the loop device detached and $t removed.  A test with more to undo
# first defines fkt_loop_cleanup_hook (it runs before all that).

fkt_loop_require() {
	[ -e /dev/loop-control ] || { echo "SKIP: no loop devices"; exit 77; }
	command -v mkfs.ext4 >/dev/null ||
		{ echo "SKIP: no mkfs.ext4"; exit 77; }
}

loop=""
fkt_loop_cleanup() {
	declare -F fkt_loop_cleanup_hook >/dev/null && fkt_loop_cleanup_hook
	[ -n "${bdi:-}" ] && [ -n "${before:-}" ] && {
		echo "${before#* }" >"$ratio"
		echo "${before%% *}" >"$bdi/strict_limit"
	} 2>/dev/null
	mountpoint -q "$t/mnt" && umount "$t/mnt"
	[ -n "$loop" ] && losetup -d "$loop"
	rm -rf "$t"
}

fkt_loop_setup() {
	t=$(mktemp -d "/var/tmp/fk-$1.XXXXXX") || exit 1
	[ -n "${2:-}" ] && chmod "$2" "$t"
	trap fkt_loop_cleanup EXIT
	truncate -s 2G "$t/img"
	loop=$(losetup --find --show "$t/img") ||
		{ echo "FAIL: losetup"; exit 1; }
	mkfs.ext4 -q -F "$loop" >/dev/null 2>&1 ||
		{ echo "FAIL: mkfs.ext4"; exit 1; }
	mkdir -p "$t/mnt"
	mount "$loop" "$t/mnt" || { echo "FAIL: mount $loop"; exit 1; }
}

knobs() { echo "$(cat "$bdi/strict_limit") $(cat "$ratio")"; }

fkt_loop_bdi() {
	mm=$(stat -c '%Hd:%Ld' "$1")
	[ -e "/sys/dev/block/$mm/partition" ] &&
		mm=$(cat "/sys/dev/block/$mm/../dev")
	bdi=/sys/class/bdi/$mm
	ratio=$bdi/max_ratio_fine
	[ -e "$ratio" ] || ratio=$bdi/max_ratio
	before=$(knobs)
}

fkt_loop_wait_strict() {
	local _
	for _ in $(seq 1 2400); do
		[ "$(cat "$bdi/strict_limit")" = 1 ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
