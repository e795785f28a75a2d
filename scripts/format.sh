#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The repository's C sources in the shape of .clang-format (kernel-like:
# tabs, 80 columns, Linux braces).
#   scripts/format.sh          reformat src/ disk/ cli/ tools/ bench/ include/ tests/ in place
#   scripts/format.sh --check  change nothing; list each file that differs
#                              and exit 1 if any does (.ci/run calls this)
set -eu
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null ||
	{ echo "scripts/format.sh: clang-format not found (apt-get install clang-format)" >&2; exit 1; }
mapfile -t files < <(git ls-files -- 'src/*.[ch]' 'disk/*.[ch]' 'cli/*.[ch]' 'tools/*.[ch]' 'bench/*.[ch]' 'tests/*.[ch]' \
	'include/*.h')
[ ${#files[@]} -gt 0 ] || { echo "scripts/format.sh: no sources found" >&2; exit 1; }
if [ $check -eq 0 ]; then
	clang-format -i -- "${files[@]}"
	exit 0
fi
bad=0
for f in "${files[@]}"; do
	if ! clang-format -- "$f" | cmp -s - "$f"; then
		n=$(clang-format -- "$f" | diff -- "$f" - | grep -c '^[<>]' || true)
		echo "not formatted: $f ($n lines differ; run scripts/format.sh)"
		bad=1
	fi
done
[ $bad -eq 0 ] && echo "ok: ${#files[@]} files match .clang-format ($(clang-format --version))"
exit $bad
