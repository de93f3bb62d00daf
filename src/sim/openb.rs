//! A scenario of arrivals on a cluster of Alibaba's openb GPU trace
//! (cluster-trace-gpu-v2023; Weng et al., USENIX ATC 2023), for benchmarks over time
//! (`tessera simulate --openb NODES`).
//!
//! What comes from the trace, read in place (never copied; `$TESSERA_OPENB_DIR`, by
//! default the project's `../shared/data/openb`):
//! - the cluster and the job shapes: the `openb-NODES` class of `tessera generate` (trace
//!   nodes, and pending jobs built from trace pod shapes: whole-GPU and cpu-only pods as
//!   gangs of 1-8 members, GPU-share pods as plain groups of replicas); its running pods
//!   are dropped, the cluster starts empty;
//! - how long pods run: the trace's pod lifetimes (`deletion_time - creation_time` of
//!   `openb_pod_list_default.csv`), clamped to 1 min .. 4 h so that a run ends.
//!
//! What is invented, seeded: arrivals are a Poisson process whose rate offers `load`
//! times the cluster's GPU capacity (job GPU demand times lifetime, sampled
//! independently); each arrival picks a job shape and a lifetime uniformly. Gangs become
//! applications with one task group (`minMember` = the gang size, `minResource` = the
//! member's requests, placeholder timeout 10 min, Soft); plain groups applications
//! without task groups.

use super::scenario::{EventDoc, PodSpecDoc, ScenarioDoc, SubmitDoc, TaskGroupDoc, TimeDoc};
use crate::wire::quantity::{self, Scale};
use crate::wire::InstanceDoc;
use std::path::{Path, PathBuf};

const PODS: &str = "openb_pod_list_default.csv";
const MIN_LIFE: i64 = 60;
const MAX_LIFE: i64 = 4 * 3600;
const GPU: &str = "nvidia.com/gpu";

fn data_dir() -> PathBuf {
    std::env::var_os("TESSERA_OPENB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/openb"))
}

/// Pod lifetimes in seconds, clamped, in file order.
fn lifetimes(dir: &Path) -> Result<Vec<i64>, String> {
    let path = dir.join(PODS);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e} (the openb trace is read in place)", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let col = |name: &str| header.iter().position(|h| h.trim() == name).ok_or_else(|| format!("{}: no column {name}", path.display()));
    let (c, d) = (col("creation_time")?, col("deletion_time")?);
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let num = |k: usize, name: &str| -> Result<i64, String> {
            f.get(k)
                .and_then(|v| v.trim().parse::<i64>().ok())
                .ok_or_else(|| format!("{} line {}, column {name}: not an integer", path.display(), i + 2))
        };
        let life = num(d, "deletion_time")? - num(c, "creation_time")?;
        out.push(life.clamp(MIN_LIFE, MAX_LIFE));
    }
    if out.is_empty() {
        return Err(format!("{}: no pods", path.display()));
    }
    Ok(out)
}

/// SplitMix64: small, seeded, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
}

fn gpu_milli(r: &crate::wire::ResourcesDoc) -> i64 {
    r.get(GPU).and_then(|q| quantity::parse(&q.text(), Scale::Milli).ok()).unwrap_or(0)
}

/// The scenario: `nodes` (64, 256 or 1024) trace nodes, arrivals for `hours`, a cycle
/// every 10 s, offered GPU load `load`, seeded by `seed`.
pub fn scenario(nodes: usize, hours: f64, load: f64, seed: u64) -> Result<ScenarioDoc, String> {
    if !(hours > 0.0 && hours <= 24.0 * 7.0) {
        return Err(format!("hours must be in (0, 168], got {hours}"));
    }
    if !(load > 0.0 && load <= 10.0) {
        return Err(format!("load must be in (0, 10], got {load}"));
    }
    let base = crate::tooling::generate::generate(&format!("openb-{nodes}"), seed)?;
    let lives = lifetimes(&data_dir())?;
    let jobs: Vec<_> = base.pod_groups.iter().filter(|g| g.tasks.len() == 1 && g.tasks[0].count > 0).cloned().collect();
    if jobs.is_empty() {
        return Err("the openb class has no pending jobs to take shapes from".into());
    }
    let cap: i64 = base.nodes.iter().map(|n| gpu_milli(&n.allocatable)).sum();
    let mean_demand = jobs.iter().map(|g| (g.tasks[0].count * gpu_milli(&g.tasks[0].requests)) as f64).sum::<f64>() / jobs.len() as f64;
    let mean_life = lives.iter().sum::<i64>() as f64 / lives.len() as f64;
    // Arrivals per second offering `load` x capacity in GPU-milli-seconds per second.
    let rate = load * cap as f64 / (mean_demand.max(1.0) * mean_life);
    let horizon = (hours * 3600.0) as i64;
    let mut rng = Rng(seed ^ 0x5EED_0F0B);
    let mut events = Vec::new();
    let mut t = 0.0f64;
    let mut i = 0usize;
    loop {
        t += -rng.unit().ln() / rate;
        if t >= horizon as f64 {
            break;
        }
        let g = &jobs[rng.below(jobs.len())];
        let life = lives[rng.below(lives.len())];
        let task = &g.tasks[0];
        let app = format!("job-{i:05}");
        let gang = g.policy.as_deref().unwrap_or("gang") == "gang";
        let pods = (0..task.count)
            .map(|k| PodSpecDoc {
                name: format!("{app}-{k}"),
                task_group: gang.then(|| "workers".to_string()),
                requests: task.requests.clone(),
                duration: Some(TimeDoc::Int(life)),
                ..Default::default()
            })
            .collect();
        let submit = SubmitDoc {
            app,
            priority: g.priority,
            task_groups: if gang {
                vec![TaskGroupDoc {
                    name: "workers".into(),
                    min_member: task.count,
                    min_resource: task.requests.clone(),
                    ..Default::default()
                }]
            } else {
                Vec::new()
            },
            placeholder_timeout_in_seconds: gang.then_some(600),
            pods,
            ..Default::default()
        };
        events.push(EventDoc { at: TimeDoc::Int(t.floor() as i64), submit: Some(submit), ..Default::default() });
        i += 1;
    }
    Ok(ScenarioDoc {
        description: Some(format!(
            "openb: {nodes} trace nodes, {hours} h of arrivals (offered GPU load {load}, seed {seed}), trace job shapes and lifetimes"
        )),
        cycle_period: Some(TimeDoc::Int(10)),
        until: Some(TimeDoc::Int(horizon)),
        instance: InstanceDoc { shared_devices: base.shared_devices.clone(), nodes: base.nodes.clone(), ..Default::default() },
        events,
    })
}
