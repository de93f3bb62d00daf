#!/usr/bin/env python3
"""Rule 6 of shared/spec/semantics.md as corrected, checked on a decision (no queues).

Every eviction unit (a pod, or all evicted bound members of a disruptionMode: PodGroup
group) must be needed: with the unit restored and the new pods of the groups that could
not evict it set aside (priority not above the unit's, preemptionPolicy Never, its own
group), some node of the unit breaks capacity or a device (read with the decision's
deviceIds). Usage: rule6_check.py INSTANCE.yaml DECISION.(json|yaml)
Prints the number of units and of violations (and the first few); exit 1 if any.
"""
import json, sys, re
import yaml

def qty(v, milli):
    s = str(v).strip()
    m = re.fullmatch(r'([0-9.eE+-]+)([a-zA-Z]*)', s)
    num, suf = float(m.group(1)), m.group(2)
    mult = {'': 1, 'm': 1e-3, 'k': 1e3, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18,
            'Ki': 2**10, 'Mi': 2**20, 'Gi': 2**30, 'Ti': 2**40, 'Pi': 2**50, 'Ei': 2**60}[suf]
    x = num * mult
    return round(x * 1000) if milli else round(x)

def main():
    inst = yaml.safe_load(open(sys.argv[1]))
    dtext = open(sys.argv[2]).read()
    dec = json.loads(dtext) if sys.argv[2].endswith('.json') else yaml.safe_load(dtext)
    shared = set(inst.get('sharedDevices') or [])
    classes = {c['name']: c['value'] for c in inst.get('priorityClasses') or []}
    def milli(r): return r == 'cpu' or r in shared
    groups = {g['name']: g for g in inst.get('podGroups') or []}
    def gprio(g):
        if 'priority' in g and g['priority'] is not None: return g['priority']
        if g.get('priorityClassName'): return classes[g['priorityClassName']]
        return 0
    nodes = {n['name']: n for n in inst['nodes']}
    alloc = {n['name']: {r: qty(v, milli(r)) for r, v in n['allocatable'].items()} for n in inst['nodes']}
    pods = {p['name']: p for p in inst.get('pods') or []}
    def pprio(p):
        if p.get('priority') is not None: return p['priority']
        if p.get('podGroup'): return gprio(groups[p['podGroup']])
        return 0
    preq = {p['name']: {r: qty(v, milli(r)) for r, v in (p.get('requests') or {}).items()} for p in pods.values()}
    evicted = {e['pod'] for e in dec.get('evictions') or []}
    # Units.
    units = []
    done = set()
    for e in sorted(evicted):
        p = pods[e]
        g = p.get('podGroup')
        if g and groups[g].get('disruptionMode') == 'PodGroup':
            if g in done: continue
            done.add(g)
            members = [q for q in pods.values() if q.get('podGroup') == g and q['name'] in evicted]
            units.append([q['name'] for q in members])
        else:
            units.append([e])
    # Task requests.
    treq = {}
    for g in groups.values():
        for t in g['tasks']:
            treq[(g['name'], t['name'])] = {r: qty(v, milli(r)) for r, v in (t.get('requests') or {}).items()}
    new = []  # (group, node, requests, deviceIds)
    for pl in dec.get('placements') or []:
        for p in pl['pods']:
            new.append((pl['podGroup'], p['node'], treq[(pl['podGroup'], p['task'])], p.get('deviceIds') or {}))
    placed = {pl['podGroup'] for pl in dec.get('placements') or []}
    def pdevices(p):
        return p.get('deviceIds') or {}
    bad = []
    for unit in units:
        uprio = max(pprio(pods[q]) for q in unit)
        ugroup = pods[unit[0]].get('podGroup')
        def allowed(g):
            gg = groups[g]
            return gg.get('preemptionPolicy') != 'Never' and gprio(gg) > uprio and g != ugroup
        needed = False
        for n in sorted({pods[q]['node'] for q in unit}):
            used = {}
            dev = {}
            def add_dev(r, d, req):
                e = dev.setdefault((r, d), [0, 0, False])
                e[0] += min(req, 1000); e[1] += 1; e[2] = e[2] or req >= 1000
            for p in pods.values():
                if p['node'] != n or (p['name'] in evicted and p['name'] not in unit): continue
                for r, v in preq[p['name']].items(): used[r] = used.get(r, 0) + v
                for r, ids in pdevices(p).items():
                    for d in ids: add_dev(r, d, preq[p['name']].get(r, 0))
            for (g, node, req, ids) in new:
                if node != n or not allowed(g): continue
                for r, v in req.items(): used[r] = used.get(r, 0) + v
                for r, l in ids.items():
                    for d in l: add_dev(r, d, req.get(r, 0))
            cap = any(r not in shared and used.get(r, 0) > alloc[n].get(r, 0) and (r != 'pods' or 'pods' in alloc[n]) for r in used)
            devb = any(m > 1000 or (w and k > 1) for (m, k, w) in dev.values())
            if cap or devb:
                needed = True; break
        if not needed:
            bad.append(unit)
    print(f"{len(units)} eviction units, {len(bad)} not needed by the groups allowed to evict them")
    for u in bad[:5]:
        print("  not needed:", ", ".join(u[:4]))
    sys.exit(1 if bad else 0)

main()
