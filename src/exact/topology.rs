//! The topology graph of a cycle: levels as given (coarse to fine, hostname last),
//! domains as vertices, nodes as leaves, and free capacity rolled up per domain.
//!
//! A node without a level's label belongs to no domain of that level. Labels need not
//! nest (a rack value may occur in two zones), so a domain's parent is the closest
//! coarser domain that contains *all* its nodes, or the root; a rollup is always summed
//! over the domain's own nodes, never over children, so it is right for any labelling.

use crate::engine::cycle::{Cycle, UNLIMITED};
use crate::model::*;
use petgraph::graph::{DiGraph, NodeIndex};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vertex {
    Root,
    Domain { level: usize, domain: usize },
    Node(NodeId),
}

/// Free capacity of one domain, with every evictable pod gone (what any placement
/// could ever use there): a necessary condition for whatever is placed inside.
#[derive(Clone, Debug, Default)]
pub struct Rollup {
    /// Per resource: summed free amount; `UNLIMITED` when some node sets no limit.
    pub free: Vec<i64>,
    /// Per resource: completely free devices (shared resources only).
    pub whole_devices: Vec<i64>,
}

pub struct TopologyGraph {
    pub graph: DiGraph<Vertex, ()>,
    /// `[level][domain]` -> vertex.
    pub domain_vertex: Vec<Vec<NodeIndex>>,
    /// `[level][domain]` -> rolled-up free capacity.
    pub rollup: Vec<Vec<Rollup>>,
    /// Per node: its rolled-up (reachable) capacity, the leaves of the rollups.
    pub node_free: Vec<Rollup>,
}

impl TopologyGraph {
    pub fn new(cycle: &Cycle) -> TopologyGraph {
        let inst = cycle.inst;
        let mut graph = DiGraph::new();
        let root = graph.add_node(Vertex::Root);
        let mut domain_vertex: Vec<Vec<NodeIndex>> = Vec::new();
        for l in 0..inst.levels.len() {
            let mut vs = Vec::new();
            for d in 0..cycle.domain_names[l].len() {
                let v = graph.add_node(Vertex::Domain { level: l, domain: d });
                // Parent: the closest coarser level where all nodes of d share one domain.
                let nodes = &cycle.domain_nodes[l][d];
                let parent = (0..l).rev().find_map(|pl| {
                    let first = cycle.domain_of[pl][nodes[0]]?;
                    nodes.iter().all(|&n| cycle.domain_of[pl][n] == Some(first)).then(|| domain_vertex[pl][first])
                });
                graph.add_edge(parent.unwrap_or(root), v, ());
                vs.push(v);
            }
            domain_vertex.push(vs);
        }
        let node_free: Vec<Rollup> = (0..inst.nodes.len())
            .map(|n| {
                let (free, devices) = cycle.reachable(n);
                let mut whole = vec![0; inst.resources.len()];
                for (si, &r) in cycle.shared_ids.iter().enumerate() {
                    whole[r] = devices[si].iter().filter(|&&f| f >= 1000).count() as i64;
                }
                let free = (0..inst.resources.len())
                    .map(|r| match cycle.shared_ids.iter().position(|&x| x == r) {
                        Some(si) => devices[si].iter().map(|&f| f.max(0)).sum(),
                        None => free[r].max(0),
                    })
                    .collect();
                Rollup { free, whole_devices: whole }
            })
            .collect();
        // Leaves: each node under its finest domain (the hostname level always has one).
        for (n, _) in inst.nodes.iter().enumerate() {
            let leaf = graph.add_node(Vertex::Node(n));
            let parent = (0..inst.levels.len()).rev().find_map(|l| cycle.domain_of[l][n].map(|d| domain_vertex[l][d]));
            graph.add_edge(parent.unwrap_or(root), leaf, ());
        }
        let rollup = (0..inst.levels.len())
            .map(|l| cycle.domain_nodes[l].iter().map(|nodes| sum_rollups(inst, nodes.iter().map(|&n| &node_free[n]))).collect())
            .collect();
        TopologyGraph { graph, domain_vertex, rollup, node_free }
    }
}

pub fn sum_rollups<'r>(inst: &Instance, parts: impl Iterator<Item = &'r Rollup>) -> Rollup {
    let mut acc = Rollup { free: vec![0; inst.resources.len()], whole_devices: vec![0; inst.resources.len()] };
    for p in parts {
        for r in 0..inst.resources.len() {
            acc.free[r] = if acc.free[r] == UNLIMITED || p.free[r] >= UNLIMITED / 2 { UNLIMITED } else { acc.free[r] + p.free[r] };
            acc.whole_devices[r] += p.whole_devices[r];
        }
    }
    acc
}
