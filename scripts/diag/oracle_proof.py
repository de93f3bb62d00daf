#!/usr/bin/env python3
"""How long HiGHS needs to *prove* a tier when it is told the optimum -- a diagnostic.

Usage: oracle_proof.py TIER.lp [TIER.lp ...] [--time-limit S] [--seed N]

TIER.lp is what `tessera export-lp INSTANCE [--tier K --fix ...]` writes. For each file:

1. `solve`: HiGHS (one thread, the solver's stopping rule: absolute gap below 1, the
   objective is integer) solves the tier from scratch; its optimum is `opt`.
2. `prove`: HiGHS solves the same tier again with the cutoff set just above the optimum
   (`objective_bound`, so that only solutions of value >= opt + 1 are accepted) and its
   primal heuristics off (`mip_heuristic_effort` 0). There is no such solution, so what
   HiGHS does is the proof alone: root LP, cuts, and the tree it needs to show that
   nothing beats `opt`. This is what the exact solver could do at best, per tier, if an
   oracle handed it the optimum at time zero.

It prints one JSON line per file: the time, status and branch-and-bound nodes of both
runs. `prove` runs only where `solve` proved an optimum within the time limit. A proof
ends as `Infeasible`, or as `Optimal` with a value below the optimum (a solution HiGHS
met before the cutoff pruned everything): both say that nothing beats the optimum; a
`Time limit reached` there is a proof that did not finish.
models/cycle.md section 9 (2026-12-04) has what this found on flat-256.

Needs `pip install highspy`. Not used by Tessera itself.
"""
import argparse
import json
import time

import highspy
import numpy as np


def run(path, time_limit, seed, cutoff=None):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(path)
    lp = h.getLp()
    n = lp.num_col_
    # The export maximizes; HiGHS's cutoff (`objective_bound`) is easiest to read on a
    # minimization, so negate the costs (as the solver's adapter does).
    if lp.sense_ == highspy.ObjSense.kMaximize:
        h.changeObjectiveSense(highspy.ObjSense.kMinimize)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), -np.array(lp.col_cost_))
    for k, v in (("threads", 1), ("random_seed", seed), ("mip_abs_gap", 0.999), ("mip_rel_gap", 0.0), ("time_limit", time_limit)):
        h.setOptionValue(k, v)
    if cutoff is not None:
        # Minimizing -W: accept only -W < -(opt + 0.5), i.e. W >= opt + 1.
        h.setOptionValue("objective_bound", -cutoff)
        h.setOptionValue("mip_heuristic_effort", 0.0)
    t = time.time()
    h.run()
    dt = time.time() - t
    info = h.getInfo()
    return {
        "seconds": round(dt, 2),
        "status": h.modelStatusToString(h.getModelStatus()),
        "value": -info.objective_function_value,
        "nodes": info.mip_node_count,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lp", nargs="+")
    ap.add_argument("--time-limit", type=float, default=40.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for path in args.lp:
        out = {"lp": path, "solve": run(path, args.time_limit, args.seed)}
        if out["solve"]["status"] == "Optimal":
            opt = round(out["solve"]["value"])
            out["optimum"] = opt
            out["prove"] = run(path, args.time_limit, args.seed, cutoff=opt + 0.5)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
