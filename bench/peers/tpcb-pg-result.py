#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# bench/peers/tpcb-pg-result.py - the result file (docs/report.md) of one
# pgbench run against PostgreSQL, for bench/peers/tpcb.sh: so that
# "flushkit compare" and "flushkit report" read the peer's runs as they
# read bench tpcb's.
#
# From: pgbench's summary (stdout) and -P lines (stderr); its
# per-transaction logs (-l, one per thread, on a tmpfs: "client_id
# transaction_no time script_no time_epoch time_us", time the latency in
# microseconds, time_epoch.time_us the completion); PostgreSQL's
# log_checkpoints lines of the run (log_line_prefix '%m [%p] ', UTC);
# pg_stat_bgwriter and pg_stat_wal before and after, as JSON objects.
#
# Lines written: flushkit (who wrote it and the pgbench command),
# settings, clock (epoch of t_s = 0: just before pgbench started),
# progress (one per -P line, with lat_max_ms from the logs, and
# "checkpoint": whether a checkpoint ran during the line's interval, from
# the log's "checkpoint starting" and "checkpoint complete" lines; one
# started and not complete ran until the end), checkpoint
# (one per checkpoint completed in the run), summary (tps, transactions,
# duration_s, lat_avg_ms, lat_stddev_ms, lat_p50/p90/p99/p999/max_ms
# from the logs, checkpoints, backend_fsyncs =
# buffers_backend_fsync, buffers_backend, buffers_checkpoint, wal_fpi,
# wal_bytes, wal_sync over the run, status).  No stall ratio: the
# summary leaves it out, and flushkit's one reader of result files
# (result_run_load in bench/lib/reader.c) computes it from the progress
# lines and their checkpoint marks as bench tpcb does (warm-up, during
# and outside checkpoints), for report, compare and bench/peers/tpcb.sh.
import argparse
import datetime
import glob
import json
import math
import os
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--pgbench-out", required=True)
ap.add_argument("--pgbench-err", required=True)
ap.add_argument("--logs", required=True)
ap.add_argument("--server-log", required=True)
ap.add_argument("--stats-before", required=True)
ap.add_argument("--stats-after", required=True)
ap.add_argument("--t0", type=float, required=True)
ap.add_argument("--t1", type=float, required=True)
ap.add_argument("--version", default="")
ap.add_argument("--command", default="pgbench")
ap.add_argument("--setting", action="append", default=[])
a = ap.parse_args()

text = open(a.pgbench_out).read()
err = open(a.pgbench_err).read()


def val(pat, src=text):
    m = re.search(pat, src, re.M)
    return float(m.group(1)) if m else None


tps = val(r"^tps = ([0-9.]+)")
nxact = val(r"^number of transactions actually processed: ([0-9]+)")
nfail = val(r"^number of failed transactions: ([0-9]+)")
lat_avg = val(r"^latency average = ([0-9.]+) ms")
lat_sd = val(r"^latency stddev = ([0-9.]+) ms")
duration = val(r"^duration: ([0-9.]+) s")

# Per-transaction latencies (ms) and completion times (epoch s).
lat = []
done = []
for f in glob.glob(os.path.join(a.logs, "pgbench_log.*")):
    for line in open(f):
        p = line.split()
        if len(p) < 6 or p[2] == "skipped":
            continue
        lat.append(int(p[2]) / 1000.0)
        done.append(int(p[4]) + int(p[5]) / 1e6)
lat_sorted = sorted(lat)


def pct(q):
    if not lat_sorted:
        return None
    i = max(0, min(len(lat_sorted) - 1, math.ceil(q * len(lat_sorted)) - 1))
    return lat_sorted[i]


# -P lines: "progress: 1.0 s, 2841.9 tps, lat 2.810 ms stddev 1.449, 0 failed"
prog = []
for m in re.finditer(r"^progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms"
                     r" stddev ([0-9.]+|NaN)", err, re.M):
    prog.append([float(m.group(1)), float(m.group(2)), float(m.group(3)),
                 float(m.group(4)) if m.group(4) != "NaN" else None])
# pgbench's -P clock starts at its own start (after connecting): place
# its intervals on t_s by the first transaction's completion.
pstart = a.t0
if prog and done:
    # the first interval ends prog[0][0] s after pgbench's start
    pstart = max(a.t0, min(d - l / 1000.0 for d, l in zip(done, lat)))
