//! Side-by-side comparison of solvers on the same instances (`tessera compare`).
//!
//! Every solver decides every instance under the same [`Options`]; every decision is
//! validated with [`check::check`], and the numbers reported (groups placed per priority
//! level, victims per level, extra pods) are the ones the validator recomputes from the
//! placements, not the ones the solver claims. A decision that fails the check is kept in
//! the report and flagged (`check` = `FAIL`), never dropped.
//!
//! ## The gap to the exact solver
//!
//! When the solver list contains `exact`, every other row of the same instance is compared
//! with the exact row on terms 1-3 of the objective (`Objective::compare`, lexicographic):
//!
//! - **verdict** (`vs exact`): `=` when terms 1-3 are equal; otherwise the *first* term, in
//!   lexicographic order, where the row differs from exact, and by how much:
//!   `worse: placed@1000 -2` (two groups fewer at priority 1000, the highest level where
//!   it loses), `worse: victims@100 +3` (same groups placed, three more pods of priority
//!   100 evicted), `worse: extra -4` (same groups and victims, four fewer extra pods).
//!   `better: ...` is possible only when exact was stopped by its time budget (status
//!   `Feasible`) and is reported as such.
//! - **placed-groups gap** (a scalar, over all priority levels):
//!   `(exact placed − placed) / exact placed`, groups counted over all levels; 0 when both
//!   place nothing, and `(exact placed − placed) / 1` when exact places nothing. It is 0 for
//!   the exact row itself, positive when the row places fewer groups, negative when it places
//!   more (possible when a heuristic places more low-priority groups while losing at a
//!   higher level, or when exact was not proven optimal). It ignores priorities and victims:
//!   the verdict carries those.

use crate::check;
use crate::model::Instance;
use crate::options::{Options, SolverKind};
use crate::wire::decision::{Decision, EvictedRow, ExtraRow, Objective, PlacedRow, Status};
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::Instant;

/// How a row compares with the exact solver's row of the same instance (terms 1-3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "verdict")]
pub enum Verdict {
    /// Terms 1-3 equal.
    Equal,
    /// Worse than exact; `term` names the first differing term, `detail` says by how much.
    Worse {
        /// First differing term: `placed`, `victims` or `extra`.
        term: String,
        /// The level and difference, e.g. `placed@1000 -2`.
        detail: String,
    },
    /// Better than exact (exact did not prove optimality within its budget).
    Better {
        /// First differing term: `placed`, `victims` or `extra`.
        term: String,
        /// The level and difference, e.g. `placed@1000 -2`.
        detail: String,
    },
}

impl Verdict {
    /// `=`, `worse: placed@1000 -2`, `better: victims@0 -3`.
    pub fn short(&self) -> String {
        match self {
            Verdict::Equal => "=".into(),
            Verdict::Worse { detail, .. } => format!("worse: {detail}"),
            Verdict::Better { detail, .. } => format!("better: {detail}"),
        }
    }
}

/// Per-level cells joined by spaces, or `-` when there are none.
fn level_list(cells: impl Iterator<Item = String>) -> String {
    let cells: Vec<String> = cells.collect();
    if cells.is_empty() {
        "-".into()
    } else {
        cells.join(" ")
    }
}

