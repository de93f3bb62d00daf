//! `openb-64`, `openb-256`, `openb-1024`: cycles built from Alibaba's public GPU-cluster
//! trace (cluster-trace-gpu-v2023, "openb"; Weng et al., USENIX ATC 2023), so that the
//! solvers also meet real node and pod shapes: heterogeneous GPU models and node sizes,
//! and fractional GPU shares that do not divide one another (50m, 230m, 470m, 810m, ...),
//! unlike the synthetic classes' 250m / 500m / whole devices.
//!
//! The trace is read, never copied: `openb_node_list_all_node.csv` and
//! `openb_pod_list_default.csv` from `$TESSERA_OPENB_DIR`, by default the project's
//! `../shared/data/openb`. What comes from the trace: every node (capacity, GPU count,
//! GPU model as the label `openb.alibaba.com/gpu-model`) and every pod shape (cpu,
//! memory, whole GPUs or a GPU share, QoS). What the trace does not have is invented, and
//! seeded like every class:
//! - which `n` of the 1,523 nodes form the cluster (a seeded sample);
//! - the running pods: trace pods in a seeded order, each bound to a random node with
//!   room, until 30-70 % of the GPU milli and of the cpu is in use (the paper's simulator
//!   also fills a cluster by sampling the pod list);
//! - the pending jobs: the next trace pods in that order, each the shape of a job of `k`
//!   replicas: whole-GPU pods a gang of 1, 2, 4 or 8 (distributed training), GPU-share
//!   pods a basic group of 1-8 (inference replicas), cpu-only pods a gang of 1-8, until
//!   the pending GPU demand is 1.0-1.5x the free GPU milli. Priority follows QoS (LS 1000,
//!   Burstable and Guaranteed 100, BE 0); running BE pods are preemptible.
//!
//! The trace's `gpu_spec` (allowed GPU models) is empty in the default pod list, so no
//! pod is pinned to a model.

use super::*;
use std::path::{Path, PathBuf};

const MODEL: &str = "openb.alibaba.com/gpu-model";
const NODES: &str = "openb_node_list_all_node.csv";
const PODS: &str = "openb_pod_list_default.csv";

/// Where the trace is read from.
pub(super) fn data_dir() -> PathBuf {
    std::env::var_os("TESSERA_OPENB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/openb"))
}

#[derive(Debug)]
struct TraceNode {
    name: String,
    cpu: i64,
    mem: i64,
    gpus: i64,
    model: String,
}

#[derive(Debug)]
struct TracePod {
    name: String,
    req: Req,
    qos: String,
}

/// The rows of a trace CSV file as maps from the expected columns; the header must hold
/// exactly `columns` (in any order), and every row as many fields.
fn read_csv(dir: &Path, file: &str, columns: &[&str]) -> Result<Vec<BTreeMap<String, String>>, String> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: cannot read the openb trace ({e}); set TESSERA_OPENB_DIR to its folder", path.display()))?;
    let mut lines = text.lines().enumerate();
    let header: Vec<String> = match lines.next() {
        Some((_, h)) => h.trim_start_matches('\u{feff}').split(',').map(|s| s.trim().to_string()).collect(),
        None => return Err(format!("{}: empty file", path.display())),
    };
    for c in columns {
        if !header.iter().any(|h| h == c) {
            return Err(format!("{}: header: missing column {c:?}", path.display()));
        }
    }
    if let Some(extra) = header.iter().find(|h| !columns.contains(&h.as_str())) {
        return Err(format!("{}: header: unknown column {extra:?}", path.display()));
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        if line.contains('"') {
            return Err(format!("{} line {}: quoted fields are not supported", path.display(), i + 1));
        }
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != header.len() {
            return Err(format!("{} line {}: {} fields, the header has {}", path.display(), i + 1, fields.len(), header.len()));
        }
        rows.push(header.iter().cloned().zip(fields.iter().map(|f| f.trim().to_string())).collect());
    }
    Ok(rows)
}

/// A non-negative integer field (`what` names it in the error: file, line and column).
fn int(row: &BTreeMap<String, String>, col: &str, what: impl Fn() -> String) -> Result<i64, String> {
    let v = &row[col];
    match v.parse::<i64>() {
        Ok(x) if x >= 0 => Ok(x),
        _ => Err(format!("{}, column {col}: invalid count {v:?} (a non-negative integer)", what())),
    }
}

