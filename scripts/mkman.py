#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkman.py - generate flushkit's man pages from their one source each.

  section 1: flushkit(1) and one page per subcommand, from docs/*.md;
  section 7: flushkit-durability(7), from docs/durability.md;
  section 3: libflushkit(3) from docs/libflushkit.md, with the
             conventions and the error/version section of flushkit.h
             inserted; one page per "SECTION name" of include/flushkit.h
             (its comments and declarations, as the header has them), and
             a ".so" page for every other function of that section.

The markdown goes through pandoc (-t man).  Before that, the document
title line is replaced by the man title block and a NAME section, the
headings move up one level and are upper-cased (## Synopsis -> SYNOPSIS),
links to other docs/*.md become page references (flushkit-sync(1)) and
images are dropped.  Run by the build (CMakeLists.txt, target "man"):

  mkman.py --pandoc PANDOC --version X.Y.Z --src SRCDIR --out OUTDIR

Writes OUTDIR/man1, man3, man7 and OUTDIR/stamp.  Fails (exit 1) when a
page is missing its source or a section-1 source does not start with a
"## Synopsis" section.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys

# (page, section, source under docs/, NAME description)
PAGES = [
    ("flushkit", 1, "flushkit.md",
     "durable sync and copy, and writeback and fsync benchmarks"),
    ("flushkit-sync", 1, "sync.md",
     "make files and directories durable"),
    ("flushkit-cp", 1, "cp.md",
     "copy a tree like cp -a and make the copy durable"),
    ("flushkit-bench", 1, "bench.md",
     "run the writeback and fsync benchmarks"),
    ("flushkit-bench-tpcb", 1, "tpcb.md",
     "pgbench's TPC-B (sort of) on flushkit's page store"),
    ("flushkit-bench-fsmark", 1, "fsmark.md",
     "fs_mark's small-file fsync benchmark, and batched fsync"),
    ("flushkit-bench-sync", 1, "bench-sync.md",
     "time sync(2), syncfs and flushkit sync on loop file systems"),
    ("flushkit-bench-series", 1, "series.md",
     "TPC-B runs over scales and client counts for two configurations"),
    ("flushkit-bench-neighbor", 1, "neighbor.md",
     "a database next to a dd or cp -a neighbour, plain or tamed"),
    ("flushkit-reproduce", 1, "reproduce.md",
     "run the seed experiments on emulated disks, seed figures beside ours"),
    ("flushkit-disk", 1, "disk.md",
     "lab disks: modelled block devices with a write cache a cut can lose"),
    ("flushkit-exec", 1, "exec.md",
     "run a program with early writeback of the files it writes"),
    ("flushkit-monitor", 1, "monitor.md",
     "watch Dirty, Writeback and disk writes"),
    ("flushkit-report", 1, "report.md",
     "result files, and an HTML page of plots drawn from them"),
    ("flushkit-compare", 1, "compare.md",
     "compare two sets of runs against their noise"),
    ("flushkit-durability", 7, "durability.md",
     "what flushkit guarantees after a crash, and the tests that prove it"),
    ("libflushkit", 3, "libflushkit.md",
     "writeback hints, fsync queues, batched fsync, durable tree sync and "
     "copy, and a crash-safe page store"),
]

# "SECTION name" of flushkit.h -> (page, NAME description).  A SECTION
# not listed here fails the build, so a new one gets a page.
HEADER_PAGES = {
    "errors": None,  # in libflushkit(3)
    "probe": ("fk_probe_sync_file_range",
              "does sync_file_range(2) work on this file system"),
    "writeback": ("fk_writeback", "early writeback hints for written ranges"),
    "fsyncq": ("fk_fsyncq", "the fsync request queue, with compaction"),
    "pacer": ("fk_pacer", "is a job with a deadline ahead of schedule"),
    "stats": ("fk_hist", "latency histograms with bounded relative error"),
    "stats2": ("fk_stats",
               "mean, standard deviation and the two-standard-error "
               "comparison of repeated runs"),
    "monitor": ("fk_monitor",
                "Dirty, Writeback and block-device counters from /proc "
                "and /sys"),
    "fsync_batch": ("fk_fsync_batch",
                    "many fsyncs in flight at once: io_uring, threads, "
                    "sequential"),
    "tree": ("fk_tree_sync", "make trees durable, and copy them durably"),
    "store": ("fk_store",
              "the embeddable crash-safe page store: WAL, group commit, "
              "checkpoints, recovery"),
    "clock": ("fk_now_ns", "the library's monotonic clock"),
}

DOC_PAGE = {src: (name, sec) for name, sec, src, _ in PAGES}


def die(msg):
    sys.stderr.write("mkman: %s\n" % msg)
    sys.exit(1)


def link_sub(m):
    text, target = m.group(1), m.group(2)
    base = os.path.basename(target.split("#")[0])
    if base in DOC_PAGE:
        ref = "%s(%d)" % DOC_PAGE[base]
        return ref if text in (target, base, target.split("#")[0]) \
            else "%s (%s)" % (text, ref)
    if target.startswith(("http://", "https://")):
        return m.group(0)
    return text


def cells(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)]


def untable(lines):
    """Pipe tables as definition lists: a terminal page has no room for
    a wide table (tbl then warns and truncates).  The first column is
    the term; the other columns follow as "header: value" lines."""
    out = []
    i = 0
    fence = False
    while i < len(lines):
        l = lines[i]
        if l.startswith("```"):
            fence = not fence
        if (not fence and l.lstrip().startswith("|") and i + 1 < len(lines)
                and re.match(r"^\s*\|?\s*:?-+", lines[i + 1])
                and set(lines[i + 1].strip()) <= set("|-: ")):
            head = cells(l)
            i += 2
            out.append("")
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                row = cells(lines[i])
                row += [""] * (len(head) - len(row))
                out.append(row[0] or "-")
                rest = [(h, v) for h, v in zip(head[1:], row[1:]) if v]
                if len(head) == 2:
                    out.append(":   " + (row[1] or "-"))
                else:
                    body = ["%s: %s" % (h, v) if h else v for h, v in rest]
                    out.append(":   " + ("\\\n    ".join(body) or "-"))
                out.append("")
                i += 1
            continue
        out.append(l)
        i += 1
    return out


def prepare(md, page, sec, desc, version, src, names=None):
    """The markdown of one page, ready for pandoc."""
    lines = untable(md.splitlines())
    if not lines or not lines[0].startswith("# "):
        die("%s: does not start with a '# title' line" % src)
    body = []
    fence = False
    first_heading = None
    for line in lines[1:]:
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            m = re.match(r"^(#{2,6}) (.*)$", line)
            if m:
                title = m.group(2)
                if first_heading is None:
                    first_heading = title
                level = len(m.group(1)) - 1
                if level == 1:
                    title = title.upper()
                line = "#" * level + " " + title
            else:
                # Images have no place in a man page; links to other
                # pages become references.
                line = re.sub(r"!\[([^\]]*)\]\([^)]*\)", "", line)
                line = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link_sub, line)
        body.append(line)
    if sec == 1 and (first_heading or "").lower() != "synopsis":
        die("%s: the first section must be '## Synopsis'" % src)
    date = ""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        date = datetime.datetime.utcfromtimestamp(
            int(os.environ["SOURCE_DATE_EPOCH"])).strftime("%Y-%m-%d")
    head = [
        "---",
        "title: %s" % page.upper(),
        "section: %d" % sec,
        "header: %s" % ("libflushkit manual" if sec == 3
                        else "flushkit manual"),
        "footer: flushkit %s" % version,
        "date: '%s'" % date,
        "---",
        "",
        "# NAME",
        "",
        "%s - %s" % (", ".join(names or [page]).replace("-", "\\-"), desc),
        "",
    ]
    return "\n".join(head + body) + "\n"


def pandoc(exe, md, out):
    r = subprocess.run([exe, "-s", "-f", "markdown-smart", "-t", "man",
                        "-o", out], input=md.encode(), capture_output=True)
    if r.returncode or r.stderr.strip():
        die("pandoc %s: %s" % (out, r.stderr.decode()))
    # No hyphenation: names such as fk_writeback_issue must stay whole.
    roff = open(out).read()
    # (pandoc's template follows .TH with ".hy"; that line becomes .nh.)
    roff = re.sub(r"^(\.TH .*)\n\.hy$", r"\1\n.nh\n.ad l", roff, count=1,
                  flags=re.M)
    if "\n.nh\n" not in roff:
        die("pandoc %s: no '.TH' line followed by '.hy'" % out)
    # Without hyphenation a long code word (a CSV header) cannot break:
    # let it break after its commas, bars and slashes.
    roff = re.sub(r"\\f\[V\](.*?)\\f\[R\]",
                  lambda m: "\\f[V]" + re.sub(r"([,|/])(?=.)", r"\1\\:",
                                              m.group(1)) + "\\f[R]",
                  roff)
    open(out, "w").write(roff)


# --- flushkit.h ----------------------------------------------------------

def uncomment(block):
    """The text of a /* ... */ comment, without its stars."""
    lines = block.strip().splitlines()
    out = []
    for i, l in enumerate(lines):
        l = l.rstrip()
        if i == 0:
            l = re.sub(r"^\s*/\*+\s?", "", l)
        if l.endswith("*/"):
            l = l[:-2].rstrip()
        l = re.sub(r"^\s*\* ?", "", l) if i else l
        out.append(l)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def public_header(src):
    """include/flushkit.h with each "#include <flushkit/NAME.h>" replaced
    by that section header's body (from its banner to its closing
    #endif), so the sections read as one text in layer order."""
    inc = os.path.join(src, "include")
    text = open(os.path.join(inc, "flushkit.h")).read()

    def body(m):
        path = os.path.join(inc, "flushkit", m.group(1) + ".h")
        if not os.path.exists(path):
            die("flushkit.h includes %s, which does not exist" % path)
        sub = open(path).read()
        start = re.search(r"^/\* =+\n", sub, re.M)
        end = sub.rfind("\n#endif")
        if not start or end < start.start():
            die("%s: no section banner or no closing #endif" % path)
        return sub[start.start():end + 1]

    return re.sub(r"^#include <flushkit/(\w+)\.h>\n", body, text, flags=re.M)