/// One solver on one instance.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// Name of the instance (file name or `class/seed`).
    pub instance: String,
    /// Nodes of the instance.
    pub nodes: usize,
    /// Pending groups of the instance.
    pub pending_groups: usize,
    /// Solver name (`SolverKind::name`).
    pub solver: String,
    /// `status` of the decision.
    pub status: Status,
    /// Groups placed / pending per priority level, highest first (recomputed by `check`).
    pub placed_by_priority: Vec<PlacedRow>,
    /// Pods evicted per priority level, highest first (recomputed by `check`).
    pub evicted_by_priority: Vec<EvictedRow>,
    /// Pods placed beyond the minimums, in total (recomputed by `check`).
    pub extra_pods: i64,
    /// Extra pods per level of term 1, highest first (recomputed by `check`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_by_priority: Vec<ExtraRow>,
    /// Pending groups placed, all levels together.
    pub placed: i64,
    /// Pods evicted, all levels together.
    pub victims: i64,
    /// Wall-clock time of `solve`, milliseconds (the check is not timed).
    pub millis: f64,
    /// The decision passes `check::check`.
    pub valid: bool,
    /// Violations found by `check` (all of them; empty when valid).
    pub violations: Vec<String>,
    /// Gap reported by the solver itself (relative MIP gap of the exact solver).
    pub solver_gap: f64,
    /// Comparison with the exact row of the same instance; `None` without an exact row.
    pub vs_exact: Option<Verdict>,
    /// `(exact placed − placed) / max(exact placed, 1)`; `None` without an exact row.
    pub placed_gap: Option<f64>,
}

impl Row {
    /// Terms 1-3 of this row, as an [`Objective`] (to compare rows).
    pub fn objective(&self) -> Objective {
        Objective {
            placed_by_priority: self.placed_by_priority.clone(),
            evicted_by_priority: self.evicted_by_priority.clone(),
            extra_pods: self.extra_pods,
            extra_by_priority: self.extra_by_priority.clone(),
        }
    }
    /// `1000:3/4 100:5/9` (placed/pending per level, highest first; `-` without pending groups).
    pub fn placed_levels(&self) -> String {
        level_list(self.placed_by_priority.iter().map(|r| format!("{}:{}/{}", r.priority, r.placed, r.pending)))
    }
    /// `100:2 0:5` (pods evicted per level, highest first; `-` for none).
    pub fn victim_levels(&self) -> String {
        level_list(self.evicted_by_priority.iter().map(|r| format!("{}:{}", r.priority, r.pods)))
    }
    /// `1000:6 100:2` (extra pods per level, highest first; `-` without the rows).
    pub fn extra_levels(&self) -> String {
        level_list(self.extra_by_priority.iter().map(|r| format!("{}:{}", r.priority, r.pods)))
    }
    /// `8 (1000:6 100:2)`: the total, and per level when the rows are there.
    pub fn extra_text(&self) -> String {
        if self.extra_by_priority.is_empty() {
            self.extra_pods.to_string()
        } else {
            format!("{} ({})", self.extra_pods, self.extra_levels())
        }
    }
    /// `ok`, or `FAIL (n): first violation`.
    pub fn check_text(&self) -> String {
        if self.valid {
            "ok".into()
        } else {
            format!("FAIL ({}): {}", self.violations.len(), self.violations.first().map(|s| s.as_str()).unwrap_or(""))
        }
    }
    /// The verdict against exact in short form, or `-` without an exact row.
    pub fn vs_exact_text(&self) -> String {
        self.vs_exact.as_ref().map(|v| v.short()).unwrap_or_else(|| "-".into())
    }
    /// The placed-groups gap as a percentage, or `-` without an exact row.
    pub fn placed_gap_text(&self) -> String {
        self.placed_gap.map(|g| format!("{:.1}%", g * 100.0)).unwrap_or_else(|| "-".into())
    }
}

/// Per-solver aggregate over all instances of a report.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SolverSummary {
    /// Solver name.
    pub solver: String,
    /// Instances the solver decided.
    pub instances: usize,
    /// Decisions that fail `check`.
    pub invalid: usize,
    /// Decisions with status Optimal (proven; only the exact solver proves).
    pub proven: usize,
    /// Instances compared with exact (an exact row exists).
    pub compared: usize,
    /// Rows equal to exact on terms 1-3.
    pub equal_to_exact: usize,
    /// Rows worse than exact.
    pub worse_than_exact: usize,
    /// Rows better than exact.
    pub better_than_exact: usize,
    /// Mean / max placed-groups gap over the compared instances.
    pub mean_placed_gap: Option<f64>,
    /// Largest placed-groups gap over the compared instances.
    pub max_placed_gap: Option<f64>,
    /// Pending groups placed, over all instances.
    pub placed: i64,
    /// Pending groups, over all instances.
    pub pending: i64,
    /// Pods evicted, over all instances.
    pub victims: i64,
    /// Median solve time, milliseconds.
    pub median_millis: f64,
    /// Longest solve time, milliseconds.
    pub max_millis: f64,
}