maxes = {}
for d, l in zip(done, lat):
    k = int(math.floor((d - pstart) / (prog[0][0] if prog else 1.0)))
    if l > maxes.get(k, 0):
        maxes[k] = l

# Checkpoints of the run from the server log.
ts_re = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] LOG:  "


def epoch(s):
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


cks = []
start = None
reason = None
for line in open(a.server_log):
    m = re.match(ts_re + r"checkpoint starting: (.*)$", line)
    if m:
        start, reason = epoch(m.group(1)), m.group(2).strip()
        continue
    m = re.match(ts_re + r"checkpoint complete: wrote (\d+) buffers .*"
                 r"write=([0-9.]+) s, sync=([0-9.]+) s, total=([0-9.]+) s; "
                 r"sync files=(\d+), longest=([0-9.]+) s, average=([0-9.]+) s",
                 line)
    if m:
        end = epoch(m.group(1))
        tot = float(m.group(5))
        st = start if start is not None else end - tot
        cks.append({"type": "checkpoint", "reason": reason or "",
                    "start_s": round(st - a.t0, 6),
                    "end_s": round(end - a.t0, 6),
                    "buffers": int(m.group(2)),
                    "write_s": float(m.group(3)), "sync_s": float(m.group(4)),
                    "total_s": tot, "files": int(m.group(6)),
                    "longest_s": float(m.group(7)),
                    "average_s": float(m.group(8)), "error": 0})
        start = reason = None
# One started and not complete by the end ran until the end.
running = [(start - a.t0, a.t1 - a.t0)] if start is not None else []
spans = [(c["start_s"], c["end_s"]) for c in cks] + running

b = json.loads(a.stats_before)
e = json.loads(a.stats_after)


def delta(k):
    try:
        return int(float(e[k]) - float(b[k]))
    except (KeyError, TypeError, ValueError):
        return None


settings = {"type": "settings", "bench": "tpcb", "system": "postgresql",
            "flush": "postgresql"}
for kv in a.setting:
    k, _, v = kv.partition("=")
    try:
        settings[k] = int(v)
    except ValueError:
        try:
            settings[k] = float(v)
        except ValueError:
            settings[k] = v

failed = tps is None or nxact is None or (nfail or 0) > 0 or \
    "Run was aborted" in err
summary = {"type": "summary", "tps": round(tps, 3) if tps else tps,
           "transactions": int(nxact) if nxact is not None else None,
           "duration_s": duration if duration is not None
           else round(a.t1 - a.t0, 3),
           "lat_avg_ms": lat_avg, "lat_stddev_ms": lat_sd,
           "lat_p50_ms": pct(0.50), "lat_p90_ms": pct(0.90),
           "lat_p99_ms": pct(0.99), "lat_p999_ms": pct(0.999),
           "lat_max_ms": lat_sorted[-1] if lat_sorted else None,
           "checkpoints": delta("checkpoints"),
           "backend_fsyncs": delta("buffers_backend_fsync"),
           "buffers_backend": delta("buffers_backend"),
           "buffers_checkpoint": delta("buffers_checkpoint"),
           "wal_fpi": delta("wal_fpi"), "wal_bytes": delta("wal_bytes"),
           "wal_sync": delta("wal_sync"),
           "logged_transactions": len(lat),
           "status": "failed" if failed else "ok"}
if failed:
    summary["error"] = "pgbench: " + (err.strip().splitlines() or ["no summary"])[-1]

fd = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
with os.fdopen(fd, "w") as o:
    def w(obj):
        o.write(json.dumps(obj, separators=(",", ":")) + "\n")
    w({"type": "flushkit", "version": "bench/peers/tpcb.sh",
       "peer": a.version, "command": a.command})
    w(settings)
    w({"type": "clock", "epoch_s": round(a.t0, 6)})
    off = pstart - a.t0
    prev = off
    for i, p in enumerate(prog):
        t = p[0] + off
        line = {"type": "progress", "t_s": round(t, 6),
                "tps": p[1], "lat_avg_ms": p[2],
                "checkpoint": any(s0 < t and s1 > prev for s0, s1 in spans)}
        prev = t
        if p[3] is not None:
            line["lat_stddev_ms"] = p[3]
        if i in maxes:
            line["lat_max_ms"] = round(maxes[i], 3)
        w(line)
    for c in cks:
        w(c)
    w(summary)
    o.flush()
    os.fsync(o.fileno())
sys.exit(1 if failed else 0)