fn read_nodes(dir: &Path) -> Result<Vec<TraceNode>, String> {
    let rows = read_csv(dir, NODES, &["sn", "cpu_milli", "memory_mib", "gpu", "model"])?;
    let at = |i: usize| move || format!("{} line {}", dir.join(NODES).display(), i + 2);
    let mut nodes = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let node = TraceNode {
            name: r["sn"].clone(),
            cpu: int(r, "cpu_milli", at(i))?,
            mem: int(r, "memory_mib", at(i))?,
            gpus: int(r, "gpu", at(i))?,
            model: r["model"].clone(),
        };
        if node.gpus > 0 && node.model.is_empty() {
            return Err(format!("{}, column model: a GPU node without its GPU model", at(i)()));
        }
        nodes.push(node);
    }
    Ok(nodes)
}

fn read_pods(dir: &Path) -> Result<Vec<TracePod>, String> {
    let columns = [
        "name",
        "cpu_milli",
        "memory_mib",
        "num_gpu",
        "gpu_milli",
        "gpu_spec",
        "qos",
        "pod_phase",
        "creation_time",
        "deletion_time",
        "scheduled_time",
    ];
    let rows = read_csv(dir, PODS, &columns)?;
    let at = |i: usize| move || format!("{} line {}", dir.join(PODS).display(), i + 2);
    let mut pods = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let (gpus, share) = (int(r, "num_gpu", at(i))?, int(r, "gpu_milli", at(i))?);
        if share > 1000 {
            return Err(format!("{}, column gpu_milli: {share} is more than one GPU", at(i)()));
        }
        // One GPU with a share below 1000 is a fractional request; otherwise whole GPUs.
        let gpu = if gpus == 1 && share > 0 && share < 1000 { share } else { gpus * 1000 };
        pods.push(TracePod {
            name: r["name"].clone(),
            req: Req::new(int(r, "cpu_milli", at(i))?, int(r, "memory_mib", at(i))?, gpu),
            qos: r["qos"].clone(),
        });
    }
    Ok(pods)
}

fn priority(qos: &str) -> i64 {
    match qos {
        "LS" => 1000,
        "Burstable" | "Guaranteed" => 100,
        _ => 0,
    }
}

