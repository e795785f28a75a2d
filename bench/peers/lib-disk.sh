# SPDX-License-Identifier: MIT
# bench/peers/lib-disk.sh - DEVICE=MODEL for the peer scripts (sourced):
# with DEVICE set (a --device value of flushkit's benchmarks: hdd, ssd,
# nvme, ram, throttle:BPS:IOPS, with ",slowdown=K" and ",no-write-cache"
# as there), the script works on a lab disk of that model (flushkit
# disk create, docs/disk.md) with a fresh file system instead of the
# directory it would use, and removes it at exit.  Without DEVICE
# nothing changes.
#   DEVICE_SIZE  the disk's size (default 8G; RAM-backed: it must fit)
#   DEVICE_FS    mkfs type (default ext4)
# fk_peer_device FLUSHKIT sets fk_peer_mnt (the mount point, "" without
# DEVICE) and prints a "device:" line on stderr; the script calls
# fk_peer_device_release from its own exit trap.
fk_peer_mnt="" fk_peer_dev="" fk_peer_fk=""

fk_peer_device() {
	[ -n "${DEVICE:-}" ] || return 0
	fk_peer_fk=$1
	local model=${DEVICE%%,*} opts=() o
	if [ "$model" != "$DEVICE" ]; then
		local IFS=,
		for o in ${DEVICE#*,}; do
			case $o in
			slowdown=*) opts+=(--slowdown "${o#slowdown=}") ;;
			no-write-cache) opts+=(--no-write-cache) ;;
			*) echo "DEVICE=$DEVICE: unknown suffix '$o' (slowdown=K, no-write-cache)" >&2; exit 2 ;;
			esac
		done
	fi
	[ "$model" = native ] && return 0
	fk_peer_dev=$("$fk_peer_fk" disk create --model="$model" \
		--size "${DEVICE_SIZE:-8G}" "${opts[@]}") || exit 1
	# Until the script's own exit trap (which calls the release) is set.
	trap fk_peer_device_release EXIT
	local fs=${DEVICE_FS:-ext4} force=-F
	[ "$fs" = ext4 ] || force=-f
	if ! "mkfs.$fs" -q "$force" "$fk_peer_dev" >/dev/null; then
		fk_peer_device_release
		exit 1
	fi
	fk_peer_mnt=$(mktemp -d /var/tmp/fk-peer-disk.XXXXXX)
	mount "$fk_peer_dev" "$fk_peer_mnt" || { fk_peer_device_release; exit 1; }
	echo "device: $DEVICE, a lab disk ($fk_peer_dev, ${DEVICE_SIZE:-8G} $fs) mounted on $fk_peer_mnt" >&2
}

fk_peer_device_release() {
	if [ -n "$fk_peer_mnt" ]; then
		mountpoint -q "$fk_peer_mnt" && umount "$fk_peer_mnt"
		rmdir "$fk_peer_mnt" 2>/dev/null
		fk_peer_mnt=""
	fi
	if [ -n "$fk_peer_dev" ]; then
		"$fk_peer_fk" disk destroy "$fk_peer_dev" >/dev/null
		fk_peer_dev=""
	fi
}
