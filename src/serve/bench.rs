//! Load benchmark of the server (`tessera bench --suite serve`): the server runs as a
//! child process (`tessera serve` on a loopback port), N client threads post a mix of
//! small and 256-node instances to `/v1/solve` for a fixed time, and every answer is
//! kept and validated afterwards with [`crate::check()`]. Reports requests per second,
//! latency percentiles, lost and malformed answers, invalid decisions, `503`s, and the
//! server's peak memory (`VmHWM` of its process).

use super::client::Client;
use crate::wire::decision::Decision;
use crate::Instance;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadBench {
    /// The `tessera` executable to start as the server.
    pub exe: PathBuf,
    /// Extra arguments to `tessera serve`.
    pub serve_args: Vec<String>,
    /// How long the clients send.
    pub duration: Duration,
    /// Concurrent clients.
    pub clients: usize,
    /// Small instances: (class, seeds).
    pub small: Vec<(String, u64)>,
    /// Large instances: (class, seeds).
    pub large: Vec<(String, u64)>,
    /// One request in `large_every` uses a large instance.
    pub large_every: u64,
    /// `timeLimit` of small and of large solves.
    pub time_limits: (String, String),
    /// `solver` of every request (`None`: the server's default, exact).
    pub solver: Option<String>,
}

impl Default for LoadBench {
    fn default() -> LoadBench {
        LoadBench {
            exe: std::env::current_exe().unwrap_or_else(|_| "tessera".into()),
            serve_args: Vec::new(),
            duration: Duration::from_secs(60),
            clients: 32,
            small: vec![("tiny".into(), 4), ("flat-64".into(), 4)],
            large: vec![("flat-256".into(), 4)],
            large_every: 4,
            time_limits: ("1s".into(), "2s".into()),
            solver: None,
        }
    }
}

struct Sample {
    instance: usize,
    large: bool,
    millis: f64,
    body: Vec<u8>,
}

