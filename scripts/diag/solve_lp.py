#!/usr/bin/env python3
"""Solve one exported tier to proven optimality, outside Tessera -- a diagnostic.

Usage: solve_lp.py TIER.lp [--time-limit S] [--seed N] [--columns y_] [COL=VALUE ...]

TIER.lp is what `tessera export-lp INSTANCE [--tier K --fix ...]` writes. HiGHS runs on
one thread, with no time pressure but `--time-limit` (default 1200 s) and the same
integer stopping rule as the solver (absolute gap below 1: the objective is integer).
It prints the status, the value, the bound, the branch-and-bound nodes and the time;
then every column whose name starts with `--columns` (default `y_`, the group columns)
and its value, so the group choice of the optimum can be compared with a decision.
COL=VALUE fixes a column first (e.g. all `y_` columns at a decision's choice, to time
the fixed-groups sub-model). models/cycle.md 9 (2026-12-03, commit 618bd44) lists what this found.

Needs `pip install highspy`. Not used by Tessera itself.
"""
import argparse
import time

import highspy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lp")
    ap.add_argument("--time-limit", type=float, default=1200.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--columns", default="y_")
    ap.add_argument("fix", nargs="*", help="COL=VALUE")
    args = ap.parse_args()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(args.lp)
    nc = h.getLp().num_col_
    names = [h.getColName(j)[1] for j in range(nc)]
    index = {n: j for j, n in enumerate(names)}
    for kv in args.fix:
        name, _, value = kv.partition("=")
        if name not in index:
            raise SystemExit(f"no such column: {name}")
        h.changeColBounds(index[name], float(value), float(value))
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", args.seed)
    h.setOptionValue("time_limit", args.time_limit)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.999)
    start = time.time()
    h.run()
    info = h.getInfo()
    print(
        f"status {h.modelStatusToString(h.getModelStatus())} value {info.objective_function_value} "
        f"bound {info.mip_dual_bound} nodes {info.mip_node_count} {time.time() - start:.1f} s"
    )
    if info.primal_solution_status == 2:
        x = h.getSolution().col_value
        for j, n in enumerate(names):
            if n.startswith(args.columns):
                print(n, round(x[j]))


if __name__ == "__main__":
    main()
