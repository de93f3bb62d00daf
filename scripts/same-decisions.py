#!/usr/bin/env python3
"""Do two builds of tessera decide the same? For refactorings that must not change behaviour.

    scripts/same-decisions.py OLD_BINARY NEW_BINARY [--work-limit N] [--time-limit 20s] [--save DIR]

Solves every bundled instance and generated seeds of each class (the list below) with both
binaries and compares the decisions as JSON with run-to-run diagnostics removed (keys of
`stats` ending in `Millis`, and `stats.deadline`). A pair counts only when it is
reproducible: both runs end `Optimal`, or a `--work-limit` is given (then the wall clock
should never bind; a run that reports `stats.deadline` is listed as cut, not compared).
Exits 1 if any compared pair differs, printing the first differing keys.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (class, seeds): small enough to end Optimal within the time limit on most seeds.
CLASSES = [("tiny", range(1, 41)), ("tiny-queues", range(1, 41)), ("hetero-trap", range(1, 11)),
           ("flat-64", range(1, 6)), ("rack-256", range(1, 3)), ("preempt-256", range(1, 3)), ("openb-64", range(1, 4))]


def instances(tmp, binary):
    for d in ("instances", "models"):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".yaml"):
                yield f"{d}/{f}", os.path.join(ROOT, d, f)
    for cls, seeds in CLASSES:
        for s in seeds:
            path = os.path.join(tmp, f"{cls}-{s}.yaml")
            r = subprocess.run([binary, "generate", "--class", cls, "--seed", str(s), "--out", path], capture_output=True, text=True)
            if r.returncode == 0:
                yield f"{cls}/{s}", path


def solve(binary, path, args):
    r = subprocess.run([binary, "solve", path, "--output", "json", *args], capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    d = json.loads(r.stdout)
    stats = d.get("stats", {})
    for k in list(stats):
        if k.endswith("Millis") or k == "deadline":
            del stats[k]
    return d, "deadline" in json.loads(r.stdout).get("stats", {})


def diff(a, b, path=""):
    if type(a) is not type(b):
        return [path or "."]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}")
            else:
                out += diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}[len {len(a)} vs {len(b)}]"]
        return [x for i, (p, q) in enumerate(zip(a, b)) for x in diff(p, q, f"{path}[{i}]")]
    return [] if a == b else [path]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--work-limit", type=int)
    ap.add_argument("--time-limit", default="20s")
    ap.add_argument("--save")
    a = ap.parse_args()
    args = ["--time-limit", a.time_limit]
    if a.work_limit:
        args += ["--work-limit", str(a.work_limit)]
    same = differ = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in instances(tmp, a.old):
            old, new = solve(a.old, path, args), solve(a.new, path, args)
            if isinstance(old, dict) or isinstance(new, dict):
                if old == new:  # not an instance (e.g. a queues.yaml): both refuse it alike
                    skipped += 1
                    print(f"{name}: not compared (both refuse it)")
                else:
                    print(f"{name}: error {old if isinstance(old, dict) else new}")
                    differ += 1
                continue
            (od, ocut), (nd, ncut) = old, new
            reproducible = (od["status"] == "Optimal" and nd["status"] == "Optimal") or (a.work_limit and not ocut and not ncut)
            if not reproducible:
                skipped += 1
                print(f"{name}: not compared ({od['status']}{' cut' if ocut else ''} / {nd['status']}{' cut' if ncut else ''})")
                continue
            d = diff(od, nd)
            if d:
                differ += 1
                print(f"{name}: DIFFERENT at {', '.join(d[:5])}")
            else:
                same += 1
            if a.save:
                os.makedirs(a.save, exist_ok=True)
                with open(os.path.join(a.save, name.replace("/", "_") + ".json"), "w") as f:
                    json.dump({"old": od, "new": nd}, f, indent=1)
    print(f"{same} identical, {differ} different, {skipped} not compared")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
