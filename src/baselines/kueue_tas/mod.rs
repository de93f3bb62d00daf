//! Kueue Topology-Aware Scheduling (TAS), ported from Kueue's source.
//!
//! Source read: kubernetes-sigs/kueue, `pkg/cache/scheduler/tas_flavor_snapshot.go`
//! (domain tree, per-level fit counts, BestFit / LeastFreeCapacity, level-by-level
//! assignment, podset groups with a leader), `tas_balanced_placement.go` (balanced
//! placement) and `pkg/resources` (`CountInWithLimitingResource`), with the feature-gate
//! defaults of `pkg/features/kube_features.go`. The target version is v0.19.2; the index of
//! public sources this port was read from does not hold that tag, so the closest stored
//! version was read: the `main` branch after the v0.19 release branch was cut (stored
//! commit `00c4551`, API `v1beta2`; its CHANGELOG reaches v0.19.7/v0.20.0). The TAS
//! changes listed for v0.19.3-v0.19.7 touch node replacement and partial slices only, not
//! the algorithm ported here. Kueue's own unit-test table for this code
//! (`TestFindTopologyAssignments` in `tas_cache_test.go`) is ported as data in
//! `tests/data/kueue-tas/find-topology-assignments.yaml` and run by `tests/kueue_tas.rs`.
//!
//! The algorithm, for one PodSet (optionally with a one-pod leader PodSet):
//! 1. **Fit counts** (phase 1): every leaf domain gets the number of pods that fit
//!    (`state`), whether the leader fits (`leaderState`), the pods that fit beside the
//!    leader (`stateWithLeader`); counts are summed up the tree, and at the slice level
//!    turned into whole slices (`sliceState`); with inner slice layers each child counts
//!    only whole inner slices.
//! 2. **Level** (phase 2a, [`find_topology_assignment`]): at the requested level, domains
//!    are sorted (BestFit: most free slices first; LeastFreeCapacity: fewest first). One
//!    domain that holds the whole PodSet is taken (BestFit: the tightest one that does).
//!    Otherwise `required` fails; `preferred` climbs to the next coarser level and tries
//!    again; at the top (or for unconstrained requests, which never climb) domains are
//!    taken greedily in sort order, the last one replaced by the tightest that fits.
//! 3. **Down** (phase 2b): the chosen domains are refined level by level to the leaves:
//!    above the slice level all children of the chosen domains are sorted together and
//!    filled greedily; at and below it each domain's count is split among its own
//!    children (in whole slices above the slice level, whole inner slices where an inner
//!    layer applies, single pods below).
//!
//! Profiles: `useLeastFreeCapacityAlgorithm` = the request is unconstrained (the
//! `podset-unconstrained-topology` annotation, a slice-only request, or a PodSet with no
//! topology request on a TAS flavor: "implied") **and** gate `TASProfileMixed` is on
//! (Beta, on by default since v0.15). Everything else uses BestFit. `TASProfileLeastFreeCapacity`
//! was deprecated in v0.11 and is gone in v0.19. `TASBalancedPlacement` (Alpha, off by
//! default) switches `preferred` requests to the balanced algorithm; `TASMultiLayerTopology`
//! (Beta, on by default since v0.19) enables inner slice layers. Gates that change nothing
//! here (node replacement, elastic workload slices, preferred node affinity, off by
//! default) are not ported.
//!
//! Determinism: where Kueue iterates Go maps before a total-order sort, the port sorts by
//! the same key; where Kueue's order is the insertion order of a map (children lists),
//! the port keeps children sorted by their level values, which every later sort would
//! produce anyway.

mod balanced;
pub mod snapshot;
pub(crate) mod solver;

use std::collections::BTreeMap;

/// Kueue feature gates that change topology placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gates {
    /// `TASProfileMixed`: LeastFreeCapacity for unconstrained requests.
    pub profile_mixed: bool,
    /// `TASBalancedPlacement`: balanced placement for `preferred` requests.
    pub balanced_placement: bool,
    /// `TASMultiLayerTopology`: inner slice layers.
    pub multi_layer_topology: bool,
}

impl Gates {
    /// The defaults of Kueue v0.19: Mixed on, balanced placement off, multi-layer on.
    pub const V0_19: Gates = Gates { profile_mixed: true, balanced_placement: false, multi_layer_topology: true };
}

impl Default for Gates {
    fn default() -> Gates {
        Gates::V0_19
    }
}

