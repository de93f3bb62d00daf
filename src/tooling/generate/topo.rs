//! `topo-512` and `topo-4096`: GPU clusters as zones > blocks > racks of 16 nodes, 35-75 %
//! pre-occupied (per rack, so racks differ), and pending gangs of 8-256 pods with mixed
//! topology: required rack / block / zone, preferred rack or block, slices of 2 or 4 pods
//! per host. Running pods are non-preemptible (a pure placement cycle, no victims).

use super::*;

const BLOCK: &str = "example.com/block";

/// `zones` x `blocks` x `racks` x 16 nodes; `groups` pending gangs (inclusive range).
pub(super) fn gen_topo(rng: &mut Rng, zones: usize, blocks: usize, racks: usize, groups: (i64, i64)) -> InstanceDoc {
    let mut b = Builder::default();
    b.doc.shared_devices.push(GPU.into());
    b.doc.topology = Some(TopologyDoc { levels: vec![ZONE.into(), BLOCK.into(), RACK.into()] });
    let n_racks = zones * blocks * racks;
    for rack in 0..n_racks {
        let (z, blk) = (rack / (blocks * racks), rack / racks);
        // Occupancy of this rack's GPUs, in percent.
        let busy = rng.range(45, 85) as u64;
        for h in 0..16 {
            let i = rack * 16 + h;
            let mut s = NodeSpec::new(format!("node-{i:04}"), cores(96), gi(768));
            s.devices = 8;
            s.pods = Some(110);
            s.labels = labels(&[(ZONE, &format!("zone-{z}"))]);
            // About 1 % of the nodes lack the block and rack labels (mislabelled).
            if !rng.chance(1) {
                s.labels.insert(BLOCK.into(), format!("block-{blk:02}"));
                s.labels.insert(RACK.into(), format!("rack-{rack:03}"));
            }
            let node = b.add_node(s);
            let k = (0..8).filter(|_| rng.chance(busy)).count() as i64;
            if k > 0 {
                let req = Req::new(k * cores(rng.range(6, 10)), k * gi(rng.pick(&[48, 64, 80])), k * 1000);
                b.bind(rng, format!("busy-{i:04}"), node, req, None, None, Some(2_000_000_000), Some(false));
            }
        }
    }
    let prio = [0, 100, 1000];
    let n_groups = rng.range(groups.0, groups.1);
    for i in 0..n_groups {
        let mut g = PodGroupDoc { name: format!("gang-{i:03}"), ..Default::default() };
        let x = rng.below(100);
        let gpus = rng.pick(&[1, 1, 2]);
        let (level, count) = match x {
            0..=44 => (Some(RACK), rng.range(8, if gpus == 1 { 32 } else { 16 })),
            45..=74 => (Some(BLOCK), rng.range(32, if gpus == 1 { 128 } else { 64 })),
            75..=89 => (Some(ZONE), rng.range(64, 256)),
            _ => (None, rng.range(8, 64)),
        };
        let gpus = if level == Some(ZONE) { 1 } else { gpus };
        let mut w = task("worker", count, None, Req::new(gpus * cores(rng.range(6, 10)), gpus * gi(rng.pick(&[48, 64])), gpus * 1000));
        if rng.chance(35) {
            let size = if gpus == 1 { 4 } else { 2 };
            w.count -= w.count % size;
            w.slice = Some(SliceDoc { topology: HOST.into(), size });
        }
        g.tasks.push(w);
        if level == Some(ZONE) || rng.chance(15) {
            // A CPU-only launcher in the same domain.
            g.tasks.push(task("launcher", 1, None, Req::new(cores(4), gi(16), 0)));
        }
        let mut t = GroupTopologyDoc { required: level.map(String::from), preferred: None };
        match level {
            Some(BLOCK) | Some(ZONE) if rng.chance(50) => t.preferred = Some(RACK.into()),
            Some(ZONE) if rng.chance(50) => t.preferred = Some(BLOCK.into()),
            None => t.preferred = Some(rng.pick(&[RACK, BLOCK]).into()),
            _ => {}
        }
        g.topology = Some(t);
        let p = rng.pick(&prio);
        if p != 0 {
            g.priority = Some(p);
        }
        g.created_at = Some(rng.range(0, 3600));
        b.doc.pod_groups.push(g);
    }
    b.doc
}
