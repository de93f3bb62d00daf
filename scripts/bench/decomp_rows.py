#!/usr/bin/env python3
"""One markdown row per decision: engine, status, groups placed per level, evictions per
victim priority, extra pods, the reported row bounds, gap, wall time and peak memory
(from /usr/bin/time -v), and the validator's verdict.

Usage: decomp_rows.py LABEL DECISION.json TIME_V.txt CHECK_EXIT
"""
import json
import re
import sys

label, dec_path, time_path, check_rc = sys.argv[1:5]
d = json.load(open(dec_path))
o = d.get("objective", {})
st = d.get("stats", {})
placed = "/".join(str(r["placed"]) for r in o.get("placedByPriority", []))
pend = "/".join(str(r["pending"]) for r in o.get("placedByPriority", []))
tot = sum(r["placed"] for r in o.get("placedByPriority", []))
totp = sum(r["pending"] for r in o.get("placedByPriority", []))
ev = " ".join(f"{r['pods']}@{r['priority']}" for r in o.get("evictedByPriority", [])) or "0"
tv = open(time_path).read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", tv).group(1))
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", tv).group(1)
parts = [float(x) for x in wall.split(":")]
secs = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
b = d.get("bounds")
bs = []
if b:
    for r in b.get("placedByPriority", []) or []:
        bs.append(f"P{r.get('priority')}<={r.get('atMost')}")
    for r in b.get("evictedByPriority", []) or []:
        bs.append(f"E{r.get('priority')}>={r.get('atLeast')}")
    for r in b.get("extraByPriority", []) or []:
        bs.append(f"X{r.get('priority')}<={r.get('atMost')}")
print(
    f"| {label} | {st.get('engine', 'compact')} | {d.get('status')} | {tot}/{totp} ({placed} of {pend}) | {ev} | "
    f"{o.get('extraPods')} | {' '.join(bs) or '-'} | {d.get('gap')} | {secs:.1f} | {rss / 1024:.0f} | "
    f"{'ok' if check_rc == '0' else 'FAIL'} | {st.get('engineFallback', '')} |"
)