/// A PodSet's topology request (Kueue's `PodSetTopologyRequest`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyRequest {
    /// `kueue.x-k8s.io/podset-required-topology`.
    pub required: Option<String>,
    /// `kueue.x-k8s.io/podset-preferred-topology`.
    pub preferred: Option<String>,
    /// `kueue.x-k8s.io/podset-unconstrained-topology`.
    pub unconstrained: Option<bool>,
    /// `kueue.x-k8s.io/podset-slice-required-topology`.
    pub slice_required_topology: Option<String>,
    /// `kueue.x-k8s.io/podset-slice-size`.
    pub slice_size: Option<i64>,
    /// Multi-layer slice constraints, outermost first: (level, size).
    pub slice_constraints: Vec<(String, i64)>,
}

/// One PodSet to place: its topology request (`None`: no annotation) and pod count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSetRequest {
    /// The request, if the PodSet has topology annotations.
    pub topology: Option<TopologyRequest>,
    /// Pods to place.
    pub count: i64,
    /// TAS is implied (the flavor is a TAS flavor, the PodSet has no request): placed as
    /// unconstrained at the lowest level.
    pub implied: bool,
}

/// Why a leaf was left out before counting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exclusion {
    /// An untolerated `NoSchedule`/`NoExecute` taint, as Kubernetes prints it (`key=value:Effect`).
    Taint(String),
    /// The PodSet's nodeSelector does not match.
    NodeSelector,
    /// The PodSet's required node affinity does not match.
    Affinity,
    /// Outside the domain the placement is confined to.
    TopologyDomain,
}

/// Phase-1 facts of one leaf for the PodSet at hand (`fillLeafCounts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeafFit {
    /// Left out before counting.
    pub excluded: Option<Exclusion>,
    /// Pods that fit.
    pub state: i64,
    /// 1 when the leader pod fits, else 0 (always 0 without a leader).
    pub leader_state: i64,
    /// Pods that fit beside the leader (= `state` without a leader).
    pub state_with_leader: i64,
    /// The resource that limits `state` (reported when no pod fits).
    pub limiting: Option<String>,
}

/// One domain of an assignment with its pod count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainAssignment {
    /// Values of the assignment's levels.
    pub values: Vec<String>,
    /// Pods in the domain.
    pub count: i64,
}

/// A topology assignment as Kueue writes it (`TopologyAssignment`): the levels, then the
/// domains in lexicographic order of their full level values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyAssignment {
    /// The levels the values refer to (only the hostname when the lowest level is the node).
    pub levels: Vec<String>,
    /// Domains with a count, in lexicographic order.
    pub domains: Vec<DomainAssignment>,
}

/// The result of [`find_topology_assignment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The workers' assignment.
    pub workers: TopologyAssignment,
    /// Per leaf (index into [`Tree::leaves`]) the workers placed there.
    pub worker_leaves: Vec<(usize, i64)>,
    /// The leader's assignment, when a leader was requested.
    pub leader: Option<TopologyAssignment>,
    /// Per leaf the leader pods placed there.
    pub leader_leaves: Vec<(usize, i64)>,
}

/// Exclusion statistics of one run, for failure messages (`ExclusionStats`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats {
    taints: BTreeMap<String, i64>,
    node_selector: i64,
    affinity: i64,
    topology_domain: i64,
    resources: BTreeMap<String, i64>,
    total_nodes: i64,
}

impl Stats {
    fn has_exclusions(&self) -> bool {
        self.node_selector > 0 || self.affinity > 0 || self.topology_domain > 0 || !self.taints.is_empty() || !self.resources.is_empty()
    }
    fn reasons(&self) -> String {
        let mut r = Vec::new();
        if self.node_selector > 0 {
            r.push(format!("nodeSelector: {}", self.node_selector));
        }
        if self.affinity > 0 {
            r.push(format!("affinity: {}", self.affinity));
        }
        if self.topology_domain > 0 {
            r.push(format!("topologyDomain: {}", self.topology_domain));
        }
        for (t, n) in &self.taints {
            r.push(format!("taint {t:?}: {n}"));
        }
        for (res, n) in &self.resources {
            r.push(format!("resource {res:?}: {n}"));
        }
        r.sort();
        r.join(", ")
    }
}

/// Per-run counts of a domain (Kueue's `state`, `sliceState`, ... fields).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    state: i64,
    slice_state: i64,
    state_with_leader: i64,
    slice_state_with_leader: i64,
    leader_state: i64,
}

#[derive(Clone, Debug)]
struct Domain {
    /// Values of levels 0..=depth.
    values: Vec<String>,
    /// Kueue's domain id: the hostname for node leaves, else the values joined by ",".
    id: String,
    parent: Option<usize>,
    children: Vec<usize>,
    /// Index into `Tree::leaves` for a leaf.
    leaf: Option<usize>,
    c: Counts,
}

