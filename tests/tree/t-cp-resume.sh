#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-cp-resume.sh - 'flushkit cp --resume' completes a copy killed midway:
# a copy (fsync-each, so it is slow enough to be caught) is SIGKILLed
# once its first files appear; no file the killed run left incomplete
# has its source's size and mtime (times are set only after the data);
# the rerun with --resume -T (the killed run created DST: without -T,
# as with cp -a, the copy would go to DST/basename(SRC)) copies only what is missing or differs (fewer
# bytes than a fresh copy, the rest counted as left), fsyncs every file
# of the destination (the left ones too), and the result is exact:
# content, modes and mtimes (reading the source moves its atimes).  --checksum catches a file of the
# same size and mtime but other content, which the quick check leaves.
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
t=$(mktemp -d /var/tmp/t-cp-resume.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

describe() {
	(cd "$1" && find . -printf '%p %y %m %s %T@ %l\n' |
		LC_ALL=C sort
	 find . -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum)
}

src=$t/src
n=300
for d in 0 1 2; do
	mkdir -p "$src/d$d"
	for i in $(seq 1 $((n / 3))); do
		head -c $((4096 + (i % 7) * 20000)) /dev/urandom >"$src/d$d/f$i"
	done
done
head -c 3000000 /dev/urandom >"$src/d1/big"
ln "$src/d0/f1" "$src/d2/hardlink"
find "$src" -exec touch -h -d '2015-06-07 08:09:10.123456789' {} +
total=$(find "$src" -type f -links 1 -printf '%s\n' | awk '{s += $1} END {print s}')
total=$((total + $(stat -c %s "$src/d0/f1")))

dst=$t/dst
"$FLUSHKIT" cp --method=fsync-each "$src" "$dst" >/dev/null 2>&1 &
pid=$!
# Kill it once its first files are there.
for _ in $(seq 1 3000); do
	c=$(find "$dst" -type f 2>/dev/null | wc -l)
	[ "$c" -ge 20 ] && break
	sleep 0.01
done
kill -KILL $pid 2>/dev/null
wait $pid
rc=$?
[ $rc -eq 137 ] || bad "the copy was not killed midway (exit $rc)"
copied=$(find "$dst" -type f | wc -l)
echo "killed after $copied of $((n + 2)) files"
[ "$copied" -lt $((n + 1)) ] || bad "the killed copy was complete ($copied files)"

# No incomplete file carries its source's size and mtime.
(cd "$src" && find . -type f -printf '%p\n') | while read -r f; do
	[ -f "$dst/$f" ] || continue
	if [ "$(stat -c '%s %y' "$src/$f")" = "$(stat -c '%s %y' "$dst/$f")" ] &&
		! cmp -s "$src/$f" "$dst/$f"; then
		echo "FAIL: '$f' has its source's size and mtime but not its content"
	fi
done | grep FAIL && fail=1

"$FLUSHKIT" cp --json --resume -T "$src" "$dst" >"$t/resume.json" 2>"$t/err" ||
	bad "resume exit: $(cat "$t/err")"
[ "$(describe "$src")" = "$(describe "$dst")" ] ||
	{ bad "resumed copy differs"; diff <(describe "$src") <(describe "$dst") | head; }
python3 - "$t/resume.json" "$total" "$((n + 1))" <<'PY' || bad "resume json: $(cat "$t/resume.json")"
import json, sys
o = json.load(open(sys.argv[1]))
total, inodes = int(sys.argv[2]), int(sys.argv[3])
print("resume: copied %d of %d bytes, %d files left as they were"
      % (o["bytes"], total, o["skipped"]))
assert o["result"] == "ok", o
assert o["update"] == "resume", o
assert 0 < o["skipped"] and o["bytes"] < total, o
assert o["bytes"] + o["skipped_bytes"] == total, o
# Every file inode of the destination made durable, the ones left as
# they were too: fsynced twice each (data, then times), or, where the
# default method (auto) chose the sweep, by syncfs of the destination's
# file system with no per-file fsync.
if o["syncfs_calls"]:
    assert o["fsync_calls"] == 0, o
else:
    assert o["fsync_calls"] == 2 * inodes, (o["fsync_calls"], inodes)
PY

# A fresh copy copies every byte.
"$FLUSHKIT" cp --json "$src" "$t/fresh" >"$t/fresh.json" || bad "fresh copy"
grep -q "\"bytes\":$total," "$t/fresh.json" || bad "fresh bytes: $(grep bytes "$t/fresh.json")"

# Same size and mtime, other content: the quick check leaves it,
# --checksum copies it.
printf 'X' | dd of="$dst/d0/f2" bs=1 seek=10 conv=notrunc 2>/dev/null
touch -d '2015-06-07 08:09:10.123456789' "$dst/d0/f2"
"$FLUSHKIT" cp --summary --resume -T "$src" "$dst" >"$t/out" || bad "second resume"
cmp -s "$src/d0/f2" "$dst/d0/f2" && bad "quick check copied a same size+mtime file"
grep -q "^  bytes         0 " "$t/out" || bad "second resume copied: $(cat "$t/out")"
"$FLUSHKIT" cp --resume --checksum -T "$src" "$dst" >"$t/out" || bad "checksum resume"
cmp "$src/d0/f2" "$dst/d0/f2" || bad "--checksum did not copy the changed file"
[ "$(describe "$src")" = "$(describe "$dst")" ] || bad "after --checksum the copy differs"
"$FLUSHKIT" cp --checksum "$src" "$dst" 2>/dev/null
[ $? -eq 1 ] || bad "--checksum without --resume accepted"

# The obvious retry, without -T, once the first run created DST: never
# a second copy nested in DST/basename(SRC); the message gives the
# command that resumes.
"$FLUSHKIT" cp --resume "$src" "$dst" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] || bad "--resume SRC DST without -T: exit not 1"
[ ! -e "$dst/$(basename "$src")" ] || bad "--resume SRC DST nested a copy"
grep -qF "flushkit cp --resume -T '$src' '$dst'" "$t/err" ||
	bad "--resume SRC DST: no resuming command: $(cat "$t/err")"
# Into the directory given before, it resumes (DIR/basename(SRC) is
# there), nothing nested.
mkdir "$t/p" && "$FLUSHKIT" cp "$src" "$t/p" || bad "copy into p"
"$FLUSHKIT" cp --resume "$src" "$t/p" 2>"$t/err" || bad "--resume SRC DIR: $(cat "$t/err")"
[ ! -e "$t/p/src/src" ] || bad "--resume SRC DIR nested a copy"

[ $fail -eq 0 ] && echo "t-cp-resume: ok"
exit $fail
