#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-doc-examples.sh - every example command line of README.md and of the
# man pages' sources (docs/*.md: lines "    $ COMMAND" in a code block)
# runs as written on a fresh tree and prints output of the sample's
# shape.  A new user copies these lines first.
#
# Each line runs with bash in a fresh directory holding the inputs the
# samples name (ex, demo, backup.tar, exdb; a TPC-B store for bench
# tpcb), the built flushkit first in PATH.  Changed, and only so: long
# durations and sizes are shortened (-T 20 -> -T 6, dd count=200 -> 20),
# /usr/share is a generated tree, and absolute paths under /var/tmp go
# under the test's directory (whose parents do not exist, as on a fresh
# machine: the README's "-d /var/tmp/readme/fs" failed there once).
#
# Shape: every labelled line of the sample (its first word: "method:",
# "files", "progress:", "FSUse%"; "..." and number-only lines skipped,
# device names skipped) is the first word of an output line, in the same
# order; a JSON sample's keys are all in the output's JSON object.  The
# exit status must be 0.
set -u
: "${FLUSHKIT:?FLUSHKIT must name the built command}"
src=${FK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/var/tmp}/t-doc-examples.XXXXXX")
trap 'rm -rf "$t"' EXIT
export T=$t FK_BIN_DIR
FK_BIN_DIR=$(dirname "$FLUSHKIT")
python3 - "$src" "$t" "$FLUSHKIT" <<'PY'
import json, os, re, shutil, subprocess, sys
src, t, fk = sys.argv[1:4]
docs = [os.path.join(src, "README.md")] + sorted(
    os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs"))
    if f.endswith(".md"))
subst = [
    (r"-T 20\b", "-T 6"),
    (r"count=(?:200|300)\b", "count=20"),
    (r"/usr/share\b", "{D}/share"),
    (r"/var/tmp/", "{D}/vt/"),
]
DEV = re.compile(r"^(vd[a-z]+|sd[a-z]+|nvme\S*|loop\d+|xvd[a-z]+):?$")

def examples(path):
    """(line number, command, sample lines) of each '    $ ' line."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^    \$ (.*)$", lines[i])
        if not m:
            i += 1
            continue
        cmd, n, sample = m.group(1), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].startswith("    $ "):
            if lines[i].startswith("    "):
                sample.append(lines[i][4:])
            elif lines[i].strip() == "" and i + 1 < len(lines) and \
                    lines[i + 1].startswith("    ") and \
                    not lines[i + 1].startswith("    $ "):
                sample.append("")  # a blank line inside the block
            else:
                break
            i += 1
        out.append((n, cmd, sample))
    return out

def fixtures(d):
    os.makedirs(d)
    def w(p, n, c=b"x"):
        p = os.path.join(d, p)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(c * n)
    os.makedirs(os.path.join(d, "vt"))
    for top in ("ex", "demo", "vt/exdb"):
        w(top + "/a", 1000000)
        w(top + "/sub/b", 5000, b"y")
        os.link(os.path.join(d, top, "a"), os.path.join(d, top, "sub/a-link"))
        os.symlink("a", os.path.join(d, top, "sym"))
    for k in range(30):
        w("share/doc/p%02d/README" % k, 100 + k)
    subprocess.run(["tar", "cf", os.path.join(d, "backup.tar"), "-C", d, "ex"],
                   check=True)
    r = subprocess.run([fk, "bench", "tpcb", "-i", "-s", "1", "--no-results"],
                       cwd=d, capture_output=True)
    if r.returncode:
        sys.exit("fixture: bench tpcb -i: " + r.stderr.decode())

def label(line):
    s = line.strip()
    if not s or s == "..." or s.startswith("..."):
        return None
    w = s.split()[0]
    if not re.search(r"[A-Za-z]", w) or DEV.match(w):
        return None
    return w

fail = 0
env = dict(os.environ)
env["PATH"] = os.path.dirname(fk) + ":" + env["PATH"]
ran = 0
for doc in docs:
    for n, cmd, sample in examples(doc):
        where = "%s:%d" % (os.path.relpath(doc, src), n)
        if not cmd.startswith(("flushkit ", "mkdir ")):
            continue
        d = os.path.join(t, "run%03d" % ran)
        # One pass, so a replacement is never replaced again (the run
        # directory may itself be under /var/tmp).
        pat = re.compile("|".join("(%s)" % a for a, _ in subst))
        run = pat.sub(lambda m: subst[m.lastindex - 1][1].replace("{D}", d)
                      if m.lastindex else m.group(0), cmd)
        fixtures(d)
        ran += 1
        # A "mkdir -p X" line prepares the next line: same directory.
        if cmd.startswith("mkdir "):
            prep = run
            continue
        if "prep" in dir() and prep:
            subprocess.run(["bash", "-c", prep], cwd=d, env=env)
            prep = None
        is_json = bool(sample) and sample[0].lstrip().startswith("{")
        # Text: stdout and stderr in one stream, as a terminal shows
        # them (progress lines on stderr between the others); JSON: the
        # object on stdout alone.
        r = subprocess.run(["bash", "-c", run], cwd=d, env=env,
                           stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE if is_json else subprocess.STDOUT,
                           timeout=300)
        out = (r.stdout + (r.stderr or b"")).decode(errors="replace")
        bad = []
        if r.returncode:
            bad.append("exit %d" % r.returncode)
        if is_json:
            try:
                want = json.loads("\n".join(sample)) if sample[0].strip() != "{" or \
                    sample[-1].strip() == "}" else None
            except ValueError:
                want = None
            try:
                got = json.loads(r.stdout.decode())
            except ValueError:
                got = None
            if want is None:
                keys = re.findall(r'^\s*"([a-z_0-9]+)":', "\n".join(sample), re.M)
            else:
                keys = list(want.keys())
            if got is None:
                bad.append("output is not one JSON object")
            else:
                miss = [k for k in keys if k not in got]
                if miss:
                    bad.append("JSON keys missing: " + ", ".join(miss))
        else:
            # cp's durability line is "fsync N files ..." or, when auto
            # swept with syncfs, "syncfs N calls ...": one label.
            same = {"syncfs": "fsync"}
            words = [same.get(w, w) for w in
                     (l.split()[0] for l in out.split("\n") if l.split())]
            j = 0
            for l in sample:
                lab = label(l)
                if lab is None:
                    continue
                lab = same.get(lab, lab)
                while j < len(words) and words[j] != lab:
                    j += 1
                if j == len(words):
                    bad.append("no line '%s' (in the sample's order)" % lab)
                    break
                j += 1
        if bad:
            fail = 1
            print("FAIL: %s: %s: %s" % (where, cmd, "; ".join(bad)))
            print("      ran: " + run)
            for l in out.split("\n")[:25]:
                print("      | " + l)
        else:
            print("ok: %s: %s" % (where, cmd))
        shutil.rmtree(d, ignore_errors=True)
if ran < 8:
    print("FAIL: only %d example lines found" % ran)
    fail = 1
sys.exit(fail)
PY