/// The static domain tree of one topology: levels coarse to fine, leaves at the last level.
#[derive(Clone, Debug)]
pub struct Tree {
    levels: Vec<String>,
    lowest_is_node: bool,
    doms: Vec<Domain>,
    per_level: Vec<Vec<usize>>,
    roots: Vec<usize>,
    leaves: Vec<usize>,
}

/// The label of the node level.
pub const HOSTNAME: &str = "kubernetes.io/hostname";

impl Tree {
    /// The tree of `levels` whose leaves have the full level values `leaf_values` (one
    /// entry per distinct leaf; duplicates are merged). Leaves are numbered in the
    /// lexicographic order of their values; [`Tree::leaves`] lists them.
    pub fn new(levels: &[String], leaf_values: &[Vec<String>]) -> Tree {
        let lowest_is_node = levels.last().is_some_and(|l| l == HOSTNAME);
        let mut tree = Tree {
            levels: levels.to_vec(),
            lowest_is_node,
            doms: Vec::new(),
            per_level: vec![Vec::new(); levels.len()],
            roots: Vec::new(),
            leaves: Vec::new(),
        };
        let mut sorted: Vec<&Vec<String>> = leaf_values.iter().filter(|v| v.len() == levels.len() && !levels.is_empty()).collect();
        sorted.sort();
        sorted.dedup();
        let mut by_values: BTreeMap<Vec<String>, usize> = BTreeMap::new();
        for values in sorted {
            let mut parent = None;
            for depth in 0..levels.len() {
                let key = values[..=depth].to_vec();
                let id = match by_values.get(&key) {
                    Some(&d) => d,
                    None => {
                        let d = tree.doms.len();
                        let is_leaf = depth + 1 == levels.len();
                        let id = if is_leaf && lowest_is_node { values[depth].clone() } else { key.join(",") };
                        tree.doms.push(Domain { values: key.clone(), id, parent, children: Vec::new(), leaf: None, c: Counts::default() });
                        if is_leaf {
                            tree.doms[d].leaf = Some(tree.leaves.len());
                            tree.leaves.push(d);
                        }
                        match parent {
                            Some(p) => tree.doms[p].children.push(d),
                            None => tree.roots.push(d),
                        }
                        tree.per_level[depth].push(d);
                        by_values.insert(key, d);
                        d
                    }
                };
                parent = Some(id);
            }
        }
        tree
    }

    /// The full level values of every leaf, in leaf order.
    pub fn leaves(&self) -> Vec<&[String]> {
        self.leaves.iter().map(|&d| self.doms[d].values.as_slice()).collect()
    }

    /// The levels, coarse to fine.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// Whether the lowest level is the node (`kubernetes.io/hostname`).
    pub fn lowest_is_node(&self) -> bool {
        self.lowest_is_node
    }

    fn level_index(&self, key: &str) -> Option<usize> {
        self.levels.iter().position(|l| l == key)
    }
}

/// Everything derived from a PodSet's request before counting (`findTopologyAssignmentState`).
struct Params {
    count: i64,
    leader_count: i64,
    slice_size: i64,
    requested_level: usize,
    slice_level: usize,
    slice_size_at_level: BTreeMap<usize, i64>,
    required: bool,
    unconstrained: bool,
    multi_layer: Vec<(String, i64)>,
}

/// The slice size, 1 without slices (`getSliceSizeWithSinglePodAsDefault`).
fn slice_size_of(tr: Option<&TopologyRequest>) -> Result<i64, String> {
    let Some(tr) = tr else { return Ok(1) };
    if let Some(&(_, size)) = tr.slice_constraints.first() {
        return Ok(size);
    }
    if tr.slice_required_topology.is_none() {
        return Ok(1);
    }
    tr.slice_size.ok_or_else(|| "slice topology requested, but slice size not provided".to_string())
}

fn is_slice_only(tr: Option<&TopologyRequest>) -> bool {
    tr.is_some_and(|t| {
        t.required.is_none() && t.preferred.is_none() && (t.slice_required_topology.is_some() || !t.slice_constraints.is_empty())
    })
}

/// The requested level key (`levelKeyWithImpliedFallback`).
fn level_key(tree: &Tree, req: &PodSetRequest) -> Option<String> {
    if let Some(t) = &req.topology {
        if let Some(r) = &t.required {
            return Some(r.clone());
        }
        if let Some(p) = &t.preferred {
            return Some(p.clone());
        }
        if is_slice_only(Some(t)) {
            return tree.levels.first().cloned();
        }
        if t.unconstrained == Some(true) {
            return tree.levels.last().cloned();
        }
    }
    if req.implied {
        return tree.levels.last().cloned();
    }
    None
}

