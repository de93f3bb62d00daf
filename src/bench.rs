//! The flat-cluster benchmark: exact solver versus first-fit decreasing on generated
//! classes, measured in one run (ratios, not absolute times, are what carry over
//! between machines).

use crate::check;
use crate::decision::{Decision, Status};
use crate::generate;
use crate::model::Instance;
use crate::solve::{solvers, SolveConfig};
use std::cmp::Ordering;
use std::time::Duration;

struct Row {
    class: String,
    nodes: usize,
    pending: Vec<usize>,
    exact_ms: Vec<f64>,
    ffd_ms: Vec<f64>,
    proven: usize,
    exact_placed: i64,
    ffd_placed: i64,
    exact_better: usize,
    ffd_better: usize,
    gaps: Vec<f64>,
    invalid: usize,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    if s.is_empty() {
        return f64::NAN;
    }
    if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    }
}

fn placed(d: &Decision) -> i64 {
    d.objective.placed_by_priority.iter().map(|r| r.placed).sum()
}

/// Runs the benchmark; `progress` gets one line per solved instance.
pub fn run(classes: &[String], seeds: u64, limit: Duration, progress: &mut dyn FnMut(String)) -> Result<String, String> {
    let exact = solvers::by_name("exact").unwrap();
    let ffd = solvers::by_name("ffd").unwrap();
    let cfg = SolveConfig { time_limit: Some(limit), ..Default::default() };
    let mut rows = Vec::new();
    for class in classes {
        let mut row = Row {
            class: class.clone(),
            nodes: 0,
            pending: vec![],
            exact_ms: vec![],
            ffd_ms: vec![],
            proven: 0,
            exact_placed: 0,
            ffd_placed: 0,
            exact_better: 0,
            ffd_better: 0,
            gaps: vec![],
            invalid: 0,
        };
        for seed in 1..=seeds {
            let mut doc = generate::generate(class, seed)?;
            // This suite measures placement; victims are measured by the preemption suite.
            doc.options.get_or_insert_with(Default::default).preemption = Some(false);
            let inst = Instance::from_doc(&doc).map_err(|e| format!("{class} seed {seed}: {e}"))?;
            row.nodes = inst.nodes.len();
            row.pending.push(inst.pending_groups().count());
            let t = std::time::Instant::now();
            let de = exact.solve(&inst, &cfg);
            row.exact_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = std::time::Instant::now();
            let df = ffd.solve(&inst, &cfg);
            row.ffd_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            for d in [&de, &df] {
                if !check::check(&inst, d).violations.is_empty() {
                    row.invalid += 1;
                }
            }
            if de.status == Status::Optimal {
                row.proven += 1;
            } else {
                row.gaps.push(de.gap);
            }
            row.exact_placed += placed(&de);
            row.ffd_placed += placed(&df);
            match de.objective.compare(&df.objective) {
                Ordering::Greater => row.exact_better += 1,
                Ordering::Less => row.ffd_better += 1,
                Ordering::Equal => {}
            }
            progress(format!(
                "{class} seed {seed}: {} nodes, {} pending groups: exact {:?} {:.0} ms placed {} | ffd {:.1} ms placed {}",
                row.nodes,
                row.pending.last().unwrap(),
                de.status,
                row.exact_ms.last().unwrap(),
                placed(&de),
                row.ffd_ms.last().unwrap(),
                placed(&df)
            ));
        }
        rows.push(row);
    }
    let mut out = String::new();
    out.push_str(&format!("budget per solve: {:?}\n\n", limit));
    out.push_str("| class | nodes | pending groups (median) | exact median ms | proven optimal | ffd median ms | exact/ffd time | groups placed exact vs ffd | exact better / worse than ffd (terms 1-3) | max gap when not proven | invalid decisions |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let n = r.exact_ms.len();
        let pend: Vec<f64> = r.pending.iter().map(|&p| p as f64).collect();
        let max_gap = r.gaps.iter().cloned().fold(f64::NAN, f64::max);
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {}/{} | {:.1} | {:.0}x | {} vs {} | {} / {} | {} | {} |\n",
            r.class,
            r.nodes,
            median(&pend),
            median(&r.exact_ms),
            r.proven,
            n,
            median(&r.ffd_ms),
            median(&r.exact_ms) / median(&r.ffd_ms).max(1e-3),
            r.exact_placed,
            r.ffd_placed,
            r.exact_better,
            r.ffd_better,
            if max_gap.is_nan() { "-".to_string() } else { format!("{:.2}%", max_gap * 100.0) },
            r.invalid
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// The preemption benchmark: exact versus the Kubernetes-style `k8s-preempt` baseline.

/// Term 2 alone: `a` evicts fewer pods than `b` at the highest victim level where they
/// differ.
fn evicts_fewer(a: &crate::decision::Objective, b: &crate::decision::Objective) -> bool {
    use std::collections::BTreeMap;
    let ev = |o: &crate::decision::Objective| -> BTreeMap<i64, i64> { o.evicted_by_priority.iter().map(|r| (r.priority, r.pods)).collect() };
    let (x, y) = (ev(a), ev(b));
    let mut levels: Vec<i64> = x.keys().chain(y.keys()).copied().collect();
    levels.sort_unstable_by(|p, q| q.cmp(p));
    levels.dedup();
    for l in levels {
        let (i, j) = (x.get(&l).copied().unwrap_or(0), y.get(&l).copied().unwrap_or(0));
        if i != j {
            return i < j;
        }
    }
    false
}

/// Victims per priority level, highest first, e.g. `100: 3, 0: 12` (`-` for none).
fn victim_levels(v: &std::collections::BTreeMap<i64, i64>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.iter().rev().map(|(p, c)| format!("{p}: {c}")).collect::<Vec<_>>().join(", ")
}

struct PreemptRow {
    class: String,
    nodes: usize,
    pending: Vec<f64>,
    exact_ms: Vec<f64>,
    k8s_ms: Vec<f64>,
    proven: usize,
    exact_placed: i64,
    k8s_placed: i64,
    exact_victims: std::collections::BTreeMap<i64, i64>,
    k8s_victims: std::collections::BTreeMap<i64, i64>,
    fewer_and_at_least: usize,
    exact_better: usize,
    k8s_better: usize,
    invalid: usize,
}

/// Runs the preemption benchmark (exact vs `k8s-preempt`); `progress` gets one line per
/// solved instance. Per class: median times, groups placed, victims per priority level
/// (summed over seeds), how often exact evicts fewer pods (term 2) while placing at least
/// as many groups, terms 1-3 compared, proven-optimal rate and invalid decisions.
pub fn run_preemption(classes: &[String], seeds: u64, limit: Duration, progress: &mut dyn FnMut(String)) -> Result<String, String> {
    let exact = solvers::by_name("exact").ok_or("no exact solver")?;
    let k8s = solvers::by_name("k8s-preempt").ok_or("no k8s-preempt solver")?;
    let cfg = SolveConfig { time_limit: Some(limit), ..Default::default() };
    let mut rows = Vec::new();
    for class in classes {
        let mut row = PreemptRow {
            class: class.clone(),
            nodes: 0,
            pending: vec![],
            exact_ms: vec![],
            k8s_ms: vec![],
            proven: 0,
            exact_placed: 0,
            k8s_placed: 0,
            exact_victims: Default::default(),
            k8s_victims: Default::default(),
            fewer_and_at_least: 0,
            exact_better: 0,
            k8s_better: 0,
            invalid: 0,
        };
        for seed in 1..=seeds {
            let doc = generate::generate(class, seed)?;
            let inst = Instance::from_doc(&doc).map_err(|e| format!("{class} seed {seed}: {e}"))?;
            row.nodes = inst.nodes.len();
            row.pending.push(inst.pending_groups().count() as f64);
            let t = std::time::Instant::now();
            let de = exact.solve(&inst, &cfg);
            row.exact_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = std::time::Instant::now();
            let dk = k8s.solve(&inst, &cfg);
            row.k8s_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let mut bad = Vec::new();
            for (name, d) in [("exact", &de), ("k8s-preempt", &dk)] {
                let v = check::check(&inst, d).violations;
                if !v.is_empty() {
                    row.invalid += 1;
                    bad.push(format!("{name}: {} violation(s), first: {}", v.len(), v[0].message));
                }
            }
            if de.status == Status::Optimal {
                row.proven += 1;
            }
            let (pe, pk) = (placed(&de), placed(&dk));
            row.exact_placed += pe;
            row.k8s_placed += pk;
            for r in &de.objective.evicted_by_priority {
                *row.exact_victims.entry(r.priority).or_default() += r.pods;
            }
            for r in &dk.objective.evicted_by_priority {
                *row.k8s_victims.entry(r.priority).or_default() += r.pods;
            }
            if pe >= pk && evicts_fewer(&de.objective, &dk.objective) {
                row.fewer_and_at_least += 1;
            }
            match de.objective.compare(&dk.objective) {
                Ordering::Greater => row.exact_better += 1,
                Ordering::Less => row.k8s_better += 1,
                Ordering::Equal => {}
            }
            let evicted = |d: &Decision| d.objective.evicted_by_priority.iter().map(|r| r.pods).sum::<i64>();
            progress(format!(
                "{class} seed {seed}: {} nodes, {} pending groups: exact {:?} {:.0} ms placed {} evicted {} | k8s-preempt {:.1} ms placed {} evicted {}{}",
                row.nodes,
                row.pending.last().unwrap(),
                de.status,
                row.exact_ms.last().unwrap(),
                pe,
                evicted(&de),
                row.k8s_ms.last().unwrap(),
                pk,
                evicted(&dk),
                if bad.is_empty() { String::new() } else { format!(" | INVALID: {}", bad.join("; ")) }
            ));
        }
        rows.push(row);
    }
    let mut out = String::new();
    out.push_str(&format!("budget per solve: {:?}\n\n", limit));
    out.push_str("| class | nodes | pending groups (median) | exact median ms | k8s-preempt median ms | groups placed exact vs k8s | victims by priority, exact | victims by priority, k8s-preempt | exact evicts fewer (term 2) and places >= | exact better / worse (terms 1-3) | proven optimal | invalid decisions |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let n = r.exact_ms.len();
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {:.1} | {} vs {} | {} | {} | {}/{} | {} / {} | {}/{} | {} |\n",
            r.class,
            r.nodes,
            median(&r.pending),
            median(&r.exact_ms),
            median(&r.k8s_ms),
            r.exact_placed,
            r.k8s_placed,
            victim_levels(&r.exact_victims),
            victim_levels(&r.k8s_victims),
            r.fewer_and_at_least,
            n,
            r.exact_better,
            r.k8s_better,
            r.proven,
            n,
            r.invalid
        ));
    }
    Ok(out)
}
