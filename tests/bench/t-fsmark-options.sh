#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# flushkit bench fsmark with fs_mark 3.3's options and meanings: -d is
# created (not its parents), -D/-N subdirectories 00, 01, ... filled
# round robin, -L loops with a row each, keeping the files, and the
# run-to-run spread, -F until the file system is full, -l appends the
# table to a log file, -p/-r name lengths, -t a multiple of the -d
# count, and fs_mark's option errors (exit 2, its message).
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
base=$(mktemp -d "${TMPDIR:-/var/tmp}/t-fsmark-options.XXXXXX")
trap 'rm -rf "$base"' EXIT
cd "$base" || exit 1
F() { "$FLUSHKIT" bench fsmark --no-results "$@"; }

# The done-when command line: -d created, 4 subdirectories, 100 files
# each in turn, 3 loops (-n 200 small files to keep it short).
F -d "$base/new" -D 4 -N 100 -L 3 -n 200 -s 4096 -S 0 >dd.out 2>dd.err ||
	err "-d new -D 4 -N 100 -L 3: exit $?: $(cat dd.err)"
[ -d "$base/new" ] || err "-d was not created"
subs=$(cd "$base/new" && ls | tr '\n' ' ')
[ "$subs" = "00 01 02 03 " ] || err "subdirectories: $subs"
[ "$(find "$base/new" -type f | wc -l)" = 600 ] ||
	err "-L 3 kept $(find "$base/new" -type f | wc -l) files, not 600"
[ "$(find "$base/new" -maxdepth 1 -type f | wc -l)" = 0 ] ||
	err "files outside the subdirectories"
# 200 files a loop, 100 per subdirectory in turn: each loop fills two
# neighbours with 100 each; every subdirectory has a multiple of 100
for s in 00 01 02 03; do
	c=$(ls "$base/new/$s" | wc -l)
	[ $((c % 100)) -eq 0 ] || err "subdirectory $s has $c files"
done
grep -q "Directories:  Round Robin between directories across 4 subdirectories with 100 files per subdirectory." dd.out ||
	err "no -D/-N line: $(cat dd.out)"
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ +4096 +[0-9.]+ +[0-9]+$' dd.out)" = 3 ] ||
	err "not 3 rows: $(cat dd.out)"
awk '/^FSUse%/ {getline; a=$2; getline; b=$2; getline; c=$2}
	END {exit !(a == 200 && b == 400 && c == 600)}' dd.out ||
	err "Count not cumulative: $(cat dd.out)"
grep -qE '^# Files/sec over 3 loops: avg [0-9.]+, stddev [0-9.]+ \([0-9.]+%\), min [0-9.]+, max [0-9.]+$' dd.out ||
	err "no run-to-run spread: $(cat dd.out)"

# the result file has the subdirectories and each loop's Files/sec
"$FLUSHKIT" bench fsmark -d "$base/new2" -D 4 -N 100 -L 3 -n 200 -s 4096 \
	-S 0 --results "$base/res" >/dev/null 2>&1 || err "--results run"
python3 - "$base"/res/fsmark-*.jsonl <<'EOF' || err "fsmark result file"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
st = [l for l in lines if l["type"] == "settings"][0]
sm = lines[-1]
assert st["subdirs"] == 4 and st["files_per_subdir"] == 100, st
assert st["loops"] == 3 and st["keep"] is True, st
assert sm["type"] == "summary" and len(sm["loop_files_per_sec"]) == 3, sm
assert all(x > 0 for x in sm["loop_files_per_sec"]), sm
EOF

# -D without -N: the time hash, one subdirectory for a short run
F -d "$base/th" -D 3 -n 20 -s 100 -S 0 -k >th.out || err "-D 3 exit $?"
[ "$(find "$base/th" -type f | wc -l)" = 20 ] || err "-D 3: files"
[ "$(find "$base/th" -mindepth 1 -type d | wc -l)" = 3 ] || err "-D 3: dirs"
grep -q "Time based hash between directories across 3 subdirectories with 180 seconds per subdirectory." th.out ||
	err "no time hash line: $(cat th.out)"

# -d with missing parents: created (fs_mark creates the path; the
# README's "-d /var/tmp/readme/fs" on a fresh machine)
F -d "$base/no/such" -n 1 >/dev/null 2>np.err || err "missing parents: exit $?: $(cat np.err)"
[ -d "$base/no/such" ] || err "missing parents: not created"
# ... but not through a regular file: exit 1, the component named
: >"$base/afile"
F -d "$base/afile/such" -n 1 >/dev/null 2>np.err
[ $? -eq 1 ] || err "parent a file: not exit 1"
grep -q "mkdir '$base/afile': Not a directory" np.err ||
	err "parent a file message: $(cat np.err)"

