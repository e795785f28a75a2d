#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One JSON style for every --json output and every result file: each
# object on one line, no escaped slashes, floats at a sensible precision
# (no 1.5000000000000002); and every result file starts with the
# "flushkit" line (the version, the command line, argv) and has the
# host facts (env: kernel, hostname, cpus, memory).
set -u
# Its JSON checks run python3: without it they would fail as "bad JSON".
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the JSON checks need it)"; exit 77; }
fail=0
err() { echo "FAIL: $*"; fail=1; }
t=$(mktemp -d /var/tmp/fk-t-json-style.XXXXXX)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
d=$t/data/tpcb
small=(--shared-buffers 4M --log-checkpoints=off --data-dir "$d")
mkdir -p "$t/data" "$t/res"
version=$("$FLUSHKIT" --version | sed 's/^flushkit //')

# style FILE WHAT: every line one JSON object, no "\/", no float with
# more than 9 decimals.
style() {
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
path, what = sys.argv[1:]
lines = [l for l in open(path) if l.strip()]
assert lines, what + ": no output"
for l in lines:
    o = json.loads(l)          # one object per line
    assert isinstance(o, dict), (what, l[:80])
    assert "\\/" not in l, (what, "escaped slash", l[:120])
    for m in re.finditer(r'(?<![\w."])-?\d+\.(\d+)(?:[eE][-+]?\d+)?', l):
        assert len(m.group(1)) <= 9, (what, "float", m.group(0))
EOF
}

# origin FILE COMMAND-START: the "flushkit" line first, the env line.
origin() {
	python3 - "$1" "$version" "$2" <<'EOF' || err "origin of $1"
import json, sys
path, version, start = sys.argv[1:]
lines = [json.loads(l) for l in open(path)]
first = lines[0]
assert first["type"] == "flushkit", first
assert first["version"] == version, (first, version)
assert first["command"].startswith(start), (first["command"], start)
assert first["argv"][1:3] == start.split()[1:3], first["argv"]
env = [l for l in lines if l["type"] == "env"]
assert len(env) == 1, [l["type"] for l in lines]
for k in ("kernel", "hostname", "cpus", "mem_total_kb", "sysctl"):
    assert k in env[0], (k, env[0])
EOF
}

"$FLUSHKIT" bench tpcb -i -s 1 "${small[@]}" >/dev/null 2>&1 ||
	err "tpcb -i failed"
"$FLUSHKIT" bench tpcb -c 2 -T 1 --results "$t/res/a" "${small[@]}" \
	>/dev/null 2>tpcb.err || err "tpcb run: $(cat tpcb.err)"
f=$(ls "$t"/res/a/tpcb-*.jsonl)
style "$f" "tpcb result file" || err "tpcb result file style"
origin "$f" "flushkit bench tpcb -c 2 -T 1 --results $t/res/a"
"$FLUSHKIT" bench tpcb -c 2 -T 1 --json --check --no-results "${small[@]}" \
	>tpcb.json 2>/dev/null || err "tpcb --json"
style tpcb.json "tpcb --json" || err "tpcb --json style"
[ "$(wc -l <tpcb.json)" = 1 ] || err "tpcb --json is not one line"

mkdir -p "$t/fs"
"$FLUSHKIT" bench fsmark -d "$t/fs/x" -n 20 -s 4096 --results "$t/res/b" \
	>/dev/null 2>fs.err || err "fsmark run: $(cat fs.err)"
f=$(ls "$t"/res/b/fsmark-*.jsonl)
style "$f" "fsmark result file" || err "fsmark result file style"
origin "$f" "flushkit bench fsmark -d $t/fs/x -n 20"
"$FLUSHKIT" bench fsmark -d "$t/fs/y" -n 20 -s 4096 -L 2 --json \
	--no-results >fs.json 2>/dev/null || err "fsmark --json"
style fs.json "fsmark --json" || err "fsmark --json style"

"$FLUSHKIT" compare --json "$t/res/a" "$t/res/a" >cmp.json 2>/dev/null ||
	err "compare --json"
style cmp.json "compare --json" || err "compare --json style"
"$FLUSHKIT" sync --json "$t/fs" >sync.json 2>/dev/null || err "sync --json"
style sync.json "sync --json" || err "sync --json style"
mkdir -p "$t/cpsrc/d" && echo x >"$t/cpsrc/d/f"
"$FLUSHKIT" cp --json "$t/cpsrc" "$t/cpdst" >cp.json 2>/dev/null || err "cp --json"
style cp.json "cp --json" || err "cp --json style"
"$FLUSHKIT" monitor --json --interval 100 --path "$t/fs" -- sleep 0.3 \
	>mon.json 2>/dev/null || err "monitor --json"
style mon.json "monitor --json" || err "monitor --json style"

[ $fail -eq 0 ] && echo ok
exit $fail
