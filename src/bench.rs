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