# -p/-r: name lengths (16 bytes, 4 random at the end)
F -d "$base/names" -n 10 -s 10 -S 0 -k -p 16 -r 4 >pr.out || err "-p -r exit $?"
bad=$(ls "$base/names" | grep -cvE '^[0-9a-f~]{12}[0-9A-Z]{4}$')
[ "$bad" = 0 ] || err "-p 16 -r 4 names: $(ls "$base/names" | head -3)"
grep -q "File names: 16 bytes long, (12 initial bytes of time stamp with 4 random bytes at end of name)" pr.out ||
	err "names line: $(cat pr.out)"
F -d "$base/names0" -n 1 -s 10 -S 0 -k -p 8 -r 0 >/dev/null || err "-r 0"
[ "$(ls "$base/names0" | grep -cvE '^[0-9a-f]{8}$')" = 0 ] ||
	err "-p 8 -r 0 names: $(ls "$base/names0" | head -3)"

# -l: the header and rows appended to the log file, run after run
F -d "$base/log" -n 5 -s 100 -S 0 -l "$base/fs.log" >l1.out || err "-l exit $?"
F -d "$base/log" -n 5 -s 100 -S 0 -l "$base/fs.log" >l2.out || err "-l exit $?"
[ "$(grep -c '^FSUse%' "$base/fs.log")" = 2 ] ||
	err "-l: not two runs in the log: $(cat "$base/fs.log")"
[ "$(grep -cE '^ +[0-9]+ +5 +100 ' "$base/fs.log")" = 2 ] ||
	err "-l: rows: $(cat "$base/fs.log")"

# -F: until the file system is full (a 16 MiB loop-mounted ext4)
if [ "$(id -u)" -eq 0 ] && command -v mkfs.ext4 >/dev/null; then
	img=$base/fs.img
	truncate -s 16M "$img" && mkfs.ext4 -q -F "$img" >/dev/null 2>&1 &&
		mkdir "$base/mnt" && mount -o loop "$img" "$base/mnt" ||
		err "cannot mount a 16 MiB ext4"
	if mountpoint -q "$base/mnt"; then
		F -d "$base/mnt/fill" -F -n 100 -s 16384 -S 0 >fill.out 2>fill.err
		rc=$?
		umount "$base/mnt"
		[ $rc -eq 0 ] || err "-F exit $rc: $(cat fill.out fill.err)"
		grep -q "^Insufficient free space in $base/mnt/fill to create 100 new files, exiting$" fill.out ||
			err "-F did not stop at a full file system: $(cat fill.out)"
		rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +16384 ' fill.out)
		[ "$rows" -ge 5 ] || err "-F: $rows loops in 16 MiB"
	fi
else
	echo "skip -F: needs root and mkfs.ext4"
fi

# fs_mark's option errors: exit 2 and its message
refuse() { # MESSAGE OPTIONS...
	local m=$1
	shift
	F "$@" >/dev/null 2>ref.err
	local rc=$?
	[ $rc -eq 2 ] || err "'$*': exit $rc, not 2"
	head -1 ref.err | grep -qF "flushkit bench fsmark: $m" &&
		[ "$(wc -l <ref.err)" -eq 2 ] &&
		[ "$(tail -1 ref.err)" = "Try 'flushkit bench fsmark --help' for more information." ] ||
		err "'$*': not '$m': $(head -2 ref.err)"
}
refuse "Must specify at least one directory with -d switch" -n 5
refuse "Number of subdirs needs to be greater than 1" -d "$base/x" -D 1
refuse "Must specify at more than 1 subdirectory with -D switch for -N num_per_subdir to make sense" \
	-d "$base/x" -N 10
refuse "Max filename size is 128" -d "$base/x" -p 129
refuse "Max files is 1000000" -d "$base/x" -n 1000001
refuse "Max threads is 64" -d "$base/x" -t 65
refuse "MAX IO buffer size is 1048576" -d "$base/x" -w 2097152
refuse "Threads (3) must be an even multiple the number of directories (2) and less than 64" \
	-d "$base/x" -d "$base/y" -t 3
refuse "-r 30 random bytes do not fit in -p 20 byte names" -d "$base/x" -p 20 -r 30
[ ! -e "$base/x" ] || err "a refused command line created -d"

[ $fail -eq 0 ] && echo ok
exit $fail
