#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/tree/peers/coreutils.sh - run coreutils' own tests of a tool,
# tests/cp/*.sh against 'flushkit cp' or tests/misc/sync*.sh against
# 'flushkit sync', and against GNU's for reference.
#
#   tests/tree/peers/coreutils.sh --tool=cp|sync [--impl=flushkit|gnu|both]
#                        [--user=root|nobody|both] [--expected=FILE]
#                        [SCRIPT...]
#
# The suite is not in this repository: it is Debian 12's coreutils 9.1
# SOURCE PACKAGE (the cp and sync on this machine), obtained through
# apt at run time into a cache outside the repository ($FK_PEER_CACHE,
# default /var/cache/flushkit-peers/coreutils): a private apt
# configuration with a deb-src line for the Debian mirror that
# /etc/apt's sources name, 'apt-get source --download-only
# coreutils=9.1-1', then 'dpkg-source -x'.  Nothing of it is built:
# each script runs through its own tests/init.sh with a TOOL first in
# PATH that runs "$FLUSHKIT" TOOL "$@" (default: build/flushkit of this
# checkout; its messages' program name "flushkit TOOL: " read as
# "TOOL: "), or /bin/TOOL for the reference run; every other program
# is the system's coreutils 9.1.  --user: who runs the scripts, root
# (default for cp: its root-only scripts act as nobody themselves
# through chroot --user), nobody (setpriv; the scripts that need root
# skip) or both (default for sync, whose sync.sh checks an unreadable
# directory only when not root); a nobody run's results are named
# SCRIPT@nobody.
#
# Prints one line per script, user and implementation: pass, fail,
# skip, or refused-by-design (with its reason, from the tool's table
# below), then the counts ("flushkit: N pass, N fail, N skip, N
# refused-by-design").  A failing script's log is in
# $FK_PEER_CACHE/logs/IMPL/NAME.log; for a failure the first flushkit
# diagnostic of the log is shown.  If the Debian source cannot be had
# (no network, apt refuses), it says so and exits 77.  Exit 0 once the
# runs are done, whatever they counted: this is a measurement, not a
# gate; unless --expected=FILE (lines "SCRIPT[@nobody]
# pass|fail|skip|refused", '#' comments; tests/tree/peers/coreutils-TOOL.expected,
# read by tests/tree/t-peer-coreutils-TOOL.sh): then flushkit's result of each
# script is checked against it, and the exit status is 1 if one that is
# expected to pass or to be refused-by-design does not, or a script has
# no line (a result better than expected is named, to update the list).
# Each run works in a directory of its own under the cache, so that two
# runs at once do not share one.
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
impl=both
expected=
tool=
users=
scripts=()
for a in "$@"; do
	case $a in
	--tool=*) tool=${a#--tool=} ;;
	--impl=*) impl=${a#--impl=} ;;
	--user=*) users=${a#--user=} ;;
	--expected=*) expected=${a#--expected=} ;;
	-h | --help) sed -n '3,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	-*) echo "coreutils.sh: unknown option '$a'" >&2; exit 2 ;;
	*) scripts+=("${a%.sh}") ;;
	esac
done
case $impl in flushkit | gnu | both) ;; *) echo "coreutils.sh: --impl=flushkit|gnu|both" >&2; exit 2 ;; esac
# Per tool: the suite's folder and scripts, who runs them by default.
case $tool in
cp) suite=tests/cp glob='*.sh' users=${users:-root} ;;
sync) suite=tests/misc glob='sync*.sh' users=${users:-both} ;;
*) echo "coreutils.sh: --tool=cp|sync" >&2; exit 2 ;;
esac
case $users in root | nobody) ;; both) users="root nobody" ;;
*) echo "coreutils.sh: --user=root|nobody|both" >&2; exit 2 ;; esac
FLUSHKIT=${FLUSHKIT:-$here/build/flushkit}
GNU_TOOL=${GNU_TOOL:-/bin/$tool}
cache=${FK_PEER_CACHE:-/var/cache/flushkit-peers/coreutils}
version=9.1
debver=9.1-1
per_script_timeout=${FK_PEER_TIMEOUT:-120}

# Scripts whose failure with flushkit TOOL is a design decision, and
# why.  Only scripts whose subject is such a decision belong here; a
# missing option that could be had is a plain fail.  sync: none.
declare -A by_design=()
[ "$tool" = cp ] && by_design=(
	[preserve-gid]="plain cp (no -p) gives the copier's owner and group; flushkit cp is always cp -a, so the copy keeps them"
	[existing-perm-dir]="plain 'cp -r' leaves an existing destination directory's mode as it is; flushkit cp is always cp -a, so it gets its source's"
	[link-deref]="plain 'cp --link' follows a source symlink and refuses a directory without -r; flushkit cp is always cp -a (-P, recursive), so it links the symlink itself (its -P rows pass)"
	[same-file]="plain cp (no -d) follows a source symlink ('cp -b symlink foo', 'cp sl1 sl2': the same file); flushkit cp is always cp -a, whose rows (-d, -a) pass"
)