/// The result of [`compare`]: one row per (instance, solver), instance-major, solvers in
/// the order given; and one summary per solver.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Time budget per solve, milliseconds.
    pub time_limit_millis: Option<u128>,
    /// One row per (instance, solver), instance-major.
    pub rows: Vec<Row>,
    /// One summary per solver, in the order given.
    pub summary: Vec<SolverSummary>,
}

impl Report {
    /// Rows whose decision fails `check`.
    pub fn invalid(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| !r.valid)
    }
}

fn total_placed(o: &Objective) -> i64 {
    o.placed_by_priority.iter().map(|r| r.placed).sum()
}

/// First term (in lexicographic order) where `o` differs from `exact`, and the verdict.
pub fn verdict(o: &Objective, exact: &Objective) -> Verdict {
    let ord = o.compare(exact);
    if ord == Ordering::Equal {
        return Verdict::Equal;
    }
    let (term, detail) = first_difference(o, exact);
    match ord {
        Ordering::Less => Verdict::Worse { term, detail },
        _ => Verdict::Better { term, detail },
    }
}

fn first_difference(o: &Objective, exact: &Objective) -> (String, String) {
    fn diff_levels<K: Ord + Clone>(a: BTreeMap<K, i64>, b: BTreeMap<K, i64>) -> Option<(K, i64)> {
        let mut levels: Vec<K> = a.keys().chain(b.keys()).cloned().collect();
        levels.sort_unstable_by(|x, y| y.cmp(x));
        levels.dedup();
        levels.into_iter().find_map(|l| {
            let d = a.get(&l).copied().unwrap_or(0) - b.get(&l).copied().unwrap_or(0);
            (d != 0).then_some((l, d))
        })
    }
    let placed = |x: &Objective| x.placed_by_priority.iter().map(|r| (r.priority.clone(), r.placed)).collect::<BTreeMap<_, _>>();
    if let Some((l, d)) = diff_levels(placed(o), placed(exact)) {
        return ("placed".into(), format!("placed@{l} {d:+}"));
    }
    let ev = |x: &Objective| x.evicted_by_priority.iter().map(|r| (r.priority, r.pods)).collect::<BTreeMap<_, _>>();
    if let Some((l, d)) = diff_levels(ev(o), ev(exact)) {
        return ("victims".into(), format!("victims@{l} {d:+}"));
    }
    let ex = |x: &Objective| x.extra_by_priority.iter().map(|r| (r.priority.clone(), r.pods)).collect::<BTreeMap<_, _>>();
    if let Some((l, d)) = diff_levels(ex(o), ex(exact)) {
        return ("extra".into(), format!("extra@{l} {d:+}"));
    }
    ("extra".into(), format!("extra {:+}", o.extra_pods - exact.extra_pods))
}

