//! Parts of the gap suite's summary about the baselines themselves: which upstream
//! behaviour and version each one is, and where the two profiles of one scheduler decide
//! differently.

use crate::model::Instance;
use crate::options::{Options, SolverKind};
use crate::tooling::compare::Row;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Pairs of profiles of one scheduler whose decisions the summary compares.
pub const PAIRS: &[(&str, &str)] = &[("kueue", "kueue-bestfit"), ("yunikorn-fair", "yunikorn-binpacking")];

/// Per (pair, class): instances, decisions that differ, and terms 1-3 (first better /
/// second better), plus groups placed by each.
#[derive(Clone, Debug, Default)]
pub struct PairCount {
    instances: usize,
    differ: usize,
    first_better: usize,
    second_better: usize,
    placed: (i64, i64),
}

/// Differences between the profiles of each pair, per class.
#[derive(Clone, Debug, Default)]
pub struct PairStats {
    counts: BTreeMap<(usize, String), PairCount>,
}

impl PairStats {
    /// Records one instance: re-decides it with both profiles of every pair in `solvers`
    /// (the baselines are deterministic and fast) to see whether the placements differ,
    /// and compares their terms 1-3 from `rows`.
    pub fn add(&mut self, class: &str, inst: &Instance, solvers: &[String], rows: &[Row]) {
        for (i, &(a, b)) in PAIRS.iter().enumerate() {
            if !solvers.iter().any(|s| s == a) || !solvers.iter().any(|s| s == b) {
                continue;
            }
            let (Some(ka), Some(kb)) = (SolverKind::from_name(a), SolverKind::from_name(b)) else { continue };
            let (Some(ra), Some(rb)) = (rows.iter().find(|r| r.solver == a), rows.iter().find(|r| r.solver == b)) else { continue };
            let da = ka.solve(inst, &Options::with_solver(ka));
            let db = kb.solve(inst, &Options::with_solver(kb));
            let c = self.counts.entry((i, class.to_string())).or_default();
            c.instances += 1;
            if da.placements != db.placements {
                c.differ += 1;
            }
            match ra.objective().compare(&rb.objective()) {
                Ordering::Greater => c.first_better += 1,
                Ordering::Less => c.second_better += 1,
                Ordering::Equal => {}
            }
            c.placed.0 += ra.placed;
            c.placed.1 += rb.placed;
        }
    }

    /// The markdown section: one table per pair, one row per class.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        for (i, &(a, b)) in PAIRS.iter().enumerate() {
            let rows: Vec<(&String, &PairCount)> = self.counts.iter().filter(|((p, _), _)| *p == i).map(|((_, c), n)| (c, n)).collect();
            if rows.is_empty() {
                continue;
            }
            md.push_str(&format!(
                "\n### `{a}` versus `{b}`\n\n| class | instances | decisions differ | {a} better (terms 1-3) | {b} better | groups placed {a} vs {b} |\n|---|---|---|---|---|---|\n"
            ));
            for (class, n) in rows {
                md.push_str(&format!(
                    "| {class} | {} | {} | {} | {} | {} vs {} |\n",
                    n.instances, n.differ, n.first_better, n.second_better, n.placed.0, n.placed.1
                ));
            }
        }
        if md.is_empty() {
            return md;
        }
        format!("\n## Profiles of one scheduler compared\n\nThe same instances decided by both profiles (a decision differs when any group's pods or nodes differ).\n{md}")
    }
}

/// The markdown section naming what each solver of the run is (its `describe()`).
pub fn solvers_markdown(solvers: &[String]) -> String {
    let mut md = String::from("\n## The solvers\n\nWhat each solver is, and which upstream behaviour and version a baseline ports:\n\n");
    for s in solvers {
        let about = SolverKind::from_name(s).map(|k| k.describe()).unwrap_or("");
        md.push_str(&format!("- `{s}`: {about}\n"));
    }
    md
}
