//! Device fragmentation as the FGD scheduler measures it, for a greedy pass that puts
//! each pod where the pods still to come lose least.
//!
//! Ported from the behaviour of the Fragmentation Gradient Descent score of the
//! hkust-adsl Kubernetes scheduler simulator (Weng et al., USENIX ATC '23):
//! `pkg/simulator/plugin/fgd_score.go` (commit `5b6b304`) and `NodeGpuShareFragAmount`,
//! `GetNodePodFrag` in `pkg/utils/frag.go` (commit `29a1e4c`). For one typical pod, a
//! node's fragmentation is the device share it cannot use: all its free share when the
//! pod does not fit there, else the free share of the devices too small for the pod (a
//! fraction: free share below it; whole devices: any device not completely free). The
//! node's fragmentation is that amount weighted by how often each typical pod occurs,
//! and a placement's score is how much it grows.
//!
//! Differences from the simulator, and why:
//! - the typical pods are the cycle's pending pods that request a device, by request
//!   vector and weighted by pod count, not a trace's history: they are the pods the rest
//!   of the pass places;
//! - "fits" tests every resource of the node, not only cpu and devices;
//! - the device a fractional pod takes stays the one [`NodeState::take`] chooses (best
//!   fit), the rule of every other greedy pass, where the simulator tries each device;
//! - ties go to the first node in the order given, not to a random one.

use super::cycle::{Cycle, NodeState};
use crate::model::*;
use std::cell::RefCell;
use std::collections::HashMap;

/// The typical pods of a cycle: request vectors with their share of the pending pods.
pub struct Fragmentation {
    typical: Vec<(Vec<i64>, f64)>,
    /// Fragmentation by a hash of the node state (free vector, then each resource's
    /// device shares sorted): a pass asks for the same states again and again, on
    /// identical nodes and for identical pods. (A collision would only mislead the
    /// heuristic, the same way on every run.)
    memo: RefCell<HashMap<u64, f64>>,
}

impl Fragmentation {
    /// The pending pods that request a shared device, grouped by request vector, each
    /// weighted by its share of them; `None` when no pending pod requests one.
    pub fn of(cycle: &Cycle) -> Option<Fragmentation> {
        let inst = cycle.inst;
        let mut typical: Vec<(Vec<i64>, f64)> = Vec::new();
        for &g in &cycle.pending {
            for &t in &inst.groups[g].tasks {
                let task = &inst.tasks[t];
                if task.count == 0 || cycle.shared_ids.iter().all(|&r| task.requests[r] == 0) {
                    continue;
                }
                match typical.iter_mut().find(|(req, _)| *req == task.requests) {
                    Some((_, w)) => *w += task.count as f64,
                    None => typical.push((task.requests.clone(), task.count as f64)),
                }
            }
        }
        let total: f64 = typical.iter().map(|(_, w)| w).sum();
        if total == 0.0 {
            return None;
        }
        for (_, w) in &mut typical {
            *w /= total;
        }
        Some(Fragmentation { typical, memo: RefCell::new(HashMap::new()) })
    }