# ---- the source package ----

# The Debian mirror that apt's own sources name for the main archive.
mirror() {
	local f u
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		u=$(awk '/^URIs:/ {for (i = 2; i <= NF; i++) if ($i !~ /security/) {print $i; exit}}' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		u=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/ && $i !~ /security/) {print $i; exit}}' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
}

fetch_source() {
	src=$cache/coreutils-$version
	[ -f "$src/tests/init.sh" ] && [ -d "$src/tests/cp" ] && return 0
	local m
	m=$(mirror)
	[ -n "$m" ] || { echo "no Debian mirror named in /etc/apt"; return 1; }
	mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial" "$cache/dl" || return 1
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $m bookworm main" \
		>"$cache/apt/sources.list"
	local aptopts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$cache/apt/lists"
		-o "Dir::Cache=$cache/apt/cache"
		-o APT::Sandbox::User=root)
	apt-get -q "${aptopts[@]}" update >"$cache/apt.log" 2>&1 ||
		{ echo "apt-get update of $m (deb-src) failed: $(tail -1 "$cache/apt.log")"; return 1; }
	(cd "$cache/dl" && apt-get -q "${aptopts[@]}" source --download-only "coreutils=$debver") \
		>>"$cache/apt.log" 2>&1 ||
		{ echo "apt-get source coreutils=$debver failed: $(tail -1 "$cache/apt.log")"; return 1; }
	rm -rf "$src"
	dpkg-source -x "$cache/dl/coreutils_$debver.dsc" "$src" >>"$cache/apt.log" 2>&1 ||
		{ echo "dpkg-source -x failed: $(tail -1 "$cache/apt.log")"; return 1; }
	[ -f "$src/tests/init.sh" ] || { echo "no tests/init.sh in the source"; return 1; }
}

if ! why=$(fetch_source); then
	echo "SKIP: the coreutils $debver source package cannot be had: $why"
	exit 77
fi
src=$cache/coreutils-$version
[ ${#scripts[@]} -gt 0 ] || for f in "$src"/$suite/$glob; do
	n=${f##*/}
	scripts+=("${n%.sh}")
done
[ "$impl" = gnu ] || [ -x "$FLUSHKIT" ] ||
	{ echo "coreutils.sh: no flushkit at $FLUSHKIT (build first, or set FLUSHKIT)" >&2; exit 2; }

# ---- one run ----

# The programs the suite may require_built_: the system's coreutils.
built=$(dpkg -L coreutils 2>/dev/null | sed -n 's#^/usr/s\{0,1\}bin/##p; s#^/bin/##p' | tr '\n' ' ')

# A tree the scripts run in: the source's top level (tests/, init.cfg,
# ...) by symlink, and src/ holding the TOOL under test.  Readable by
# nobody, whom the root-only scripts become; owned by @user, who
# creates the scripts' test directories in it.
make_tree() {
	local w=$1 cmd=$2 user=$3
	rm -rf "$w"
	mkdir -p "$w/src"
	local e
	for e in "$src"/*; do
		[ "${e##*/}" = src ] || ln -s "$e" "$w/${e##*/}"
	done
	if [ "$cmd" = flushkit ]; then
		# The program's name, as a harness maps a peer's: flushkit
		# TOOL says "flushkit TOOL: MSG" (GNU's MSG where it has
		# one), a built TOOL "TOOL: MSG".  Only that prefix, at the
		# start of a line of stderr, is rewritten; the exit status
		# is TOOL's, and stderr is complete when the wrapper exits.
		printf '#!/bin/bash\nexec 3>&1\n%q %s "$@" 2>&1 >&3 3>&- | sed -u "s/^flushkit %s: /%s: /" >&2\nexit ${PIPESTATUS[0]}\n' \
			"$FLUSHKIT" "$tool" "$tool" "$tool" >"$w/src/$tool"
	else
		# Named TOOL, as a built one is: its messages start "TOOL: ".
		printf '#!/bin/bash\nexec -a %s %q "$@"\n' "$tool" "$GNU_TOOL" >"$w/src/$tool"
	fi
	chmod 0755 "$w/src/$tool" "$w" "$w/src"
	[ "$user" = root ] || chown "$user" "$w"
	# The configuration the scripts ask a build about: that of the
	# system's cp (Linux has these calls; what it links decides ACL,
	# xattr and SELinux support).
	local libs
	libs=$(ldd "$GNU_TOOL" 2>/dev/null)
	{
		printf '#define %s 1\n' HAVE_UTIMENSAT HAVE_LUTIMES HAVE_LINKAT \
			HAVE_OPENAT
		echo '#define LINK_FOLLOWS_SYMLINKS 0'
		case $libs in *libacl*) echo '#define USE_ACL 1' ;; esac
		case $libs in *libattr* | *libacl*) echo '#define USE_XATTR 1' ;; esac
		case $libs in *libselinux*) echo '#define HAVE_SELINUX_SELINUX_H 1' ;; esac
		case $libs in *libcap*) echo '#define HAVE_CAP 1' ;; esac
	} >"$w/config.h"
}