def header_sections(text):
    """{name: source text} for each "/* SECTION name */" of the header,
    up to the next section banner or marker."""
    parts = {}
    marks = list(re.finditer(r"^/\* SECTION (\w+) \*/\n", text, re.M))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        chunk = text[m.end():end]
        cut = re.search(r"^/\* =+\n", chunk, re.M)
        if cut:
            chunk = chunk[:cut.start()]
        cut = chunk.find("#ifdef __cplusplus")
        if cut >= 0:
            chunk = chunk[:cut]
        parts[m.group(1)] = chunk
    return parts


def functions(chunk):
    return sorted(set(re.findall(r"FK_API\b[^;{]*?\b(fk_\w+)\s*\(", chunk)))


def blocks(chunk):
    """The chunk as a list of ("comment", lines) and ("code", lines)."""
    out = []
    pos = 0
    for m in re.finditer(r"/\*.*?\*/", chunk, re.S):
        # Only a comment that starts a line documents what follows; a
        # field's note, indented or after code, stays with the code.
        line_start = chunk.rfind("\n", 0, m.start()) + 1
        if line_start != m.start():
            continue
        line_end = chunk.find("\n", m.end())
        line_end = len(chunk) if line_end < 0 else line_end
        if chunk[m.end():line_end].strip():
            continue
        code = chunk[pos:line_start]
        if code.strip():
            out.append(("code", code.strip("\n").splitlines()))
        out.append(("comment", uncomment(m.group(0))))
        pos = line_end + 1
    code = chunk[pos:]
    if code.strip():
        out.append(("code", code.strip("\n").splitlines()))
    return out