/// `(exact placed − placed) / max(exact placed, 1)`, 0 when both place nothing.
pub fn placed_gap(placed: i64, exact_placed: i64) -> f64 {
    (exact_placed - placed) as f64 / exact_placed.max(1) as f64
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// One column of a comparison: a solver of the registry, or any function that decides
/// a cycle (a heuristic under development, a test double).
pub struct Contender {
    /// The name shown in rows and summaries.
    pub name: String,
    decide: Box<dyn Fn(&Instance, &Options) -> Decision + Send + Sync>,
}

impl Contender {
    /// A solver of the registry; the options' solver is replaced by it.
    pub fn of(kind: SolverKind) -> Contender {
        Contender::custom(kind.name(), move |inst, opts| crate::solve(inst, &Options { solver: kind, ..opts.clone() }))
    }
    /// Decides `inst` under `opts`.
    pub fn decide(&self, inst: &Instance, opts: &Options) -> Decision {
        (self.decide)(inst, opts)
    }
    /// Any function that decides a cycle.
    pub fn custom(name: &str, decide: impl Fn(&Instance, &Options) -> Decision + Send + Sync + 'static) -> Contender {
        Contender { name: name.to_string(), decide: Box::new(decide) }
    }
}

/// Runs one contender on one instance and validates the decision.
pub fn run_one(name: &str, inst: &Instance, solver: &Contender, cfg: &Options) -> Row {
    let t = Instant::now();
    let d: Decision = (solver.decide)(inst, cfg);
    let millis = t.elapsed().as_secs_f64() * 1000.0;
    let report = check::check(inst, &d);
    let o = &report.objective;
    Row {
        instance: name.to_string(),
        nodes: inst.nodes.len(),
        pending_groups: inst.pending_groups().count(),
        solver: solver.name.clone(),
        status: d.status,
        placed_by_priority: o.placed_by_priority.clone(),
        evicted_by_priority: o.evicted_by_priority.clone(),
        extra_pods: o.extra_pods,
        extra_by_priority: o.extra_by_priority.clone(),
        placed: total_placed(o),
        victims: o.evicted_by_priority.iter().map(|r| r.pods).sum(),
        millis,
        valid: report.is_valid(),
        violations: report.violations.iter().map(|v| v.message.clone()).collect(),
        solver_gap: d.gap,
        vs_exact: None,
        placed_gap: None,
    }
}

/// Fills `vs_exact` and `placed_gap` of the rows of one instance from its exact row.
fn relate_to_exact(rows: &mut [Row]) {
    let Some(e) = rows.iter().position(|r| r.solver == "exact") else { return };
    let exact = rows[e].objective();
    let exact_placed = rows[e].placed;
    for r in rows.iter_mut() {
        r.vs_exact = Some(verdict(&r.objective(), &exact));
        r.placed_gap = Some(placed_gap(r.placed, exact_placed));
    }
}

/// Per-solver aggregates of `rows`, solvers in order of first appearance.
pub fn summarize(rows: &[Row]) -> Vec<SolverSummary> {
    let mut order: Vec<String> = Vec::new();
    for r in rows {
        if !order.contains(&r.solver) {
            order.push(r.solver.clone());
        }
    }
    order
        .into_iter()
        .map(|s| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.solver == s).collect();
            let gaps: Vec<f64> = mine.iter().filter_map(|r| r.placed_gap).collect();
            let times: Vec<f64> = mine.iter().map(|r| r.millis).collect();
            let count = |f: &dyn Fn(&Verdict) -> bool| mine.iter().filter(|r| r.vs_exact.as_ref().is_some_and(f)).count();
            SolverSummary {
                solver: s.clone(),
                instances: mine.len(),
                invalid: mine.iter().filter(|r| !r.valid).count(),
                proven: mine.iter().filter(|r| r.status == Status::Optimal).count(),
                compared: mine.iter().filter(|r| r.vs_exact.is_some()).count(),
                equal_to_exact: count(&|v| matches!(v, Verdict::Equal)),
                worse_than_exact: count(&|v| matches!(v, Verdict::Worse { .. })),
                better_than_exact: count(&|v| matches!(v, Verdict::Better { .. })),
                mean_placed_gap: (!gaps.is_empty()).then(|| gaps.iter().sum::<f64>() / gaps.len() as f64),
                max_placed_gap: gaps.iter().cloned().reduce(f64::max),
                placed: mine.iter().map(|r| r.placed).sum(),
                pending: mine.iter().map(|r| r.pending_groups as i64).sum(),
                victims: mine.iter().map(|r| r.victims).sum(),
                median_millis: median(&times),
                max_millis: times.iter().cloned().fold(0.0, f64::max),
            }
        })
        .collect()
}

