#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The page store's modules call downwards only: src/store/store-int.h
# lists them from the bottom up, and each module's object file may use
# only the functions of modules listed before it (nm of the built
# objects: a module's undefined fk_* symbols that another store module
# defines).  So the modules form no circle (a lower module never calls
# up for logging, the sticky stop or segment descriptors), and the list
# in store-int.h stays true.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
src=${FK_SRC:?}
build=$(dirname "${FLUSHKIT:?}")
objdir=$build/CMakeFiles/fk_objs.dir/src/store
command -v nm >/dev/null || skip "no nm"
[ -d "$objdir" ] || skip "no object files in $objdir"

# The layering, bottom up, as store-int.h draws it.
mapfile -t order < <(sed -n '/The store is split into/,/Lock order/p' \
	"$src/src/store/store-int.h" |
	sed -n 's/^ \*   \([a-z0-9_]*\)\.c .*/\1/p')
[ ${#order[@]} -ge 6 ] || fail "store-int.h lists only ${#order[@]} modules"
declare -A rank def
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done

# Every module is in the list, and the list names no missing file.
for f in "$src"/src/store/*.c; do
	b=$(basename "$f" .c)
	[ -n "${rank[$b]+x}" ] || fail "src/store/$b.c is not in store-int.h's list of modules"
done
for b in "${order[@]}"; do
	[ -f "$src/src/store/$b.c" ] || fail "store-int.h lists $b.c, which does not exist"
	[ -f "$objdir/$b.c.o" ] || skip "no $objdir/$b.c.o (build first)"
done

for b in "${order[@]}"; do
	for s in $(nm --defined-only "$objdir/$b.c.o" | awk '$2 == "T" {print $3}'); do
		def[$s]=$b
	done
done
bad=0 calls=0
for b in "${order[@]}"; do
	for s in $(nm -u "$objdir/$b.c.o" | awk '$2 ~ /^fk_/ {print $2}'); do
		d=${def[$s]:-}
		[ -n "$d" ] && [ "$d" != "$b" ] || continue
		calls=$((calls + 1))
		if [ "${rank[$d]}" -gt "${rank[$b]}" ]; then
			echo "$b.c calls up: $s (defined in $d.c)"
			bad=1
		fi
	done
done
[ $calls -ge 20 ] || fail "only $calls calls between store modules found: nm output not understood"
[ $bad -eq 0 ] || fail "a store module calls a module above it (store-int.h's order)"
echo "ok: ${#order[@]} store modules, $calls cross-module calls, all downwards"