def code_block(lines):
    lines = [l.replace("FK_API ", "").expandtabs(8) for l in lines]
    return "```c\n" + "\n".join(lines) + "\n```\n"


def text_block(lines):
    return "```\n" + "\n".join(l.expandtabs(8) for l in lines) + "\n```\n"


def prototypes(chunk):
    protos = []
    for m in re.finditer(r"FK_API\s+([^;{]*?\bfk_\w+\s*\([^;]*\));", chunk,
                         re.S):
        p = re.sub(r"\s+", " ", m.group(1))
        protos.append(p + ";")
    return protos


def header_page(name, desc, chunk, fns):
    md = ["## Synopsis", "", "```c", "#include <flushkit.h>", ""]
    md += prototypes(chunk)
    md += ["```", "",
           "Link with `-lflushkit` (`pkg-config --cflags --libs flushkit`).",
           "", "## Description", "",
           "The declarations and their documentation, as "
           "`flushkit.h` has them.", ""]
    for kind, lines in blocks(chunk):
        md.append(code_block(lines) if kind == "code" else text_block(lines))
    md += ["## See also", "", "libflushkit(3)", ""]
    return "# %s\n\n" % name + "\n".join(md)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pandoc", default="pandoc")
    ap.add_argument("--version", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    hdr = public_header(a.src)
    secs = header_sections(hdr)
    for s in secs:
        if s not in HEADER_PAGES:
            die("flushkit.h: SECTION %s has no page in scripts/mkman.py" % s)
    for n in (1, 3, 7):
        os.makedirs(os.path.join(a.out, "man%d" % n), exist_ok=True)
    for n in (1, 3, 7):
        d = os.path.join(a.out, "man%d" % n)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))

    conventions = re.search(r"\* Conventions[^\n]*\n(.*?)\n \*\n \* Sections",
                            hdr, re.S)
    if not conventions:
        die("flushkit.h: no 'Conventions' paragraph in the opening comment")
    conv = text_block(uncomment("/*\n" + conventions.group(1) + "\n*/"))
    errors = "".join(code_block(l) if k == "code" else text_block(l)
                     for k, l in blocks(secs.get("errors", "")))

    for page, sec, srcname, desc in PAGES:
        path = os.path.join(a.src, "docs", srcname)
        if not os.path.exists(path):
            die("%s: no source %s" % (page, path))
        md = open(path).read()
        if page == "libflushkit":
            md = md.replace("<!-- flushkit.h: conventions -->", conv)
            md = md.replace("<!-- flushkit.h: SECTION errors -->", errors)
        out = os.path.join(a.out, "man%d" % sec, "%s.%d" % (page, sec))
        pandoc(a.pandoc, prepare(md, page, sec, desc, a.version, srcname),
               out)

    for s, chunk in secs.items():
        if HEADER_PAGES[s] is None:
            for f in functions(chunk):
                with open(os.path.join(a.out, "man3", "%s.3" % f), "w") as fp:
                    fp.write(".so man3/libflushkit.3\n")
            continue
        page, desc = HEADER_PAGES[s]
        fns = functions(chunk)
        md = header_page(page, desc, chunk, fns)
        names = [page] + [f for f in fns if f != page]
        out = os.path.join(a.out, "man3", "%s.3" % page)
        pandoc(a.pandoc, prepare(md, page, 3, desc, a.version,
                                 "flushkit.h SECTION " + s, names), out)
        for f in names[1:]:
            with open(os.path.join(a.out, "man3", "%s.3" % f), "w") as fp:
                fp.write(".so man3/%s.3\n" % page)
    open(os.path.join(a.out, "stamp"), "w").close()


if __name__ == "__main__":
    main()