#[derive(Default)]
struct Tally {
    samples: Vec<Sample>,
    rejected: u64,
    lost: u64,
    errors: Vec<String>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn vm_kib(pid: u32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the benchmark; `progress` gets a line now and then. Returns the Markdown report.
pub fn run_load(b: &LoadBench, progress: &mut dyn FnMut(String)) -> Result<String, String> {
    // Instances, as request bodies and validated models.
    let mut insts: Vec<(String, bool, Arc<Vec<u8>>, Instance)> = Vec::new();
    for (list, large) in [(&b.small, false), (&b.large, true)] {
        for (class, seeds) in list {
            for seed in 1..=*seeds {
                let doc = crate::tooling::generate::generate(class, seed)?;
                let body = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
                let inst = Instance::from_doc(&doc).map_err(|e| e.to_string())?;
                insts.push((format!("{class}/{seed}"), large, Arc::new(body), inst));
            }
        }
    }
    let small: Vec<usize> = (0..insts.len()).filter(|&i| !insts[i].1).collect();
    let large: Vec<usize> = (0..insts.len()).filter(|&i| insts[i].1).collect();
    if small.is_empty() || large.is_empty() {
        return Err("the benchmark needs small and large instances".into());
    }
    // The server.
    let mut child = Command::new(&b.exe)
        .arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(&b.serve_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", b.exe.display()))?;
    let pid = child.id();
    let first_line = |child: &mut std::process::Child| -> Result<SocketAddr, String> {
        let mut line = String::new();
        BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line).map_err(|e| e.to_string())?;
        line.trim().rsplit("//").next().unwrap_or("").parse().map_err(|_| format!("unexpected first line of tessera serve: {line:?}"))
    };
    // A server that did not come up is not left behind.
    let addr = match first_line(&mut child) {
        Ok(a) => a,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    progress(format!("server pid {pid} on {addr}; {} clients for {:?}", b.clients, b.duration));

    let deadline = Instant::now() + b.duration;
    let counter = Arc::new(AtomicU64::new(0));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let peak_rss = Arc::new(AtomicU64::new(0));
    let monitor = {
        let (stop, peak) = (stop.clone(), peak_rss.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(k) = vm_kib(pid, "VmRSS:") {
                    peak.fetch_max(k, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let bodies: Arc<Vec<(bool, Arc<Vec<u8>>)>> = Arc::new(insts.iter().map(|i| (i.1, i.2.clone())).collect());
    let (small, large) = (Arc::new(small), Arc::new(large));
    let mut threads = Vec::new();
    let started = Instant::now();
    for _ in 0..b.clients {
        let (counter, tally, bodies, small, large) = (counter.clone(), tally.clone(), bodies.clone(), small.clone(), large.clone());
        let (every, limits) = (b.large_every.max(1), b.time_limits.clone());
        let solver = b.solver.as_ref().map(|s| format!("&solver={s}")).unwrap_or_default();
        threads.push(std::thread::spawn(move || {
            let mut client = Client::new(addr).with_timeout(Duration::from_secs(120));
            while Instant::now() < deadline {
                let k = counter.fetch_add(1, Ordering::Relaxed);
                let big = k % every == every - 1;
                let idx = if big { large[(k / every) as usize % large.len()] } else { small[k as usize % small.len()] };
                let path = format!("/v1/solve?timeLimit={}{solver}", if big { &limits.1 } else { &limits.0 });
                loop {
                    let t = Instant::now();
                    match client.post_json(&path, &bodies[idx].1) {
                        Ok(r) if r.status == 200 => {
                            let millis = t.elapsed().as_secs_f64() * 1e3;
                            tally.lock().unwrap_or_else(|e| e.into_inner()).samples.push(Sample {
                                instance: idx,
                                large: big,
                                millis,
                                body: r.body,
                            });
                        }
                        Ok(r) if r.status == 503 => {
                            tally.lock().unwrap_or_else(|e| e.into_inner()).rejected += 1;
                            let s: u64 = r.header("retry-after").and_then(|v| v.parse().ok()).unwrap_or(1);
                            std::thread::sleep(Duration::from_secs(s.min(5)));
                            continue;
                        }
                        Ok(r) => tally.lock().unwrap_or_else(|e| e.into_inner()).errors.push(format!("{}: {}", r.status, r.text())),
                        Err(e) => {
                            let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
                            t.lost += 1;
                            t.errors.push(e.to_string());
                        }
                    }
                    break;
                }
            }
        }));
    }
    for t in threads {
        let _ = t.join();
    }
    let wall = started.elapsed().as_secs_f64();
    let hwm = vm_kib(pid, "VmHWM:");
    stop.store(true, Ordering::Relaxed);
    let _ = monitor.join();
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let _ = child.wait();

    // Every answer is a decision, and every decision passes the validator.
    let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
    progress(format!("{} answers; validating", tally.samples.len()));
    let (mut malformed, mut invalid) = (0u64, 0u64);
    for s in &tally.samples {
        match serde_json::from_slice::<Decision>(&s.body) {
            Err(_) => malformed += 1,
            Ok(d) => {
                if !crate::check(&insts[s.instance].3, &d).is_valid() {
                    invalid += 1;
                }
            }
        }
    }
    let lat = |f: &dyn Fn(&Sample) -> bool| {
        let mut v: Vec<f64> = tally.samples.iter().filter(|s| f(s)).map(|s| s.millis).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (all, sm, lg) = (lat(&|_| true), lat(&|s| !s.large), lat(&|s| s.large));
    let mut out = String::new();
    out.push_str(&format!(
        "| clients | duration | answers | req/s | p50 ms | p99 ms | small p50/p99 ms | 256-node p50/p99 ms | 503 (retried) | lost | malformed | invalid | errors | server peak RSS |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n| {} | {:.0} s | {} | {:.1} | {:.0} | {:.0} | {:.0} / {:.0} ({}) | {:.0} / {:.0} ({}) | {} | {} | {} | {} | {} | {} |\n",
        b.clients,
        wall,
        all.len(),
        all.len() as f64 / wall,
        percentile(&all, 50.0),
        percentile(&all, 99.0),
        percentile(&sm, 50.0),
        percentile(&sm, 99.0),
        sm.len(),
        percentile(&lg, 50.0),
        percentile(&lg, 99.0),
        lg.len(),
        tally.rejected,
        tally.lost,
        malformed,
        invalid,
        tally.errors.len(),
        match (hwm, peak_rss.load(Ordering::Relaxed)) {
            (Some(h), _) => format!("{:.0} MiB (VmHWM)", h as f64 / 1024.0),
            (None, r) => format!("{:.0} MiB (sampled RSS)", r as f64 / 1024.0),
        },
    ));
    out.push_str(&format!(
        "\nSolver {}. Instances: {} small ({}), {} large ({}), one request in {} large; timeLimit {} small, {} large.\n",
        b.solver.as_deref().unwrap_or("exact"),
        insts.iter().filter(|i| !i.1).count(),
        b.small.iter().map(|(c, n)| format!("{c} x{n}")).collect::<Vec<_>>().join(", "),
        insts.iter().filter(|i| i.1).count(),
        b.large.iter().map(|(c, n)| format!("{c} x{n}")).collect::<Vec<_>>().join(", "),
        b.large_every,
        b.time_limits.0,
        b.time_limits.1
    ));
    for e in tally.errors.iter().take(5) {
        out.push_str(&format!("- error: {e}\n"));
    }
    if tally.lost + malformed + invalid > 0 || !tally.errors.is_empty() {
        return Err(format!("answers lost, malformed, invalid or failed:\n{out}"));
    }
    Ok(out)
}
