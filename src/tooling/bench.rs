//! The flat-cluster benchmark: exact solver versus first-fit decreasing on generated
//! classes, measured in one run (ratios, not absolute times, are what carry over
//! between machines).

use crate::check;
use crate::model::Instance;
use crate::options::{Options, SolverKind};
use crate::tooling::compare::Contender;
use crate::tooling::generate;
use crate::wire::decision::{Decision, Status};
use std::cmp::Ordering;
use std::time::Duration;

mod profiles;
mod scale;
mod topology;
pub use scale::{best_of, run_scale, KnownAnswer, KnownAnswers, ScaleResult, ScaleSuite, RATIO_GRID, SCALE_CLASSES};
pub use topology::run_topology;

struct Row {
    class: String,
    nodes: usize,
    pending: Vec<usize>,
    exact_ms: Vec<f64>,
    ffd_ms: Vec<f64>,
    proven: usize,
    term1_proven: usize,
    /// Per seed whose term 1 was proven: milliseconds from the start of the solve to that proof.
    term1_ms: Vec<f64>,
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
    let exact = Contender::of(SolverKind::Exact);
    let ffd = Contender::of(SolverKind::Ffd);
    let cfg = Options { time_limit: Some(limit), ..Default::default() };
    let mut rows = Vec::new();
    for class in classes {
        let mut row = Row {
            class: class.clone(),
            nodes: 0,
            pending: vec![],
            exact_ms: vec![],
            ffd_ms: vec![],
            proven: 0,
            term1_proven: 0,
            term1_ms: vec![],
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
            let de = exact.decide(&inst, &cfg);
            row.exact_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = std::time::Instant::now();
            let df = ffd.decide(&inst, &cfg);
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
            let term1_ms = de.stats.term1_millis;
            if term1_proven(&de) {
                row.term1_proven += 1;
                row.term1_ms.extend(term1_ms.map(|ms| ms as f64));
            }
            row.exact_placed += placed(&de);
            row.ffd_placed += placed(&df);
            match de.objective.compare(&df.objective) {
                Ordering::Greater => row.exact_better += 1,
                Ordering::Less => row.ffd_better += 1,
                Ordering::Equal => {}
            }
            let t1 = term1_ms.map(|ms| format!(" (term 1 proven at {ms} ms)")).unwrap_or_default();
            progress(format!(
                "{class} seed {seed}: {} nodes, {} pending groups: exact {:?} {:.0} ms{t1} placed {} | ffd {:.1} ms placed {}",
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
    out.push_str("| class | nodes | pending groups (median) | exact median ms | proven optimal (terms 1-3) | term 1 proven (median ms to its proof) | ffd median ms | exact/ffd time | groups placed exact vs ffd | exact better / worse than ffd (terms 1-3) | max gap of the unfinished tier | invalid decisions |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let n = r.exact_ms.len();
        let pend: Vec<f64> = r.pending.iter().map(|&p| p as f64).collect();
        let max_gap = r.gaps.iter().cloned().fold(f64::NAN, f64::max);
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {}/{} | {}/{}{} | {:.1} | {:.0}x | {} vs {} | {} / {} | {} | {} |\n",
            r.class,
            r.nodes,
            median(&pend),
            median(&r.exact_ms),
            r.proven,
            n,
            r.term1_proven,
            n,
            if r.term1_ms.is_empty() { String::new() } else { format!(" ({:.0} ms)", median(&r.term1_ms)) },
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
fn evicts_fewer(a: &crate::wire::decision::Objective, b: &crate::wire::decision::Objective) -> bool {
    use std::collections::BTreeMap;
    let ev = |o: &crate::wire::decision::Objective| -> BTreeMap<i64, i64> {
        o.evicted_by_priority.iter().map(|r| (r.priority, r.pods)).collect()
    };
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
    let exact = Contender::of(SolverKind::Exact);
    let k8s = Contender::of(SolverKind::K8sPreempt);
    let cfg = Options { time_limit: Some(limit), ..Default::default() };
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
            let de = exact.decide(&inst, &cfg);
            row.exact_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = std::time::Instant::now();
            let dk = k8s.decide(&inst, &cfg);
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

// ---------------------------------------------------------------------------------------
// The heuristics benchmark (`--suite gap`): every solver of the registry against exact on
// generated classes; writes results.csv, summary.md and SVG plots into a directory.

/// Classes of the gap suite with their default number of seeds (200 instances in all)
/// and the default budget per solve.
pub const GAP_CLASSES: &[(&str, u64)] = &[
    ("tiny", 70),
    ("hetero-trap", 50),
    ("flat-64", 40),
    ("flat-256", 15),
    ("preempt-256", 25),
    ("tas-unconstrained", 10),
    ("tas-preferred-slices", 10),
    ("tas-queues", 10),
];

/// Default budget per solve for a class of the gap suite: 10 s for the small classes
/// (never reached), 2 s for the big ones (exact may stop there with status Feasible).
pub fn gap_default_limit(class: &str) -> Duration {
    match class {
        "tiny" | "hetero-trap" | "tas-unconstrained" | "tas-preferred-slices" | "tas-queues" => Duration::from_secs(10),
        _ => Duration::from_secs(2),
    }
}

/// Settings of one run of the gap suite.
#[derive(Clone, Debug)]
pub struct GapSuite {
    /// (class, seeds 1..=n).
    pub classes: Vec<(String, u64)>,
    /// Budget per solve for every class; `None`: [`gap_default_limit`].
    pub time_limit: Option<Duration>,
    /// Solver names; `None`: every solver of the registry.
    pub solvers: Option<Vec<String>>,
    /// The command line that ran it (written into summary.md).
    pub command: String,
}

/// What the gap suite produced.
pub struct GapResult {
    /// Per instance and solver: (class, seed, budget per solve, comparison row).
    pub rows: Vec<(String, u64, Duration, crate::tooling::compare::Row)>,
    /// The markdown written to summary.md.
    pub summary_md: String,
    /// Rows whose decision fails `check`.
    pub invalid: usize,
}

/// Flat classes measure placement only: preemption off.
fn placement_only(class: &str) -> bool {
    class.starts_with("flat-") || class.starts_with("rack-")
}

/// Runs the gap suite and writes `results.csv`, `summary.md`, `gap-distribution.svg` and
/// `time-vs-nodes.svg` into `out`. `progress(done, total, line)` is called after every
/// solve (the line names instance and solver, and says INVALID for a failing decision).
pub fn run_gap(suite: &GapSuite, out: &std::path::Path, progress: &mut dyn FnMut(usize, usize, String)) -> Result<GapResult, String> {
    use crate::tooling::compare::{self, Row};
    let solver_list: Vec<Contender> = match &suite.solvers {
        None => SolverKind::ALL.iter().map(|&k| Contender::of(k)).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                SolverKind::from_name(n)
                    .map(Contender::of)
                    .ok_or_else(|| format!("unknown solver {n:?} (available: {})", solver_names().join(", ")))
            })
            .collect::<Result<_, _>>()?,
    };
    if solver_list.is_empty() {
        return Err("no solvers".into());
    }
    for (class, _) in &suite.classes {
        if generate::describe(class).is_none() {
            return Err(format!("unknown instance class {class:?} (classes: {})", generate::classes().join(", ")));
        }
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let started = std::time::Instant::now();
    let total: usize = suite.classes.iter().map(|(_, s)| *s as usize).sum::<usize>() * solver_list.len();
    let mut done = 0;
    let mut rows: Vec<(String, u64, Duration, Row)> = Vec::new();
    let solver_names_run: Vec<String> = solver_list.iter().map(|s| s.name.clone()).collect();
    let mut pairs = profiles::PairStats::default();
    for (class, seeds) in &suite.classes {
        let limit = suite.time_limit.unwrap_or_else(|| gap_default_limit(class));
        let cfg = Options { time_limit: Some(limit), ..Default::default() };
        for seed in 1..=*seeds {
            let mut doc = generate::generate(class, seed)?;
            if placement_only(class) {
                doc.options.get_or_insert_with(Default::default).preemption = Some(false);
            }
            let name = format!("{class}/{seed}");
            let inst = Instance::from_doc(&doc).map_err(|e| format!("{name}: {e}"))?;
            let one = [(name, inst)];
            let report = compare::compare(&one, &solver_list, &cfg, &mut |_, _, r: &Row| {
                done += 1;
                let line = if r.valid {
                    format!("{} {}: {:?} placed {} in {:.1} ms", r.instance, r.solver, r.status, r.placed, r.millis)
                } else {
                    format!("{} {}: INVALID decision: {}", r.instance, r.solver, r.violations.join("; "))
                };
                progress(done, total, line);
            });
            pairs.add(class, &one[0].1, &solver_names_run, &report.rows);
            rows.extend(report.rows.into_iter().map(|r| (class.clone(), seed, limit, r)));
        }
    }

    // results.csv
    let mut csv = compare::csv_record(&["class", "seed", "time_limit_ms"]) + ",";
    csv.push_str(&compare::csv_record(compare::CSV_HEADER));
    csv.push('\n');
    for (class, seed, limit, r) in &rows {
        let mut f = vec![class.clone(), seed.to_string(), limit.as_millis().to_string()];
        f.extend(compare::csv_fields(r));
        csv.push_str(&compare::csv_record(&f));
        csv.push('\n');
    }
    write_file(&out.join("results.csv"), &csv)?;

    // Plots.
    let names: Vec<String> = solver_list.iter().map(|s| s.name.clone()).collect();
    let gaps: Vec<(String, Vec<f64>)> = names
        .iter()
        .filter(|n| n.as_str() != "exact")
        .map(|n| (n.clone(), rows.iter().filter(|(_, _, _, r)| &r.solver == n).filter_map(|(_, _, _, r)| r.placed_gap).collect()))
        .collect();
    let n_instances = rows.len() / solver_list.len();
    crate::tooling::plot::gap_distribution(
        &out.join("gap-distribution.svg"),
        &format!("Placed-groups gap to exact per heuristic ({n_instances} instances)"),
        &gaps,
    )?;
    let times: Vec<(String, Vec<(f64, f64)>)> = names
        .iter()
        .map(|n| (n.clone(), rows.iter().filter(|(_, _, _, r)| &r.solver == n).map(|(_, _, _, r)| (r.nodes as f64, r.millis)).collect()))
        .collect();
    crate::tooling::plot::time_vs_nodes(&out.join("time-vs-nodes.svg"), "Solve time versus cluster size", &times)?;

    // summary.md
    let all_rows: Vec<Row> = rows.iter().map(|(_, _, _, r)| r.clone()).collect();
    let invalid = all_rows.iter().filter(|r| !r.valid).count();
    let mut md = String::from("# Heuristics versus exact: the gap benchmark\n\n");
    md.push_str(&format!("Made by:\n\n```\n{}\n```\n\n", suite.command));
    md.push_str(&format!(
        "{n_instances} generated instances, {} solvers ({}), one solve at a time on one machine ({} hardware threads); \
every decision validated with `tessera check`. Flat classes run with `options.preemption: false` (placement only). \
The budget per solve applies to every solver; only exact ever reaches it (it then returns its best decision with status Feasible, \
and the comparison is against that decision). Total run time: {:.0} s.\n\n",
        names.len(),
        names.join(", "),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        started.elapsed().as_secs_f64()
    ));
    md.push_str("| class | instances (seeds 1..n) | nodes | pending groups | budget per solve | exact proven optimal |\n|---|---|---|---|---|---|\n");
    for (class, seeds) in &suite.classes {
        let rs: Vec<&Row> = all_rows.iter().filter(|r| r.instance.starts_with(&format!("{class}/"))).collect();
        let ex: Vec<&&Row> = rs.iter().filter(|r| r.solver == "exact").collect();
        let nodes = minmax(rs.iter().map(|r| r.nodes));
        let pend = minmax(rs.iter().map(|r| r.pending_groups));
        let limit = suite.time_limit.unwrap_or_else(|| gap_default_limit(class));
        md.push_str(&format!(
            "| {class}{} | {seeds} | {nodes} | {pend} | {:?} | {} |\n",
            if placement_only(class) { " (no preemption)" } else { "" },
            limit,
            if ex.is_empty() {
                "-".to_string()
            } else {
                format!("{}/{}", ex.iter().filter(|r| r.status == Status::Optimal).count(), ex.len())
            }
        ));
    }
    if invalid > 0 {
        md.push_str(&format!("\n**!! {invalid} decision(s) FAIL `tessera check`:**\n\n"));
        for r in all_rows.iter().filter(|r| !r.valid) {
            md.push_str(&format!("- `{}` / `{}`: {}\n", r.instance, r.solver, r.violations.join("; ").replace('|', "\\|")));
        }
    }
    md.push_str("\n## All classes\n\n");
    let (h, cells) = compare::summary_cells(&compare::summarize(&all_rows));
    md.push_str(&compare::markdown_table(&h, &cells));
    md.push_str("\n![placed-groups gap per heuristic](gap-distribution.svg)\n\n![solve time versus cluster size](time-vs-nodes.svg)\n");
    md.push_str(&pairs.markdown());
    md.push_str(&profiles::solvers_markdown(&solver_names_run));
    md.push_str("\n## Per class\n");
    for (class, _) in &suite.classes {
        let rs: Vec<Row> = all_rows.iter().filter(|r| r.instance.starts_with(&format!("{class}/"))).cloned().collect();
        md.push_str(&format!("\n### {class}\n\n{}\n\n", generate::describe(class).unwrap_or("")));
        let (h, cells) = compare::summary_cells(&compare::summarize(&rs));
        md.push_str(&compare::markdown_table(&h, &cells));
    }
    md.push_str(
        "\n## Definitions\n\n\
- **= / worse / better than exact**: terms 1-3 of the objective compared lexicographically (groups placed per priority level, \
highest first; then pods evicted per level, fewer is better; then extra pods). *Better than exact* happens only where exact \
stopped at its budget without proving optimality.\n\
- **placed gap**: `(exact placed - placed) / max(exact placed, 1)`, groups counted over all priority levels, per instance; \
mean and max over the class. It ignores priorities and victims (the verdict carries those), so it can be negative.\n\
- **groups placed**: placed / pending summed over the instances. **victims**: pods evicted, summed.\n\
- **median ms / max ms**: wall-clock time of the solve (the check is not timed).\n\
- Per-row data: `results.csv` (one row per instance and solver; `vs_exact` names the first term where a solver differs from \
exact, e.g. `worse: placed@1000 -2`).\n",
    );
    write_file(&out.join("summary.md"), &md)?;
    Ok(GapResult { rows, summary_md: md, invalid })
}

fn minmax(it: impl Iterator<Item = usize>) -> String {
    let v: Vec<usize> = it.collect();
    match (v.iter().min(), v.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => "-".into(),
    }
}

fn solver_names() -> Vec<&'static str> {
    SolverKind::ALL.iter().map(|s| s.name()).collect()
}

fn write_file(path: &std::path::Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Whether the exact solver settled term 1 (groups placed per priority level).
fn term1_proven(d: &Decision) -> bool {
    d.stats.terms_proven.as_ref().is_some_and(|t| t.contains(&1))
}
