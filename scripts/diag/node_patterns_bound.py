#!/usr/bin/env python3
"""Node-pattern (Dantzig-Wolfe) bound of one tier of the cycle MILP -- a diagnostic.

Usage: node_patterns_bound.py TIER.lp [COL=VALUE ...]

TIER.lp is what `tessera export-lp INSTANCE --tier K --fix ...` writes. Every column of
one node (x/z/w columns whose LP name ends in that node's name, e.g. `..._node_0042`,
as in generated instances) goes into one block; a block's own rows (its capacity and
device rows) define its patterns: the integer fillings of that node. The master keeps
every other row (group, domain, floor rows) and the group columns, relaxed, plus one
"at most one pattern" row per node. Column generation prices each node with a small
HiGHS MIP until no pattern has a positive reduced profit; the master value is then the
configuration-LP bound of the tier, which is at least as strong as the LP relaxation
(models/cycle.md 9 reports what it gives on flat-256). COL=VALUE fixes a group column
(e.g. y_spark_036=0) to see the bound of one branch.

Needs `pip install highspy`. Not used by Tessera itself.
"""
import collections
import re
import sys
import time

import highspy

INF = highspy.kHighsInf


def main():
    path, fixes = sys.argv[1], dict(kv.split("=") for kv in sys.argv[2:])
    src = highspy.Highs()
    src.setOptionValue("output_flag", False)
    src.readModel(path)
    lp = src.getLp()
    nc, nr = lp.num_col_, lp.num_row_
    names = [src.getColName(j)[1] for j in range(nc)]
    unknown = set(fixes) - set(names)
    if unknown:
        sys.exit(f"no such column: {', '.join(sorted(unknown))}")
    cost = [-c for c in lp.col_cost_]  # the file maximizes; the master minimizes
    a = lp.a_matrix_
    cols = [[] for _ in range(nc)]
    rows = [[] for _ in range(nr)]
    for j in range(nc):
        for k in range(a.start_[j], a.start_[j + 1]):
            cols[j].append((a.index_[k], a.value_[k]))
            rows[a.index_[k]].append((j, a.value_[k]))

    def node_of(name):
        m = re.search(r"_(node_\d+)(_\d+)?$", name) if name[:2] in ("x_", "z_", "w_") else None
        return m.group(1) if m else None

    cnode = [node_of(n) for n in names]
    rnode = []
    for r in range(nr):
        ns = {cnode[j] for j, _ in rows[r]}
        rnode.append(next(iter(ns)) if len(ns) == 1 and None not in ns else None)
    nodes = sorted({n for n in cnode if n})
    block_cols, block_rows = collections.defaultdict(list), collections.defaultdict(list)
    for j in range(nc):
        if cnode[j]:
            block_cols[cnode[j]].append(j)
    for r in range(nr):
        if rnode[r]:
            block_rows[rnode[r]].append(r)
    master_rows = [r for r in range(nr) if rnode[r] is None]
    print(f"{len(nodes)} node blocks, {len(master_rows)} master rows", flush=True)

    m = highspy.Highs()
    m.setOptionValue("output_flag", False)
    pos = {}
    for i, r in enumerate(master_rows):
        m.addRow(lp.row_lower_[r], lp.row_upper_[r], 0, [], [])
        pos[r] = i
    conv = {}
    for k, n in enumerate(nodes):
        m.addRow(-INF, 1.0, 0, [], [])
        conv[n] = len(master_rows) + k
    for j in range(nc):
        if cnode[j] is None:
            lo, up = lp.col_lower_[j], lp.col_upper_[j]
            if names[j] in fixes:
                lo = up = float(fixes[names[j]])
            m.addCol(cost[j], lo, up, len(cols[j]), [pos[r] for r, _ in cols[j]], [v for _, v in cols[j]])
    # Artificial slacks (penalised) make the first masters feasible before patterns exist.
    for i, r in enumerate(master_rows):
        if lp.row_lower_[r] > -INF:
            m.addCol(1e6, 0, INF, 1, [i], [1.0])
        if lp.row_upper_[r] < INF:
            m.addCol(1e6, 0, INF, 1, [i], [-1.0])

    pricing = {}
    for n in nodes:
        p = highspy.Highs()
        p.setOptionValue("output_flag", False)
        p.setOptionValue("mip_rel_gap", 1e-9)
        js = block_cols[n]
        loc = {j: i for i, j in enumerate(js)}
        for j in js:
            p.addVar(lp.col_lower_[j], lp.col_upper_[j])
            p.changeColIntegrality(loc[j], highspy.HighsVarType.kInteger)
        for r in block_rows[n]:
            p.addRow(lp.row_lower_[r], lp.row_upper_[r], len(rows[r]), [loc[j] for j, _ in rows[r]], [v for _, v in rows[r]])
        pricing[n] = (p, js)

    t0 = time.time()
    for it in range(1000):
        m.run()
        obj = m.getInfo().objective_function_value
        dual = m.getSolution().row_dual
        added, lagrangian = 0, obj
        for n in nodes:
            p, js = pricing[n]
            rc = [cost[j] - sum(v * dual[pos[r]] for r, v in cols[j] if rnode[r] is None) for j in js]
            p.changeColsCost(len(js), list(range(len(js))), rc)
            p.run()
            gain = p.getInfo().objective_function_value - dual[conv[n]]
            if gain < -1e-6:
                xs = p.getSolution().col_value
                pattern = {js[i]: round(xs[i]) for i in range(len(js)) if round(xs[i]) != 0}
                agg, c = collections.defaultdict(float), 0.0
                for j, v in pattern.items():
                    c += cost[j] * v
                    for r, coef in cols[j]:
                        if rnode[r] is None:
                            agg[pos[r]] += coef * v
                agg[conv[n]] += 1.0
                m.addCol(c, 0, INF, len(agg), list(agg), list(agg.values()))
                added += 1
                lagrangian += gain
        print(f"round {it}: master {-obj:.2f}, bound {-lagrangian:.2f}, {added} patterns added, {time.time() - t0:.1f} s", flush=True)
        if added == 0:
            break
    sol = m.getSolution().col_value
    plain = sum(1 for j in range(nc) if cnode[j] is None)
    artificial = sum(sol[plain : plain + sum((lp.row_lower_[r] > -INF) + (lp.row_upper_[r] < INF) for r in master_rows)])
    if artificial > 1e-6:
        sys.exit(f"the tier is infeasible under these values (artificial slack {artificial:.3g} left)")
    k = 0
    for j in range(nc):
        if cnode[j] is None:
            if names[j].startswith("y_") and 1e-6 < sol[k] < 1 - 1e-6:
                print(f"fractional {names[j]} = {sol[k]:.3f}")
            k += 1
    print(f"configuration-LP bound: {-obj:.2f}")


if __name__ == "__main__":
    main()
