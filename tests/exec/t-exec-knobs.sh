#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-exec-knobs.sh - the shim's small-file budget and its writeback I/O
# priority, seen with strace -f (skipped without strace or perl):
# --small-budget=8k leaves the first 8 KiB of small files closed
# unhinted and hints every later one at its close; unlimited hints none;
# --hint-ioprio=idle runs each of the shim's sync_file_range calls at
# the idle class and puts the thread back to exactly what it had (a
# thread's own be:2 included, "none" for one that never set one), so
# the program reads back its own priority unchanged.  And the new
# options' usage errors (exit 2) and malformed variables (one message,
# the shim off, the program's result unchanged).
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built flushkit command}"
fail=0
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-exec-knobs.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
err() {
	echo "FAIL: $*"
	fail=1
}

for bad in --pace=101 --pace=x --hint-ioprio=rt --hint-ioprio=rt:1 \
	--hint-ioprio=idle:3 --small-budget=lots; do
	"$FLUSHKIT" exec "$bad" -- true 2>"$t/err"
	rc=$?
	[ $rc -eq 2 ] || err "$bad: exit $rc, want 2"
done
for v in FLUSHKIT_PACE=101 FLUSHKIT_HINT_IOPRIO=8193 FLUSHKIT_SMALL_BUDGET=x \
	FLUSHKIT_SMALL_BUDGET=18446744073709551616; do
	out=$(env LD_PRELOAD="$(dirname "$FLUSHKIT")/libflushkit-preload.so" \
		"$v" sh -c 'echo out; exit 3' 2>"$t/err")
	rc=$?
	[ $rc -eq 3 ] && [ "$out" = out ] || err "$v: exit $rc, output '$out'"
	[ "$(grep -c "flushkit-preload: malformed ${v%%=*}" "$t/err")" -eq 1 ] ||
		err "$v: not one message: $(cat "$t/err")"
done

if ! command -v strace >/dev/null || ! command -v perl >/dev/null; then
	echo "skip: no strace or no perl"
	exit 77
fi

# Ten files of 4 KiB, each opened, written and closed by one process.
cat >"$t/small.pl" <<'PERL'
for my $i (1 .. 10) {
	open(F, ">", "$ARGV[0]/f$i") or die "open: $!";
	syswrite(F, "x" x 4096) == 4096 or die "write: $!";
	close(F) or die "close: $!";
}
PERL
mkdir "$t/s1" "$t/s2"
strace -f -qq -e trace=sync_file_range -o "$t/st1" \
	"$FLUSHKIT" exec --stats="$t/stats1" --small-budget=8k -- perl "$t/small.pl" "$t/s1" ||
	err "small files, budget 8k: perl failed"
# The first call is the probe of the file system (len 1).
n=$(grep -c 'sync_file_range(.*, 4096, SYNC_FILE_RANGE_WRITE)' "$t/st1")
[ "$n" -eq 8 ] || err "budget 8k: $n of 10 small files hinted, want 8: $(cat "$t/st1")"
grep -q ' small_hints=8 small_left=2 ' "$t/stats1" || err "budget 8k: stats $(cat "$t/stats1")"
for opt in --small-budget=unlimited --flush-after=1M; do # the default
	rm -rf "$t/s2" && mkdir "$t/s2"
	strace -f -qq -e trace=sync_file_range -o "$t/st2" \
		"$FLUSHKIT" exec --stats="$t/stats2" "$opt" -- perl "$t/small.pl" "$t/s2" 2>"$t/err2" ||
		err "small files, $opt: perl failed"
	n=$(grep -c 'sync_file_range(.*, 4096, SYNC_FILE_RANGE_WRITE)' "$t/st2")
	[ "$n" -eq 0 ] || err "$opt: $n small files hinted, want 0"
	# The shim was on (files classified, none hinted), not disabled.
	grep -q ' files=10 .* small_hints=0 small_left=0 ' "$t/stats2" ||
		err "$opt: stats $(cat "$t/stats2" "$t/err2")"
	rm -f "$t/stats2"
done
for i in $(seq 1 10); do
	[ "$(wc -c <"$t/s1/f$i")" -eq 4096 ] || err "s1/f$i not 4096 bytes"
done

# --hint-ioprio=idle: the hint at idle, the thread put back.
cat >"$t/prio.pl" <<'PERL'
# ioprio_set / ioprio_get: x86-64 251 / 252, aarch64 30 / 31
my ($set, $get) = `uname -m` =~ /aarch64/ ? (30, 31) : (251, 252);
syscall($set, 1, 0, (2 << 13) | 2) == 0 or die "ioprio_set: $!" if $ARGV[1];
open(F, ">", $ARGV[0]) or die "open: $!";
for (1 .. 3) { syswrite(F, "x" x (1 << 20)) == 1 << 20 or die "write: $!"; }
close(F) or die "close: $!";
print syscall($get, 1, 0), "\n";
PERL
for own in 0 1; do
	out=$(strace -f -qq -e trace=ioprio_set,sync_file_range -o "$t/st3" \
		"$FLUSHKIT" exec --hint-ioprio=idle -- perl "$t/prio.pl" "$t/p$own" $own)
	want=0
	[ $own -eq 1 ] && want=16386
	[ "$out" = "$want" ] || err "own priority $own: reads back '$out', want $want"
	# Every hint (not the probe) between a set to idle and a set back.
	awk -v own=$own '
		/ioprio_set\(.*IOPRIO_CLASS_IDLE/ { idle = 1; next }
		/ioprio_set\(/ { if (idle) back++; idle = 0; next }
		/sync_file_range\(.*, 1, SYNC/ { next }
		/sync_file_range\(/ { hints++; if (!idle) bad++ }
		END { exit !(hints >= 3 && !bad && back >= hints) }
	' "$t/st3" || err "own priority $own: hints not at idle: $(cat "$t/st3")"
	if [ $own -eq 0 ]; then
		grep -q 'ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_NONE, 0))' "$t/st3" ||
			err "not put back to none: $(cat "$t/st3")"
	fi
done
exit $fail