/// Runs every solver on every instance (in order, one at a time, so that times are
/// comparable), validates every decision and relates every row to the exact row.
/// `progress(done, total, row)` is called after each solve.
pub fn compare(
    instances: &[(String, Instance)],
    solvers: &[Contender],
    cfg: &Options,
    progress: &mut dyn FnMut(usize, usize, &Row),
) -> Report {
    let total = instances.len() * solvers.len();
    let mut rows = Vec::with_capacity(total);
    for (name, inst) in instances {
        let mut these: Vec<Row> = Vec::with_capacity(solvers.len());
        for s in solvers {
            let row = run_one(name, inst, s, cfg);
            progress(rows.len() + these.len() + 1, total, &row);
            these.push(row);
        }
        relate_to_exact(&mut these);
        rows.extend(these);
    }
    let summary = summarize(&rows);
    Report { time_limit_millis: cfg.time_limit.map(|d| d.as_millis()), rows, summary }
}

// ---------------------------------------------------------------------------------------
// Rendering.

/// Output formats of `tessera compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned plain-text columns.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// The whole report as pretty JSON.
    Json,
    /// GitHub-flavoured markdown tables.
    Markdown,
}

/// The report in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Table => render_table(report),
        Format::Csv => render_csv(report),
        Format::Json => serde_json::to_string_pretty(report).expect("a report always serializes") + "\n",
        Format::Markdown => render_markdown(report),
    }
}

/// Column names of the per-row CSV.
pub const CSV_HEADER: &[&str] = &[
    "instance",
    "nodes",
    "pending_groups",
    "solver",
    "status",
    "placed_by_priority",
    "placed",
    "victims_by_priority",
    "victims",
    "extra_pods",
    "time_ms",
    "check",
    "violations",
    "vs_exact",
    "placed_gap",
    // Last, so that the columns before it keep their positions (it was added after them).
    "extra_by_priority",
];

/// The fields of one row, in the order of [`CSV_HEADER`] (unquoted).
pub fn csv_fields(r: &Row) -> Vec<String> {
    vec![
        r.instance.clone(),
        r.nodes.to_string(),
        r.pending_groups.to_string(),
        r.solver.clone(),
        format!("{:?}", r.status),
        r.placed_levels(),
        r.placed.to_string(),
        r.victim_levels(),
        r.victims.to_string(),
        r.extra_pods.to_string(),
        format!("{:.3}", r.millis),
        if r.valid { "ok".into() } else { "FAIL".into() },
        r.violations.join(" | "),
        r.vs_exact_text(),
        r.placed_gap.map(|g| format!("{g:.6}")).unwrap_or_default(),
        r.extra_levels(),
    ]
}

/// One CSV record (RFC 4180 quoting where needed), without the line end.
pub fn csv_record<S: AsRef<str>>(fields: &[S]) -> String {
    fields
        .iter()
        .map(|f| {
            let f = f.as_ref();
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Rows as CSV (header first), one record per (instance, solver).
pub fn render_csv(report: &Report) -> String {
    let mut out = csv_record(CSV_HEADER) + "\n";
    for r in &report.rows {
        out.push_str(&csv_record(&csv_fields(r)));
        out.push('\n');
    }
    out
}

fn opt_pct(g: Option<f64>) -> String {
    g.map(|g| format!("{:.1}%", g * 100.0)).unwrap_or_else(|| "-".into())
}

fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.2}")
    }
}

/// Table cells of the per-row part: header and rows.
fn row_cells(report: &Report) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header =
        vec!["instance", "solver", "status", "placed (prio:placed/pending)", "victims", "extra", "ms", "check", "vs exact", "placed gap"];
    let rows = report
        .rows
        .iter()
        .map(|r| {
            vec![
                r.instance.clone(),
                r.solver.clone(),
                format!("{:?}", r.status),
                r.placed_levels(),
                r.victim_levels(),
                r.extra_text(),
                fmt_ms(r.millis),
                r.check_text(),
                r.vs_exact_text(),
                r.placed_gap_text(),
            ]
        })
        .collect();
    (header, rows)
}

