//! Node sorting of the YuniKorn port.
//!
//! Sources (apache/yunikorn-core): `pkg/scheduler/objects/nodesorting.go`
//! (`absResourceUsage`, `fairnessNodeSortingPolicy.ScoreNode`: the weighted mean usage
//! share; `binPackingNodeSortingPolicy.ScoreNode`: one minus it; default weights `vcore`
//! 1 and `memory` 1, other resources unweighted), `node.go` (`GetResourceUsageShares`:
//! `1 - available/total` per resource, NaN for a zero total, which is skipped),
//! `node_collection.go` (`nodeRef.Less`: lower score first, ties by node id). YuniKorn's
//! `vcore` is Kubernetes' `cpu`.

use crate::engine::cycle::{Cycle, NodeState};
use crate::model::*;

/// YuniKorn's node sorting policy (`nodesortpolicy.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeSort {
    /// `fair` (default): least used nodes first.
    Fair,
    /// `binpacking`: most used nodes first.
    BinPacking,
}

/// The weighted mean usage share of node `n` over cpu and memory (weights 1).
fn usage_share(cycle: &Cycle, st: &NodeState, n: NodeId) -> f64 {
    let inst = cycle.inst;
    let (mut usage, mut weight) = (0.0, 0.0);
    for name in ["cpu", "memory"] {
        let Some(r) = inst.resource_id(name) else { continue };
        let total = inst.nodes[n].allocatable[r];
        if total == 0 {
            continue;
        }
        usage += 1.0 - st.free[r] as f64 / total as f64;
        weight += 1.0;
    }
    if weight == 0.0 {
        0.0
    } else {
        usage / weight
    }
}

/// The node iterator's order: ascending score, ties by node name.
pub(crate) fn sorted_nodes(cycle: &Cycle, states: &[NodeState], sort: NodeSort) -> Vec<NodeId> {
    let inst = cycle.inst;
    let mut keyed: Vec<(f64, NodeId)> = (0..inst.nodes.len())
        .filter(|&n| !inst.nodes[n].unschedulable)
        .map(|n| {
            let u = usage_share(cycle, &states[n], n);
            (if sort == NodeSort::Fair { u } else { 1.0 - u }, n)
        })
        .collect();
    keyed.sort_by(|a, b| {
        a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then_with(|| inst.nodes[a.1].name.cmp(&inst.nodes[b.1].name))
    });
    keyed.into_iter().map(|x| x.1).collect()
}