    /// The node's expected device share, in milli-devices, that a typical pod could not use.
    pub fn of_node(&self, inst: &Instance, shared_ids: &[ResourceId], node: &NodeState) -> f64 {
        // A multiplicative hash (as rustc's FxHash): this runs for every node a pod could
        // go to, and SipHash was most of a pass's time.
        let mut h: u64 = 0;
        let mut mix = |v: i64| h = (h.rotate_left(5) ^ v as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        node.free.iter().for_each(|&v| mix(v));
        let mut sorted = [0i64; 16];
        for devs in &node.devices {
            mix(-1);
            match sorted.get_mut(..devs.len()) {
                Some(s) => {
                    s.copy_from_slice(devs);
                    s.sort_unstable();
                    s.iter().for_each(|&v| mix(v));
                }
                None => devs.iter().for_each(|&v| mix(v)),
            }
        }
        let key = h;
        if let Some(&f) = self.memo.borrow().get(&key) {
            return f;
        }
        let f = self.compute(inst, shared_ids, node);
        self.memo.borrow_mut().insert(key, f);
        f
    }

    fn compute(&self, inst: &Instance, shared_ids: &[ResourceId], node: &NodeState) -> f64 {
        let mut frag = 0.0;
        for (req, w) in &self.typical {
            let fits_rest = (0..req.len()).all(|r| inst.shared[r] || req[r] <= node.free[r]);
            for (si, &r) in shared_ids.iter().enumerate() {
                let q = req[r];
                if q == 0 {
                    continue;
                }
                let devs = &node.devices[si];
                let total: i64 = devs.iter().sum();
                if total == 0 {
                    continue;
                }
                // The share a pod of this shape can use on one device: a fraction below a
                // whole device, else only a device with nobody on it.
                let usable = |free: i64| if q < 1000 { free >= q } else { free == 1000 };
                let need = if q < 1000 { 1 } else { (q / 1000) as usize };
                let fits = fits_rest && devs.iter().filter(|&&f| usable(f)).count() >= need;
                let lost: i64 = if fits { devs.iter().filter(|&&f| !usable(f)).sum() } else { total };
                frag += w * lost as f64;
            }
        }
        frag
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::assignment::Assignment;
    use crate::engine::greedy::refill_level;

    /// One node, 7 cpu and devices with 1000m and 300m free; two typical pods, equally
    /// frequent. `half` (500m, 1 cpu) fits and loses the 300m device: 300. `whole` (one
    /// device, 8 cpu) does not fit: all 1300m are lost. 0.5 * 300 + 0.5 * 1300 = 800.
    #[test]
    fn a_nodes_fragmentation_is_the_share_each_typical_pod_cannot_use() {
        let yaml = "sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: \"8\", nvidia.com/gpu: 2}}
pods:
  - {name: r, node: n1, priority: 0, requests: {cpu: \"1\", nvidia.com/gpu: 700m}, deviceIds: {nvidia.com/gpu: [1]}}
podGroups:
  - {name: half, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: \"1\", nvidia.com/gpu: 500m}}]}
  - {name: whole, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: \"8\", nvidia.com/gpu: \"1\"}}]}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let frag = Fragmentation::of(&cycle).expect("pods request devices");
        assert_eq!(frag.of_node(&inst, &cycle.shared_ids, &cycle.nodes[0]), 800.0);
        // Asked again (from the memo), the same.
        assert_eq!(frag.of_node(&inst, &cycle.shared_ids, &cycle.nodes[0]), 800.0);
    }

    /// `a` has a free device, `b` half of one. Smallest first, `half` (500m) goes before
    /// `whole` (one device). First fit puts `half` on `a` and `whole` no longer fits; the
    /// least fragmenting node for `half` is `b` (its growth there is -250: `b` loses the
    /// 500m no pod but `half` could use; on `a` it would be +250), and both are placed.
    #[test]
    fn the_least_fragmenting_refill_keeps_whole_devices_for_the_pods_that_need_them() {
        let yaml = "sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: a, allocatable: {cpu: \"4\", nvidia.com/gpu: 1}}
  - {name: b, allocatable: {cpu: \"4\", nvidia.com/gpu: 1}}
pods:
  - {name: r, node: b, priority: 0, requests: {cpu: \"1\", nvidia.com/gpu: 500m}, deviceIds: {nvidia.com/gpu: [0]}}
podGroups:
  - {name: half, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: \"1\", nvidia.com/gpu: 500m}}]}
  - {name: whole, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: \"1\", nvidia.com/gpu: \"1\"}}]}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let frag = Fragmentation::of(&cycle).unwrap();
        let mut first_fit = Assignment::empty(&inst);
        assert_eq!(refill_level(&cycle, &mut first_fit, 0, None, None), 1);
        let mut least = Assignment::empty(&inst);
        assert_eq!(refill_level(&cycle, &mut least, 0, Some(&frag), None), 2);
        let node_of = |a: &Assignment, g: usize| a.pods[g].iter().map(|p| inst.nodes[p.node].name.clone()).collect::<Vec<_>>();
        assert_eq!((node_of(&least, 0), node_of(&least, 1)), (vec!["b".to_string()], vec!["a".to_string()]));
    }
}