/// The work area of one run: the tree's domains with fresh counts (and room for clones).
pub(crate) struct Run<'a> {
    tree: &'a Tree,
    doms: Vec<Domain>,
    gates: Gates,
    stats: Stats,
    name: String,
}

/// Finds the topology assignment of one PodSet (with a one-pod leader when `leader`), as
/// Kueue's `findTopologyAssignment`. `fit(leaf)` gives the phase-1 facts of each leaf
/// (index into [`Tree::leaves`]); `topology_name` appears in failure messages. The error
/// is Kueue's failure reason, word for word.
pub fn find_topology_assignment(
    tree: &Tree,
    topology_name: &str,
    workers: &PodSetRequest,
    leader: bool,
    fit: &dyn Fn(usize) -> LeafFit,
    gates: Gates,
) -> Result<Assignment, String> {
    let mut run = Run { tree, doms: tree.doms.clone(), gates, stats: Stats::default(), name: topology_name.to_string() };
    run.find(workers, leader, fit)
}

impl Run<'_> {
    fn lfc(&self, unconstrained: bool) -> bool {
        unconstrained && self.gates.profile_mixed
    }

    fn find(&mut self, req: &PodSetRequest, leader: bool, fit: &dyn Fn(usize) -> LeafFit) -> Result<Assignment, String> {
        let tree = self.tree;
        let tr = req.topology.as_ref();
        let slice_size = slice_size_of(tr)?;
        let required = tr.is_some_and(|t| t.required.is_some());
        let unconstrained = tr.is_some_and(|t| t.unconstrained == Some(true)) || req.implied || is_slice_only(tr);
        let key = level_key(tree, req).ok_or_else(|| "topology level not specified".to_string())?;
        let requested_level = tree.level_index(&key).ok_or_else(|| format!("no requested topology level: {key}"))?;
        let slice_key = tr
            .and_then(|t| t.slice_required_topology.clone().or_else(|| t.slice_constraints.first().map(|c| c.0.clone())))
            .or_else(|| tree.levels.last().cloned())
            .unwrap_or_default();
        let slice_level = tree.level_index(&slice_key).ok_or_else(|| format!("no requested topology level for slices: {slice_key}"))?;
        if requested_level > slice_level {
            return Err(format!("podset slice topology {slice_key} is above the podset topology {key}"));
        }
        let slice_size_at_level = self.slice_size_at_level(tr, slice_size, slice_level)?;
        let multi_layer = if self.gates.multi_layer_topology && !slice_size_at_level.is_empty() {
            tr.map(|t| t.slice_constraints.clone()).unwrap_or_default()
        } else {
            Vec::new()
        };
        let p = Params {
            count: req.count,
            leader_count: i64::from(leader),
            slice_size,
            requested_level,
            slice_level,
            slice_size_at_level,
            required,
            unconstrained,
            multi_layer,
        };

        // Phase 1.
        self.fill_in_counts(&p, fit);

        // Phase 2a.
        let mut curr: Vec<usize> = Vec::new();
        let mut fit_level = 0;
        let mut balanced = false;
        if self.gates.balanced_placement && !p.required && !p.unconstrained {
            let (domains, threshold) = self.find_best_domains_for_balanced_placement(&p);
            if threshold > 0 {
                if let Ok((d, l)) = self.apply_balanced_placement(&p, threshold, domains) {
                    curr = d;
                    fit_level = l;
                    balanced = true;
                }
            }
        }
        if !balanced {
            let (l, d) = self.find_level_with_fit_domains(p.requested_level, &p)?;
            fit_level = l;
            curr = d;
        }

        // Phase 2b.
        curr = self.update_counts_to_minimum(&curr, p.count, p.leader_count, p.slice_size, p.unconstrained, true);
        let last = tree.levels.len() - 1;
        let mut level = fit_level;
        while level < last.min(p.slice_level) && !balanced {
            let lower = self.sorted_domains(&self.lower_level_domains(&curr), p.unconstrained);
            curr = self.update_counts_to_minimum(&lower, p.count, p.leader_count, p.slice_size, p.unconstrained, true);
            level += 1;
        }
        while level < last {
            let mut size_here = p.slice_size;
            if level >= p.slice_level {
                size_here = p.slice_size_at_level.get(&(level + 1)).copied().unwrap_or(1);
            }
            let mut next = Vec::new();
            for d in curr {
                let children = self.doms[d].children.clone();
                let lower = self.sorted_domains(&children, p.unconstrained);
                if size_here > 1 {
                    for &c in &lower {
                        let cc = &mut self.doms[c].c;
                        cc.slice_state = cc.state / size_here;
                        cc.slice_state_with_leader = cc.state_with_leader / size_here;
                    }
                }
                let (st, ld) = (self.doms[d].c.state, self.doms[d].c.leader_state);
                next.extend(self.update_counts_to_minimum(&lower, st, ld, size_here, p.unconstrained, size_here > 1));
            }
            curr = next;
            level += 1;
        }

        let mut out = Assignment {
            workers: TopologyAssignment { levels: Vec::new(), domains: Vec::new() },
            worker_leaves: Vec::new(),
            leader: None,
            leader_leaves: Vec::new(),
        };
        if leader {
            let leader_doms: Vec<(usize, i64)> =
                curr.iter().filter(|&&d| self.doms[d].c.leader_state > 0).map(|&d| (d, self.doms[d].c.leader_state)).collect();
            let (ta, leaves) = self.build_assignment(&leader_doms);
            out.leader = Some(ta);
            out.leader_leaves = leaves;
            curr.retain(|&d| self.doms[d].c.state > 0);
        }
        let worker_doms: Vec<(usize, i64)> = curr.iter().map(|&d| (d, self.doms[d].c.state)).collect();
        let (ta, leaves) = self.build_assignment(&worker_doms);
        out.workers = ta;
        out.worker_leaves = leaves;
        Ok(out)
    }

    /// Inner slice layers (`buildSliceSizeAtLevel`): level -> slice size used there.
    fn slice_size_at_level(
        &self,
        tr: Option<&TopologyRequest>,
        slice_size: i64,
        slice_level: usize,
    ) -> Result<BTreeMap<usize, i64>, String> {
        let mut out = BTreeMap::new();
        let Some(tr) = tr.filter(|_| self.gates.multi_layer_topology) else { return Ok(out) };
        let (mut prev_size, mut prev_level) = (slice_size, slice_level);
        for (topology, size) in tr.slice_constraints.iter().skip(1) {
            let inner = self
                .tree
                .level_index(topology)
                .ok_or_else(|| format!("no requested topology level for additional slice layer: {topology}"))?;
            if inner <= prev_level {
                return Err(format!(
                    "additional slice layer topology {topology} must be at a lower level than {}",
                    self.tree.levels[prev_level]
                ));
            }
            if *size <= 0 || prev_size % size != 0 {
                return Err(format!("additional slice layer size {size} must evenly divide parent layer size {prev_size}"));
            }
            for l in prev_level + 1..=inner {
                out.insert(l, *size);
            }
            prev_size = *size;
            prev_level = inner;
        }
        Ok(out)
    }

    fn fill_in_counts(&mut self, p: &Params, fit: &dyn Fn(usize) -> LeafFit) {
        for d in &mut self.doms {
            d.c = Counts::default();
        }
        for (i, &d) in self.tree.leaves.iter().enumerate() {
            self.stats.total_nodes += 1;
            let f = fit(i);
            match f.excluded {
                Some(Exclusion::Taint(t)) => {
                    *self.stats.taints.entry(t).or_default() += 1;
                    continue;
                }
                Some(Exclusion::NodeSelector) => {
                    self.stats.node_selector += 1;
                    continue;
                }
                Some(Exclusion::Affinity) => {
                    self.stats.affinity += 1;
                    continue;
                }
                Some(Exclusion::TopologyDomain) => {
                    self.stats.topology_domain += 1;
                    continue;
                }
                None => {}
            }
            let c = &mut self.doms[d].c;
            c.state = f.state.max(0);
            if c.state == 0 {
                if let Some(r) = f.limiting {
                    *self.stats.resources.entry(r).or_default() += 1;
                }
            }
            c.leader_state = f.leader_state;
            c.state_with_leader = f.state_with_leader.max(0);
        }
        for r in self.tree.roots.clone() {
            self.fill_in_counts_helper(r, p.slice_size, p.slice_level, 0, &p.slice_size_at_level, p.leader_count > 0);
        }
    }

    fn fill_in_counts_helper(
        &mut self,
        d: usize,
        slice_size: i64,
        slice_level: usize,
        level: usize,
        at_level: &BTreeMap<usize, i64>,
        leader_required: bool,
    ) {
        if self.doms[d].children.is_empty() {
            if level == slice_level {
                let c = &mut self.doms[d].c;
                c.slice_state = c.state / slice_size;
                c.slice_state_with_leader = c.state_with_leader / slice_size;
            }
            return;
        }
        let mut children_capacity = 0;
        let mut slice_capacity = 0;
        let mut contributor = false;
        let mut min_diff = i64::MAX;
        let mut min_slice_diff = i64::MAX;
        let mut leader_state = 0;
        let inner = at_level.get(&(level + 1)).copied();
        for child in self.doms[d].children.clone() {
            self.fill_in_counts_helper(child, slice_size, slice_level, level + 1, at_level, leader_required);
            let cc = self.doms[child].c;
            let (mut st, mut swl) = (cc.state, cc.state_with_leader);
            if let Some(k) = inner {
                st = st / k * k;
                swl = swl / k * k;
            }
            children_capacity += st;
            slice_capacity += cc.slice_state;
            if !leader_required || cc.leader_state > 0 {
                contributor = true;
                min_diff = min_diff.min(st - swl);
                min_slice_diff = min_slice_diff.min(cc.slice_state - cc.slice_state_with_leader);
            }
            leader_state = leader_state.max(cc.leader_state);
        }
        let c = &mut self.doms[d].c;
        c.state = children_capacity;
        let mut sswl = 0;
        if contributor {
            c.state_with_leader = children_capacity - min_diff;
            sswl = slice_capacity - min_slice_diff;
        } else {
            c.state_with_leader = 0;
        }
        c.leader_state = leader_state;
        if level == slice_level {
            slice_capacity = c.state / slice_size;
            sswl = c.state_with_leader / slice_size;
        }
        c.slice_state = slice_capacity;
        c.slice_state_with_leader = sswl;
    }

    /// `sortedDomains`: slices (BestFit descending, LeastFreeCapacity ascending), then
    /// pods ascending, then level values.
    fn sorted_domains(&self, ds: &[usize], unconstrained: bool) -> Vec<usize> {
        let lfc = self.lfc(unconstrained);
        let mut out = ds.to_vec();
        out.sort_by(|&a, &b| {
            let (x, y) = (&self.doms[a], &self.doms[b]);
            let by_slices = if lfc { x.c.slice_state.cmp(&y.c.slice_state) } else { y.c.slice_state.cmp(&x.c.slice_state) };
            by_slices.then(x.c.state.cmp(&y.c.state)).then_with(|| x.values.cmp(&y.values))
        });
        out
    }

    /// `sortedDomainsWithLeader`: leader capacity first, then as [`Run::sorted_domains`]
    /// on the with-leader counts.
    fn sorted_domains_with_leader(&self, ds: &[usize], unconstrained: bool) -> Vec<usize> {
        let lfc = self.lfc(unconstrained);
        let mut out = ds.to_vec();
        out.sort_by(|&a, &b| {
            let (x, y) = (&self.doms[a], &self.doms[b]);
            let by_slices = if lfc {
                x.c.slice_state_with_leader.cmp(&y.c.slice_state_with_leader)
            } else {
                y.c.slice_state_with_leader.cmp(&x.c.slice_state_with_leader)
            };
            y.c.leader_state
                .cmp(&x.c.leader_state)
                .then(by_slices)
                .then(x.c.state_with_leader.cmp(&y.c.state_with_leader))
                .then_with(|| x.values.cmp(&y.values))
        });
        out
    }

    /// `findBestFitDomainBy`: the first domain with the least `get` that is at least
    /// `needed`, else the first domain.
    fn best_fit_by(&self, ds: &[usize], needed: i64, get: impl Fn(&Counts) -> i64) -> usize {
        let mut best = ds[0];
        let mut best_state = get(&self.doms[best].c);
        for &d in ds {
            let s = get(&self.doms[d].c);
            if s >= needed && s < best_state {
                best = d;
                best_state = s;
            }
        }
        best
    }

    fn best_fit(&self, ds: &[usize], count: i64, leader_count: i64) -> usize {
        if leader_count > 0 {
            self.best_fit_by(ds, count, |c| c.state_with_leader)
        } else {
            self.best_fit_by(ds, count, |c| c.state)
        }
    }

    fn best_fit_slices(&self, ds: &[usize], slices: i64, leader_count: i64) -> usize {
        if leader_count > 0 {
            self.best_fit_by(ds, slices, |c| c.slice_state_with_leader)
        } else {
            self.best_fit_by(ds, slices, |c| c.slice_state)
        }
    }

    fn not_fit(&self, level: usize, p: &Params, fit: i64, total: i64) -> String {
        if !p.multi_layer.is_empty() {
            return self.multi_layer_not_fit(level, p);
        }
        let unit = if p.slice_size == 1 { "pod" } else { "slice" };
        let mut s = if fit == 0 {
            format!("topology {:?} doesn't allow to fit any of {total} {unit}(s)", self.name)
        } else {
            format!("topology {:?} allows to fit only {fit} out of {total} {unit}(s)", self.name)
        };
        self.append_stats(&mut s);
        s
    }

    fn append_stats(&self, s: &mut String) {
        if self.stats.has_exclusions() {
            s.push_str(&format!(". Total nodes: {}; excluded: {}", self.stats.total_nodes, self.stats.reasons()));
        }
    }

    fn count_slices_in_subtree(&self, d: usize, level: usize, target: usize, size: i64) -> i64 {
        if level == target {
            return self.doms[d].c.state / size;
        }
        self.doms[d].children.iter().map(|&c| self.count_slices_in_subtree(c, level + 1, target, size)).sum()
    }

    /// `multiLayerNotFitMessage`: slices that fit per layer in the best domain of `level`.
    fn multi_layer_not_fit(&self, level: usize, p: &Params) -> String {
        let mut s = format!("topology {:?} doesn't allow to fit", self.name);
        let mut best: Option<usize> = None;
        for &d in &self.tree.per_level[level] {
            let better = match best {
                None => true,
                Some(b) => {
                    let (x, y) = (&self.doms[d], &self.doms[b]);
                    x.c.slice_state > y.c.slice_state || (x.c.slice_state == y.c.slice_state && x.id < y.id)
                }
            };
            if better {
                best = Some(d);
            }
        }
        let Some(best) = best else { return s };
        for (topology, size) in &p.multi_layer {
            let Some(target) = self.tree.level_index(topology) else { continue };
            let needed = p.count / size;
            let fit = self.count_slices_in_subtree(best, level, target, *size);
            s.push_str(&format!("; {fit}/{needed} slice(s) fit on level {topology}"));
        }
        self.append_stats(&mut s);
        s
    }

    /// `findLevelWithFitDomains`.
    fn find_level_with_fit_domains(&mut self, level: usize, p: &Params) -> Result<(usize, Vec<usize>), String> {
        let domains = &self.tree.per_level[level];
        if domains.is_empty() {
            return Err(format!("no topology domains at level: {}", self.tree.levels[level]));
        }
        let sorted = self.sorted_domains_with_leader(domains, p.unconstrained);
        let best_fit = !self.lfc(p.unconstrained);
        let mut top = sorted[0];
        let slice_count = p.count / p.slice_size;
        if best_fit && self.doms[top].c.slice_state_with_leader >= slice_count && self.doms[top].c.leader_state >= p.leader_count {
            top = self.best_fit_slices(&sorted, slice_count, p.leader_count);
        }
        if self.lfc(p.unconstrained) {
            for &cand in &sorted {
                if self.doms[cand].c.slice_state >= slice_count {
                    return Ok((level, vec![cand]));
                }
            }
            if p.required {
                let max_found = self.doms[*sorted.last().expect("non-empty")].c.state;
                return Err(self.not_fit(level, p, max_found, slice_count));
            }
        }
        let t = self.doms[top].c;
        if t.slice_state_with_leader < slice_count || t.leader_state < p.leader_count {
            if p.required {
                return Err(self.not_fit(level, p, t.slice_state, slice_count));
            }
            if level > 0 && !p.unconstrained {
                return self.find_level_with_fit_domains(level - 1, p);
            }
            let mut results = Vec::new();
            let mut rem_slices = slice_count;
            let mut rem_leaders = p.leader_count;
            let mut idx = 0;
            while rem_leaders > 0 && idx < sorted.len() && self.doms[sorted[idx]].c.leader_state > 0 {
                let mut d = sorted[idx];
                if best_fit && self.doms[d].c.slice_state_with_leader >= rem_slices {
                    d = self.best_fit_slices(&sorted[idx..], rem_slices, rem_leaders);
                }
                results.push(d);
                rem_leaders -= self.doms[d].c.leader_state;
                rem_slices -= self.doms[d].c.slice_state_with_leader;
                idx += 1;
            }
            if rem_leaders > 0 {
                return Err(self.not_fit(level, p, p.leader_count - rem_leaders, slice_count));
            }
            let rest = self.sorted_domains(&sorted[idx..], p.unconstrained);
            let mut i = 0;
            while rem_slices > 0 && i < rest.len() {
                let mut d = rest[i];
                if best_fit && self.doms[d].c.slice_state >= rem_slices {
                    d = self.best_fit_slices(&rest[i..], rem_slices, 0);
                }
                results.push(d);
                rem_slices -= self.doms[d].c.slice_state;
                i += 1;
            }
            if rem_slices > 0 {
                return Err(self.not_fit(level, p, slice_count - rem_slices, slice_count));
            }
            return Ok((level, results));
        }
        Ok((level, vec![top]))
    }

    /// `consumeWithLeadersGeneric`: one domain while leaders are still to place.
    #[allow(clippy::too_many_arguments)]
    fn consume_with_leaders(
        &mut self,
        dom: usize,
        remaining: &[usize],
        rem_primary: &mut i64,
        rem_leaders: &mut i64,
        unconstrained: bool,
        size: i64,
        slices: bool,
    ) -> (usize, bool) {
        let with_leader = |c: &Counts| if slices { c.slice_state_with_leader } else { c.state_with_leader };
        let mut d = dom;
        if !self.lfc(unconstrained) && with_leader(&self.doms[d].c) >= *rem_primary && self.doms[d].c.leader_state >= *rem_leaders {
            d = if slices {
                self.best_fit_slices(remaining, *rem_primary, *rem_leaders)
            } else {
                self.best_fit(remaining, *rem_primary, *rem_leaders)
            };
        }
        let c = &mut self.doms[d].c;
        if with_leader(c) >= *rem_primary && c.leader_state >= *rem_leaders {
            if slices {
                c.slice_state = *rem_primary;
            } else {
                c.state = *rem_primary;
            }
            c.leader_state = *rem_leaders;
            c.state = *rem_primary * size;
            return (d, true);
        }
        if slices {
            if c.slice_state_with_leader > *rem_primary {
                c.slice_state_with_leader = *rem_primary;
            }
            if c.leader_state > *rem_leaders {
                c.leader_state = *rem_leaders;
            }
            c.state = c.slice_state_with_leader * size;
            *rem_leaders -= c.leader_state;
            *rem_primary -= c.slice_state_with_leader;
            return (d, false);
        }
        *rem_primary -= c.state_with_leader;
        *rem_leaders -= c.leader_state;
        if c.state_with_leader > *rem_primary {
            c.state_with_leader = *rem_primary;
        }
        if c.leader_state > *rem_leaders {
            c.leader_state = *rem_leaders;
        }
        (d, false)
    }

    /// `updateCountsToMinimumGeneric`: takes domains in order until `count` pods (or
    /// `count / size` slices) and the leaders are placed; the last one is replaced by
    /// the tightest that holds the rest (BestFit). Empty when they do not suffice.
    fn update_counts_to_minimum(
        &mut self,
        domains: &[usize],
        count: i64,
        leader_count: i64,
        size: i64,
        unconstrained: bool,
        slices: bool,
    ) -> Vec<usize> {
        let best_fit = !self.lfc(unconstrained);
        let mut result = Vec::new();
        let mut rem = if slices { count / size } else { count };
        let mut rem_leaders = leader_count;
        for (i, &dom) in domains.iter().enumerate() {
            if rem_leaders > 0 {
                let (d, done) = self.consume_with_leaders(dom, &domains[i..], &mut rem, &mut rem_leaders, unconstrained, size, slices);
                result.push(d);
                if done {
                    return result;
                }
                continue;
            }
            let mut d = dom;
            if slices {
                if best_fit && self.doms[d].c.slice_state >= rem {
                    d = self.best_fit_slices(&domains[i..], rem, 0);
                }
                let c = &mut self.doms[d].c;
                c.leader_state = 0;
                if c.slice_state >= rem {
                    c.state = rem * size;
                    c.slice_state = rem;
                    result.push(d);
                    return result;
                }
                c.state = c.slice_state * size;
                rem -= c.slice_state;
                result.push(d);
                continue;
            }
            if best_fit && self.doms[d].c.state >= rem {
                d = self.best_fit(&domains[i..], rem, 0);
            }
            let c = &mut self.doms[d].c;
            c.leader_state = 0;
            if c.state >= rem {
                c.state = rem;
                result.push(d);
                return result;
            }
            rem -= c.state;
            result.push(d);
        }
        // Kueue logs "code assumptions violated" and returns nil here.
        Vec::new()
    }

    fn lower_level_domains(&self, ds: &[usize]) -> Vec<usize> {
        ds.iter().flat_map(|&d| self.doms[d].children.iter().copied()).collect()
    }

    /// `buildAssignment`: domains (with their counts) sorted by level values; only the
    /// hostname when the lowest level is the node; domains with 0 pods left out.
    fn build_assignment(&self, doms: &[(usize, i64)]) -> (TopologyAssignment, Vec<(usize, i64)>) {
        let mut ds: Vec<(usize, i64)> = doms.to_vec();
        ds.sort_by(|a, b| self.doms[a.0].values.cmp(&self.doms[b.0].values));
        let from = if self.tree.lowest_is_node { self.tree.levels.len() - 1 } else { 0 };
        let mut ta = TopologyAssignment { levels: self.tree.levels[from..].to_vec(), domains: Vec::new() };
        let mut leaves = Vec::new();
        for (d, count) in ds {
            if count == 0 {
                continue;
            }
            let dom = &self.doms[d];
            ta.domains.push(DomainAssignment { values: dom.values[from..].to_vec(), count });
            if let Some(l) = dom.leaf {
                leaves.push((l, count));
            }
        }
        (ta, leaves)
    }
}