/// Table cells of the per-solver summary: header and rows.
pub fn summary_cells(summary: &[SolverSummary]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "solver",
        "instances",
        "check failures",
        "= exact",
        "worse than exact",
        "better than exact",
        "mean placed gap",
        "max placed gap",
        "groups placed",
        "victims",
        "median ms",
        "max ms",
    ];
    let rows = summary
        .iter()
        .map(|s| {
            // The exact solver is the reference: its own verdict columns say so.
            let is_ref = s.solver == "exact";
            let rel = |n: usize| {
                if is_ref {
                    "ref".to_string()
                } else if s.compared == 0 {
                    "-".to_string()
                } else {
                    format!("{n}/{}", s.compared)
                }
            };
            let pct = |g: Option<f64>| if is_ref { "ref".to_string() } else { opt_pct(g) };
            vec![
                s.solver.clone(),
                s.instances.to_string(),
                if s.invalid == 0 { "0".into() } else { format!("{} !!", s.invalid) },
                rel(s.equal_to_exact),
                rel(s.worse_than_exact),
                rel(s.better_than_exact),
                pct(s.mean_placed_gap),
                pct(s.max_placed_gap),
                format!("{}/{}", s.placed, s.pending),
                s.victims.to_string(),
                fmt_ms(s.median_millis),
                fmt_ms(s.max_millis),
            ]
        })
        .collect();
    (header, rows)
}

fn aligned(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let s: Vec<String> = cells.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect();
        s.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header.iter().map(|s| s.to_string()).collect());
    out.push_str(&line(w.iter().map(|&n| "-".repeat(n)).collect()));
    for r in rows {
        out.push_str(&line(r.clone()));
    }
    out
}

/// A markdown table (pipes in cells escaped).
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!("| {} |\n", header.iter().map(|h| esc(h)).collect::<Vec<_>>().join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        out.push_str(&format!("| {} |\n", r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")));
    }
    out
}

fn invalid_banner(report: &Report) -> String {
    let bad: Vec<&Row> = report.invalid().collect();
    if bad.is_empty() {
        return String::new();
    }
    let mut s = format!("!! {} decision(s) FAIL check:\n", bad.len());
    for r in bad {
        s.push_str(&format!("!!   {} / {}: {}\n", r.instance, r.solver, r.violations.join("; ")));
    }
    s
}

/// Rows and per-solver summary as aligned text columns, with a banner for failed checks.
pub fn render_table(report: &Report) -> String {
    let (h, rows) = row_cells(report);
    let mut out = aligned(&h, &rows);
    out.push('\n');
    let (h, rows) = summary_cells(&report.summary);
    out.push_str(&aligned(&h, &rows));
    let banner = invalid_banner(report);
    if !banner.is_empty() {
        out.push('\n');
        out.push_str(&banner);
    }
    out
}

/// Rows and per-solver summary as markdown tables.
pub fn render_markdown(report: &Report) -> String {
    let (h, rows) = row_cells(report);
    let mut out = markdown_table(&h, &rows);
    out.push('\n');
    let (h, rows) = summary_cells(&report.summary);
    out.push_str(&markdown_table(&h, &rows));
    let banner = invalid_banner(report);
    if !banner.is_empty() {
        out.push_str("\n```\n");
        out.push_str(&banner);
        out.push_str("```\n");
    }
    out.push_str(
        "\n`vs exact`: the first objective term (placed groups by priority, then victims by priority, then extra pods) \
where the solver differs from exact. `placed gap`: (exact placed - placed) / max(exact placed, 1) over all levels.\n",
    );
    out
}
