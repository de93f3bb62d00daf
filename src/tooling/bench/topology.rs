//! The topology benchmark (`tessera bench --suite topology`): the exact solver on the
//! large topology classes within the budget, and the candidate-evaluation phase timed
//! with 1 and 2 rayon threads on the same input in the same run (a ratio, which carries
//! over between machines; absolute times do not).

use super::median;
use crate::check;
use crate::exact::diagnose::time_screening;
use crate::model::Instance;
use crate::options::{Options, SolverKind};
use crate::tooling::compare::Contender;
use crate::tooling::generate;
use crate::wire::decision::{Decision, Status};
use std::time::Duration;

fn placed(d: &Decision) -> i64 {
    d.objective.placed_by_priority.iter().map(|r| r.placed).sum()
}

/// Repetitions of the screening per thread count (alternating 1, 2, 1, 2, ...; the
/// median of each is reported).
const SCREEN_REPS: usize = 3;

/// Runs the topology suite on `seeds` seeds of each class with budget `limit`, reporting each
/// row to `progress`; returns the markdown table and per-class summary.
pub fn run_topology(classes: &[String], seeds: u64, limit: Duration, progress: &mut dyn FnMut(String)) -> Result<String, String> {
    let exact = Contender::of(SolverKind::Exact);
    let ffd = Contender::of(SolverKind::Ffd);
    let cfg = Options { time_limit: Some(limit), ..Default::default() };
    let mut out = format!("budget per solve: {limit:?}\n\n");
    out.push_str("| class | seed | nodes | pending | cycle ms | status | terms proven | gap (weighted term 1) | placed / master bound | gap in groups | ffd placed | valid | screening 1 thread ms | 2 threads ms | speedup | cores used by 2 threads |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let mut summary = String::new();
    for class in classes {
        let (mut times, mut proven, mut under1, mut speedups, mut invalid) = (Vec::new(), 0, 0, Vec::new(), 0);
        for seed in 1..=seeds {
            let doc = generate::generate(class, seed)?;
            let inst = Instance::from_doc(&doc).map_err(|e| format!("{class} seed {seed}: {e}"))?;
            // Candidate evaluation alone, 1 vs 2 threads, same input; verdicts must agree.
            let (mut one, mut two) = (Vec::new(), Vec::new());
            let mut cores2 = Vec::new();
            let mut reference = None;
            for _ in 0..SCREEN_REPS {
                for (threads, acc) in [(1, &mut one), (2, &mut two)] {
                    let (ms, cores, verdicts) = time_screening(&inst, threads)?;
                    acc.push(ms);
                    if threads == 2 {
                        cores2.extend(cores);
                    }
                    match &reference {
                        None => reference = Some(verdicts),
                        Some(r) if *r != verdicts => return Err(format!("{class} seed {seed}: screening differs with {threads} threads")),
                        _ => {}
                    }
                }
            }
            let (m1, m2) = (median(&one), median(&two));
            speedups.push(m1 / m2);
            let t = std::time::Instant::now();
            let d = exact.decide(&inst, &cfg);
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            times.push(ms);
            let df = ffd.decide(&inst, &cfg);
            let ok = check::check(&inst, &d).violations.is_empty() && check::check(&inst, &df).violations.is_empty();
            invalid += !ok as usize;
            proven += (d.status == Status::Optimal) as usize;
            let bound: Option<i64> = d.stats.master_bound.as_ref().map(|b| b.iter().map(|r| r.placed).sum());
            // The weighted gap hides a shortfall at the lowest level behind the weights of
            // the levels above; the gap in groups (all levels counted alike) does not.
            let group_gap = bound.map(|b| (b - placed(&d)) as f64 / b.max(1) as f64);
            under1 += (d.status == Status::Optimal || (d.gap < 0.01 && group_gap.is_some_and(|g| g < 0.01))) as usize;
            let bound = bound.map_or("-".to_string(), |b| b.to_string());
            let group_gap = group_gap.map_or("-".to_string(), |g| format!("{:.1} %", g * 100.0));
            let terms = d.stats.terms_proven.as_ref().map(|t| format!("{t:?}").replace(' ', "")).unwrap_or_default();
            let line = format!(
                "| {class} | {seed} | {} | {} | {ms:.0} | {:?} | {terms} | {:.2e} | {} / {bound} | {group_gap} | {} | {} | {m1:.0} | {m2:.0} | {:.2}x | {:.2} |",
                inst.nodes.len(),
                inst.pending_groups().count(),
                d.status,
                d.gap,
                placed(&d),
                placed(&df),
                if ok { "yes" } else { "NO" },
                m1 / m2,
                median(&cores2)
            );
            progress(line.clone());
            out.push_str(&line);
            out.push('\n');
        }
        summary.push_str(&format!(
            "{class}: median cycle {:.0} ms; proven optimal (terms 1-3) {proven}/{seeds}; proven or gap < 1 % (weighted and in groups): {under1}/{seeds}; screening speedup 2 vs 1 threads: median {:.2}x; invalid decisions: {invalid}\n",
            median(&times),
            median(&speedups)
        ));
    }
    out.push('\n');
    out.push_str(&summary);
    Ok(out)
}