/// The cycle of `n` trace nodes (see the module comment).
pub(super) fn gen_openb(rng: &mut Rng, n: usize) -> Result<InstanceDoc, String> {
    let dir = data_dir();
    let nodes = read_nodes(&dir)?;
    let pods = read_pods(&dir)?;
    if nodes.len() < n {
        return Err(format!("{}: {} nodes, the class needs {n}", dir.join(NODES).display(), nodes.len()));
    }
    let mut b = Builder::default();
    b.doc.shared_devices.push(GPU.into());
    let mut pick: Vec<usize> = (0..nodes.len()).collect();
    rng.shuffle(&mut pick);
    let mut chosen = pick[..n].to_vec();
    chosen.sort_unstable();
    for &i in &chosen {
        let t = &nodes[i];
        let mut s = NodeSpec::new(t.name.clone(), t.cpu, t.mem);
        s.devices = t.gpus;
        if t.gpus > 0 {
            s.labels.insert(MODEL.into(), t.model.clone());
        }
        b.add_node(s);
    }
    let cap = b.nodes.iter().fold(Req::default(), |a, s| Req::new(a.cpu + s.cap.cpu, a.mem + s.cap.mem, a.gpu + s.cap.gpu));
    let mut used = Req::default();
    // Trace pods in a seeded order, the list drawn again (reshuffled) whenever it runs
    // out: a large cluster at high occupancy needs more pods than the trace lists. A
    // pod's `draw` tells its copies apart in their names.
    let draw_seed = rng.next();
    let mut draws = (0..).flat_map(|draw: usize| {
        let mut order: Vec<usize> = (0..pods.len()).collect();
        Rng(draw_seed ^ (draw as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)).shuffle(&mut order);
        order.into_iter().map(move |i| (draw, i))
    });
    let named = |prefix: &str, draw: usize, p: &TracePod| {
        if draw == 0 {
            format!("{prefix}-{}", p.name)
        } else {
            format!("{prefix}-{}-{draw}", p.name)
        }
    };
    // Running pods, until both the GPUs and the cpu are `busy` % used; a bounded number
    // of tries (a cluster too small for any pod ends the loop).
    let busy = rng.range(30, 70);
    let below = |used: i64, cap: i64| used * 100 < busy * cap;
    for (draw, i) in draws.by_ref().take(50 * pods.len()) {
        let (gpu_low, cpu_low) = (below(used.gpu, cap.gpu), below(used.cpu, cap.cpu));
        if !gpu_low && !cpu_low {
            break;
        }
        let p = &pods[i];
        if (p.req.gpu > 0 && !gpu_low) || (p.req.gpu == 0 && !cpu_low) {
            continue;
        }
        let (prio, preemptible) = (priority(&p.qos), p.qos == "BE");
        for _ in 0..16 {
            let node = rng.below(n as u64) as usize;
            if b.bind(rng, named("run", draw, p), node, p.req, None, None, Some(prio), Some(preemptible)) {
                used = Req::new(used.cpu + p.req.cpu, used.mem + p.req.mem, used.gpu + p.req.gpu);
                break;
            }
        }
    }
    // Pending jobs, until their GPU demand is 1.0-1.5x the free GPU milli.
    let target = (cap.gpu - used.gpu) * rng.range(100, 150) / 100;
    let mut demand = 0;
    for (draw, i) in draws.take(50 * pods.len()) {
        if demand >= target {
            break;
        }
        let p = &pods[i];
        let name = named(&format!("job-{:04}", b.doc.pod_groups.len()), draw, p);
        let mut g = PodGroupDoc { name, priority: Some(priority(&p.qos)), ..Default::default() };
        let (task_name, k) = if p.req.gpu >= 1000 {
            ("worker", rng.pick(&[1, 2, 4, 8]))
        } else if p.req.gpu > 0 {
            g.policy = Some("basic".into());
            ("replica", rng.range(1, 8))
        } else {
            ("task", rng.range(1, 8))
        };
        g.tasks.push(task(task_name, k, None, p.req));
        demand += k * p.req.gpu;
        b.doc.pod_groups.push(g);
    }
    if b.doc.pod_groups.is_empty() {
        return Err(format!("{}: no pod left for pending jobs", dir.join(PODS).display()));
    }
    Ok(b.doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(n: usize, seed: u64) -> InstanceDoc {
        gen_openb(&mut Rng::new(seed, &format!("openb-{n}")), n).unwrap_or_else(|e| panic!("the openb trace: {e}"))
    }

    /// The engine's own reading of the document (`Instance::from_doc`: quantities parsed
    /// by the spec's rules, cpu in millicores, memory in bytes, GPUs in milli-devices), as
    /// (cpu milli, memory MiB, GPU milli), the trace's units.
    fn shape(inst: &crate::model::Instance, requests: &[i64]) -> (i64, i64, i64) {
        let get = |name: &str| inst.resource_id(name).map_or(0, |r| requests[r]);
        (get("cpu"), get("memory") / (1 << 20), get(GPU))
    }

    /// Every node is a trace node with its own capacity and GPU model, every bound and
    /// pending pod a trace pod's shape, and the cluster is the class's size.
    #[test]
    fn nodes_and_pod_shapes_come_from_the_trace() {
        let dir = data_dir();
        let nodes: BTreeMap<String, TraceNode> = read_nodes(&dir).unwrap().into_iter().map(|t| (t.name.clone(), t)).collect();
        let shapes: std::collections::BTreeSet<(i64, i64, i64)> =
            read_pods(&dir).unwrap().iter().map(|p| (p.req.cpu, p.req.mem, p.req.gpu)).collect();
        let doc = gen(256, 1);
        let inst = crate::model::Instance::from_doc(&doc).unwrap();
        assert_eq!(inst.nodes.len(), 256);
        for n in &inst.nodes {
            let t = &nodes[&n.name];
            assert_eq!(shape(&inst, &n.allocatable), (t.cpu, t.mem, t.gpus * 1000), "{}", n.name);
            assert_eq!(n.labels.get(MODEL).map(String::as_str), (t.gpus > 0).then_some(t.model.as_str()), "{}", n.name);
        }
        for p in &inst.pods {
            assert!(shapes.contains(&shape(&inst, &p.requests)), "bound {}", p.name);
        }
        let pending: Vec<(i64, i64, i64)> = inst.tasks.iter().filter(|t| t.count > 0).map(|t| shape(&inst, &t.requests)).collect();
        assert_eq!(pending.len(), doc.pod_groups.len());
        for s in &pending {
            assert!(shapes.contains(s), "pending {s:?}");
        }
        // Fractional shares that do not divide one another: what the synthetic classes lack.
        let shares: std::collections::BTreeSet<i64> = pending.iter().map(|s| s.2).filter(|&m| m > 0 && m < 1000).collect();
        assert!(shares.iter().any(|&a| shares.iter().any(|&b| a < b && b % a != 0)), "{shares:?}");
    }

    /// 30-70 % of the GPU milli is used by running pods (a pod more at most), and the
    /// pending GPU demand is 1.0-1.5x what is free (a job more at most).
    #[test]
    fn occupancy_and_demand_are_in_the_class_ranges() {
        for seed in 1..=4 {
            let inst = crate::model::Instance::from_doc(&gen(256, seed)).unwrap();
            let cap: i64 = inst.nodes.iter().map(|n| shape(&inst, &n.allocatable).2).sum();
            let used: i64 = inst.pods.iter().map(|p| shape(&inst, &p.requests).2).sum();
            let demand: i64 = inst.tasks.iter().map(|t| t.count * shape(&inst, &t.requests).2).sum();
            let (big_pod, big_job) = (8000, 8 * 8000);
            assert!(used * 100 >= 30 * cap - 100 * big_pod && used * 100 <= 70 * cap + 100 * big_pod, "seed {seed}: {used} of {cap}");
            let free = cap - used;
            assert!(demand >= free && demand * 100 <= 150 * free + 100 * big_job, "seed {seed}: demand {demand}, free {free}");
            assert_eq!(inst.nodes.len(), 256);
        }
    }

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tessera-openb-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const NODE_HEADER: &str = "sn,cpu_milli,memory_mib,gpu,model\n";
    const POD_HEADER: &str =
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

    /// Malformed trace files: the error names the file, the line and the column.
    #[test]
    fn malformed_trace_files_name_file_line_and_column() {
        let dir = scratch("malformed");
        let e = read_nodes(&dir).unwrap_err();
        assert!(e.contains(NODES) && e.contains("TESSERA_OPENB_DIR"), "{e}");
        let nodes = |body: &str| {
            std::fs::write(dir.join(NODES), body).unwrap();
            read_nodes(&dir).map(|n| n.len())
        };
        let pods = |body: &str| {
            std::fs::write(dir.join(PODS), body).unwrap();
            read_pods(&dir).map(|p| p.len())
        };
        assert_eq!(nodes(&format!("{NODE_HEADER}n0,32000,262144,0,\nn1,96000,786432,8,V100M32\n")), Ok(2));
        let cases: Vec<(String, &str)> = vec![
            (format!("{NODE_HEADER}n0,32000,262144,0,\nn1,12Q,786432,8,G2\n"), "line 3, column cpu_milli: invalid count \"12Q\""),
            (format!("{NODE_HEADER}n0,-1,262144,0,\n"), "line 2, column cpu_milli: invalid count \"-1\""),
            (format!("{NODE_HEADER}n0,32000,262144,2,\n"), "line 2, column model: a GPU node without its GPU model"),
            (format!("{NODE_HEADER}n0,32000,262144\n"), "line 2: 3 fields, the header has 5"),
            ("sn,cpu_milli,memory_mib,gpu\n".to_string(), "header: missing column \"model\""),
            ("sn,cpu_milli,memory_mib,gpu,model,rack\n".to_string(), "header: unknown column \"rack\""),
            (format!("{NODE_HEADER}\"n0\",32000,262144,0,\n"), "line 2: quoted fields are not supported"),
            (String::new(), "empty file"),
        ];
        for (body, want) in &cases {
            let e = nodes(body).unwrap_err();
            assert!(e.contains(NODES) && e.contains(want), "{want}: {e}");
        }
        assert_eq!(pods(&format!("{POD_HEADER}p0,4000,15258,1,220,,BE,Running,1,2,1\n")), Ok(1));
        let e = pods(&format!("{POD_HEADER}p0,4000,15258,1,1220,,BE,Running,1,2,1\n")).unwrap_err();
        assert!(e.contains(PODS) && e.contains("line 2, column gpu_milli: 1220 is more than one GPU"), "{e}");
        let e = pods(&format!("{POD_HEADER}p0,4000,15258,x,0,,BE,Running,1,2,1\n")).unwrap_err();
        assert!(e.contains("line 2, column num_gpu: invalid count \"x\""), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// One pod of a single GPU with a share below 1000 is a fractional request; whole GPUs
    /// otherwise (also `num_gpu` 1 with `gpu_milli` 1000 or 0); cpu-only pods have none.
    #[test]
    fn trace_gpu_columns_become_shares_or_whole_devices() {
        let dir = scratch("gpu-columns");
        std::fs::write(
            dir.join(PODS),
            format!("{POD_HEADER}a,1000,1024,1,470,,LS,Running,1,2,1\nb,1000,1024,1,1000,,LS,Running,1,2,1\nc,1000,1024,4,1000,,BE,Running,1,2,1\nd,1000,1024,1,0,,BE,Running,1,2,1\ne,1000,1024,0,0,,BE,Running,1,2,1\n"),
        )
        .unwrap();
        let gpu: Vec<i64> = read_pods(&dir).unwrap().iter().map(|p| p.req.gpu).collect();
        assert_eq!(gpu, vec![470, 1000, 4000, 1000, 0]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