declare -A want=()
if [ -n "$expected" ]; then
	[ -r "$expected" ] || { echo "coreutils.sh: cannot read $expected" >&2; exit 2; }
	while read -r s r _; do
		case $s in '' | '#'*) continue ;; esac
		case $r in pass | fail | skip | refused) want[$s]=$r ;;
		*) echo "coreutils.sh: $expected: bad result '$r' for $s" >&2; exit 2 ;;
		esac
	done <"$expected"
fi
regressions=0

run_impl() {
	local name=$1 user=$2 at= w logs=${FK_PEER_LOGS:-$cache/logs}/$1
	[ "$user" = root ] || { at=@$user; logs=$logs$at; }
	w=$(mktemp -d "$cache/run-$1.XXXXXX") || exit 2
	local pass=0 failn=0 skip=0 refused=0 as=()
	[ "$user" = root ] || as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups)
	make_tree "$w" "$name" "$user"
	rm -rf "$logs"
	mkdir -p "$logs"
	chmod 0755 "$cache" "$logs/.."
	for s in "${scripts[@]}"; do
		local f=$src/$suite/$s.sh log=$logs/$s.log
		[ -f "$f" ] || { echo "$name $s: no such script"; failn=$((failn + 1)); continue; }
		# env -C, setsid, setpriv and sh exec in turn: $! is the
		# script's pid, and its process group's.
		env -C "$w" -u CDPATH LC_ALL=C srcdir=. top_srcdir=. \
			abs_top_srcdir="$w" abs_top_builddir="$w" abs_srcdir="$w" \
			built_programs="$built" VERSION=$version PACKAGE_VERSION=$version \
			PERL=perl SHELL=/bin/sh EXEEXT= CC=cc AWK=awk EGREP="grep -E" \
			fail=0 VERBOSE=no CONFIG_HEADER="$w/config.h" \
			CU_TEST_NAME="tests,${suite#tests/}-$s" TMPDIR=/tmp \
			setsid "${as[@]}" /bin/sh "./$suite/$s.sh" 9>&2 </dev/null >"$log" 2>&1 &
		local pid=$! ticks=0 rc what
		# Its own process group: one left blocked on a FIFO (a cp that
		# refused an option, its writer still waiting) is ended with
		# all it started.
		while kill -0 "$pid" 2>/dev/null; do
			if [ $ticks -ge $((per_script_timeout * 5)) ]; then
				kill -TERM -- "-$pid" 2>/dev/null
				sleep 1
				kill -KILL -- "-$pid" 2>/dev/null
				echo "coreutils.sh: timed out after ${per_script_timeout}s" >>"$log"
				break
			fi
			sleep 0.2
			ticks=$((ticks + 1))
		done
		wait "$pid"
		rc=$?
		case $rc in
		0) what=pass ;;
		77) what="skip: $(sed -n 's/^[^:]*: skipped test: //p' "$log" | head -1)" ;;
		*) what=fail ;;
		esac
		if [ "$what" = pass ] && [ "$name" = flushkit ] && [ -n "${by_design[$s]:-}" ]; then
			what="pass (its refused-by-design entry is stale)"
		elif [ "$what" = fail ] && [ "$name" = flushkit ] && [ -n "${by_design[$s]:-}" ]; then
			what="refused-by-design: ${by_design[$s]}"
		elif [ "$what" = fail ]; then
			local first
			first=$(grep -m1 -E "^(flushkit|$tool): " "$log")
			what="fail (exit $rc)${first:+: $first}"
		fi
		case $what in
		pass*) pass=$((pass + 1)) ;;
		skip*) skip=$((skip + 1)) ;;
		refused*) refused=$((refused + 1)) ;;
		*) failn=$((failn + 1)) ;;
		esac
		local note=""
		if [ "$name" = flushkit ] && [ -n "$expected" ]; then
			local got=${what%%[ :(]*} exp=${want[$s$at]:-}
			[ "$got" = refused-by-design ] && got=refused
			if [ -z "$exp" ]; then
				note=" [REGRESSION: no line in $expected]"
				regressions=$((regressions + 1))
			elif [ "$got" != "$exp" ]; then
				case $exp in
				pass | refused)
					note=" [REGRESSION: expected $exp]"
					regressions=$((regressions + 1)) ;;
				*)
					[ "$got" = pass ] && note=" [better than expected ($exp): update $expected]" ;;
				esac
			fi
		fi
		echo "$name $s$at: $what$note"
	done
	rm -rf "$w"
	summary+=("$name$at: $pass pass, $failn fail, $skip skip, $refused refused-by-design (of ${#scripts[@]} scripts; logs in $logs)")
}

summary=()
for u in $users; do
	[ "$impl" = gnu ] || run_impl flushkit "$u"
	[ "$impl" = flushkit ] || run_impl gnu "$u"
done
printf '%s\n' "${summary[@]}"
if [ -n "$expected" ]; then
	echo "against $expected: $regressions regressions"
	[ $regressions -eq 0 ] || exit 1
fi
exit 0
