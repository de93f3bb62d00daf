//! The scale benchmark (`tessera bench --suite scale`): the exact engine on production-size
//! classes, each solve a separate `tessera solve` process so that its wall time includes
//! reading the instance and writing the decision, and its peak memory is its own
//! (`ru_maxrss` of that child).
//!
//! Per instance the report gives every objective row with what the engine proved about
//! it (`placed / atMost`, `evicted / atLeast`, `extra / atMost`), whether the decision
//! passes the checker, and how it compares with the best decision known for that
//! instance from any earlier run (a file of known answers, updated when this run does
//! better). Known answers are references, never expected values: a bound that a known
//! valid decision beats is reported as a bug and fails the run.
//!
//! The thread ratio is the time each thread count needs to reach the answer that one
//! thread gives within the budget. Times are found by re-running with budgets from
//! [`RATIO_GRID`] (a run that ends before its budget counts with its own wall time);
//! this relies on a longer budget never giving a worse answer, which the exact engine
//! keeps.

use crate::check;
use crate::model::Instance;
use crate::tooling::write_atomic;
use crate::wire::decision::{Decision, Objective, Status};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The classes of the suite, in report order.
pub const SCALE_CLASSES: &[&str] = &["flat-256", "preempt-256", "flat-1024", "preempt-1024", "openb-1024", "topo-4096"];

/// Budgets (seconds) tried when timing how long a thread count needs to reach an answer.
pub const RATIO_GRID: &[f64] = &[0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];

/// What to run.
pub struct ScaleSuite {
    /// Generator classes (`flat-*` get `options.preemption: true`).
    pub classes: Vec<String>,
    /// Seeds 1..=seeds of each class.
    pub seeds: u64,
    /// Budget per solve.
    pub time_limit: Duration,
    /// Work limit per solve (`options.workLimit`): the same decision on every run and any
    /// thread count, so two builds compare without timing noise; the time limit is then
    /// only each solve's hard limit.
    pub work_limit: Option<u64>,
    /// Threads of each solve.
    pub threads: usize,
    /// The `tessera` executable that solves (normally this one).
    pub binary: PathBuf,
    /// Output directory: instances, decisions, `results.csv`, `summary.md`.
    pub out: PathBuf,
    /// Known answers, read and updated (written back only when this run improves one).
    pub best_known: Option<PathBuf>,
    /// Seeds per class (from 1) on which the 1- vs 2-thread ratio is measured; 0 = none.
    pub ratio_seeds: u64,
    /// The command line, for the report.
    pub command: String,
}

/// One known answer for an instance: where it came from and its objective.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KnownAnswer {
    /// The run that produced it (command, budget, version, date).
    pub source: String,
    /// Its status (`Optimal` answers are the optimum).
    pub status: Status,
    /// Terms 1-3 as the checker recomputed them.
    pub objective: Objective,
}

/// Known answers per instance (`CLASS-sSEED`), each list in the order found; the best is
/// the lexicographic maximum.
pub type KnownAnswers = BTreeMap<String, Vec<KnownAnswer>>;

/// The best of an instance's known answers.
pub fn best_of(known: &[KnownAnswer]) -> Option<&KnownAnswer> {
    known.iter().max_by(|a, b| a.objective.compare(&b.objective))
}

/// Whether a row is maximized (placed, extra) or minimized (evicted).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sense {
    Max,
    Min,
}

/// One objective row of a decision with its bound, if the decision has one.
#[derive(Clone, Debug)]
struct Row {
    term: u8,
    level: String,
    sense: Sense,
    value: i64,
    bound: Option<i64>,
}

impl Row {
    fn proven(&self) -> bool {
        self.bound == Some(self.value)
    }
    fn cell(&self) -> String {
        match (self.bound, self.sense) {
            (Some(b), _) if b == self.value => format!("{}", self.value),
            (Some(b), Sense::Max) => format!("{} (≤{b})", self.value),
            (Some(b), Sense::Min) => format!("{} (≥{b})", self.value),
            (None, _) => format!("{} (?)", self.value),
        }
    }
    /// `|bound - value| / max(1, |bound|)`, the spec's gap of a row.
    fn gap(&self) -> Option<f64> {
        self.bound.map(|b| (b - self.value).abs() as f64 / (b.abs().max(1)) as f64)
    }
}

/// The rows of terms 1-3 in objective order, each with its bound where the decision has
/// one. Levels are the union of the objective's and the bounds' levels.
fn rows(d: &Decision) -> Vec<Row> {
    let b = d.bounds.clone().unwrap_or_default();
    let mut out = Vec::new();
    let mut placed: BTreeMap<_, (i64, Option<i64>)> = BTreeMap::new();
    for r in &d.objective.placed_by_priority {
        placed.entry(r.priority.clone()).or_default().0 = r.placed;
    }
    for r in &b.placed_by_priority {
        placed.entry(r.priority.clone()).or_default().1 = Some(r.at_most);
    }
    let levels: Vec<_> = placed.keys().rev().cloned().collect();
    for (k, (v, bound)) in placed.iter().rev() {
        out.push(Row { term: 1, level: k.to_string(), sense: Sense::Max, value: *v, bound: *bound });
    }
    let mut evicted: BTreeMap<i64, (i64, Option<i64>)> = BTreeMap::new();
    for r in &d.objective.evicted_by_priority {
        evicted.entry(r.priority).or_default().0 = r.pods;
    }
    for r in &b.evicted_by_priority {
        evicted.entry(r.priority).or_default().1 = Some(r.at_least);
    }
    for (k, (v, bound)) in evicted.iter().rev() {
        out.push(Row { term: 2, level: k.to_string(), sense: Sense::Min, value: *v, bound: *bound });
    }
    for k in levels {
        let v = d.objective.extra_by_priority.iter().find(|r| r.priority == k).map_or(0, |r| r.pods);
        let bound = b.extra_by_priority.iter().find(|r| r.priority == k).map(|r| r.at_most);
        out.push(Row { term: 3, level: k.to_string(), sense: Sense::Max, value: v, bound });
    }
    out
}

/// The rows of an objective alone (no bounds).
fn objective_rows(o: &Objective) -> Vec<Row> {
    rows(&bare(o.clone()))
}

/// A decision with this objective and nothing else.
fn bare(objective: Objective) -> Decision {
    Decision {
        status: Status::Feasible,
        objective,
        gap: 0.0,
        bounds: None,
        placements: Vec::new(),
        unplaced: Vec::new(),
        evictions: Vec::new(),
        stats: Default::default(),
    }
}

/// A bound that a known valid decision contradicts. A row's bound holds for every
/// valid decision whose earlier rows equal this one's, so the known answer is followed
/// row by row until it differs.
fn contradicted_bound(ours: &[Row], known: &Objective) -> Option<String> {
    let theirs = objective_rows(known);
    let value_of = |r: &Row| theirs.iter().find(|t| t.term == r.term && t.level == r.level).map_or(0, |t| t.value);
    for r in ours {
        let Some(b) = r.bound else { break };
        let k = value_of(r);
        let beyond = match r.sense {
            Sense::Max => k > b,
            Sense::Min => k < b,
        };
        if beyond {
            let word = if r.sense == Sense::Max { "atMost" } else { "atLeast" };
            return Some(format!("term {} level {}: bound {word} {b}, a known valid decision has {k}", r.term, r.level));
        }
        if k != r.value {
            break;
        }
    }
    None
}

/// Term 1 proven, or its first open level within max(1 group, 1 %) of its bound.
fn term1_target(rows: &[Row]) -> bool {
    for r in rows.iter().filter(|r| r.term == 1) {
        match r.bound {
            Some(b) if b == r.value => continue,
            Some(b) => return (b - r.value) as f64 <= (0.01 * b as f64).max(1.0),
            None => return false,
        }
    }
    true
}

fn term1_proven(rows: &[Row]) -> bool {
    rows.iter().filter(|r| r.term == 1).all(Row::proven)
}

/// The highest level's eviction row and its gap, when term 1 is proven.
fn top_eviction_gap(rows: &[Row]) -> Option<f64> {
    if !term1_proven(rows) {
        return None;
    }
    rows.iter().find(|r| r.term == 2).map(|r| r.gap().unwrap_or(f64::INFINITY)).or(Some(0.0))
}

/// One solve of one instance.
struct Run {
    decision: Decision,
    wall: Duration,
    peak_kib: u64,
}

/// `binary solve FILE --time-limit T [--work-limit W] --threads N --output json --out OUT`,
/// timed from spawn to exit, with the child's own peak resident memory.
fn solve_child(binary: &Path, instance: &Path, out: &Path, (limit, work): (Duration, Option<u64>), threads: usize) -> Result<Run, String> {
    let err_path = out.with_extension("stderr");
    let stderr = std::fs::File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
    let start = Instant::now();
    let mut command = Command::new(binary);
    command.arg("solve").arg(instance).args(["--time-limit", &format!("{}ms", limit.as_millis())]);
    if let Some(w) = work {
        command.args(["--work-limit", &w.to_string()]);
    }
    let child = command
        .args(["--threads", &threads.to_string(), "--output", "json", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let (code, peak_kib) = wait_with_peak(child.id())?;
    let wall = start.elapsed();
    if code != Some(0) {
        let text = std::fs::read_to_string(&err_path).unwrap_or_default();
        return Err(format!("{} on {}: exit {code:?}: {}", binary.display(), instance.display(), text.trim()));
    }
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let decision: Decision = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(Run { decision, wall, peak_kib })
}

/// Waits for a child and returns its exit code and peak resident set (KiB), which only
/// `wait4` reports per child.
fn wait_with_peak(pid: u32) -> Result<(Option<i32>, u64), String> {
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value of a plain C struct; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet waited for; the pointers are to live locals.
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    if r < 0 {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, usage.ru_maxrss.max(0) as u64))
}

/// One instance of the report.
struct Line {
    class: String,
    seed: u64,
    nodes: usize,
    rows: Vec<Row>,
    status: Status,
    valid: bool,
    wall: Duration,
    peak_kib: u64,
    versus_best: Option<Ordering>,
    best: Option<String>,
}

/// What the run found.
pub struct ScaleResult {
    /// The markdown report (also written to `summary.md`).
    pub summary: String,
    /// Decisions that fail the checker.
    pub invalid: usize,
    /// Bounds contradicted by a known valid decision.
    pub contradicted: Vec<String>,
}

fn instance_file(suite: &ScaleSuite, class: &str, seed: u64) -> Result<(PathBuf, usize), String> {
    let mut doc = crate::tooling::generate::generate(class, seed)?;
    if class.starts_with("flat-") {
        doc.options.get_or_insert_with(Default::default).preemption = Some(true);
    }
    let dir = suite.out.join("instances");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{class}-s{seed}.json"));
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, doc.nodes.len()))
}

fn read_known(path: Option<&Path>) -> Result<KnownAnswers, String> {
    match path {
        Some(p) if p.exists() => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        }
        _ => Ok(KnownAnswers::new()),
    }
}

/// Runs the suite. `progress(done, total, line)` after each solve.
pub fn run_scale(suite: &ScaleSuite, progress: &mut dyn FnMut(usize, usize, String)) -> Result<ScaleResult, String> {
    let mut known = read_known(suite.best_known.as_deref())?;
    let mut improved = false;
    let source = format!(
        "`{}` ({}, solve budget {:?}{}, {} threads), {}",
        suite.command,
        suite.binary.display(),
        suite.time_limit,
        suite.work_limit.map(|w| format!(", work limit {w}")).unwrap_or_default(),
        suite.threads,
        today()
    );
    let decisions = suite.out.join("decisions");
    std::fs::create_dir_all(&decisions).map_err(|e| format!("{}: {e}", decisions.display()))?;
    let total = suite.classes.len() * suite.seeds as usize;
    let (mut lines, mut invalid, mut contradicted) = (Vec::new(), 0, Vec::new());
    for class in &suite.classes {
        for seed in 1..=suite.seeds {
            let name = format!("{class}-s{seed}");
            let (file, nodes) = instance_file(suite, class, seed)?;
            let limits = (suite.time_limit, suite.work_limit);
            let run = solve_child(&suite.binary, &file, &decisions.join(format!("{name}.json")), limits, suite.threads)?;
            let inst =
                Instance::from_text(&std::fs::read_to_string(&file).map_err(|e| e.to_string())?).map_err(|e| format!("{name}: {e}"))?;
            let report = check::check(&inst, &run.decision);
            let valid = report.is_valid();
            invalid += usize::from(!valid);
            let rows = rows(&run.decision);
            let list = known.entry(name.clone()).or_default();
            let best = best_of(list).cloned();
            if let Some(b) = &best {
                if let Some(c) = contradicted_bound(&rows, &b.objective) {
                    contradicted.push(format!("{name}: {c} ({})", b.source));
                }
            }
            let versus_best = best.as_ref().map(|b| report.objective.compare(&b.objective));
            if valid && versus_best.is_none_or(|o| o == Ordering::Greater) {
                list.push(KnownAnswer { source: source.clone(), status: run.decision.status, objective: report.objective.clone() });
                improved = true;
            }
            let line = Line {
                class: class.clone(),
                seed,
                nodes,
                status: run.decision.status,
                valid,
                wall: run.wall,
                peak_kib: run.peak_kib,
                versus_best,
                best: best.map(|b| objective_cell(&b.objective)),
                rows,
            };
            progress(
                lines.len() + 1,
                total,
                format!("{name}: {:?} in {:.1} s, {} MiB", line.status, line.wall.as_secs_f64(), line.peak_kib / 1024),
            );
            lines.push(line);
        }
    }
    let ratios = thread_ratios(suite, progress)?;
    if improved {
        if let Some(p) = &suite.best_known {
            let text = serde_json::to_string_pretty(&known).map_err(|e| e.to_string())? + "\n";
            write_atomic(p, &text)?;
        }
    }
    let summary = render(suite, &lines, &ratios, &contradicted);
    write_atomic(&suite.out.join("summary.md"), &summary)?;
    write_atomic(&suite.out.join("results.csv"), &csv(&lines))?;
    Ok(ScaleResult { summary, invalid, contradicted })
}

/// The time one thread count needs to reach `target` (lexicographically at least as
/// good), and the answer it reached, from re-runs over [`RATIO_GRID`].
fn time_to_reach(suite: &ScaleSuite, file: &Path, threads: usize, target: &Objective, scratch: &Path) -> Result<(f64, usize), String> {
    let grid: Vec<f64> = RATIO_GRID.iter().copied().filter(|&s| s <= suite.time_limit.as_secs_f64()).collect();
    let reaches = |secs: f64| -> Result<Option<f64>, String> {
        let run = solve_child(&suite.binary, file, scratch, (Duration::from_secs_f64(secs), None), threads)?;
        let ok = run.decision.objective.compare(target) != Ordering::Less;
        // A run that ended before its budget (a proof) reached its answer at its wall time.
        let t = if run.wall.as_secs_f64() < 0.95 * secs { run.wall.as_secs_f64() } else { secs };
        Ok(ok.then_some(t))
    };
    // Binary search for the first budget that reaches the target.
    let (mut lo, mut hi) = (0usize, grid.len() - 1);
    let mut best = match reaches(grid[hi])? {
        Some(t) => t,
        None => return Ok((f64::INFINITY, 1)),
    };
    let mut runs = 1;
    while lo < hi {
        let mid = (lo + hi) / 2;
        runs += 1;
        match reaches(grid[mid])? {
            Some(t) => {
                best = t;
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    Ok((best, runs))
}

struct Ratio {
    name: String,
    one_status: Status,
    t1: f64,
    t2: f64,
    runs: usize,
}

fn thread_ratios(suite: &ScaleSuite, progress: &mut dyn FnMut(usize, usize, String)) -> Result<Vec<Ratio>, String> {
    let mut out = Vec::new();
    let scratch = suite.out.join("decisions").join("ratio-scratch.json");
    let total = suite.classes.len() * suite.ratio_seeds.min(suite.seeds) as usize;
    for class in &suite.classes {
        for seed in 1..=suite.ratio_seeds.min(suite.seeds) {
            let name = format!("{class}-s{seed}");
            let file = suite.out.join("instances").join(format!("{name}.json"));
            let one = solve_child(&suite.binary, &file, &scratch, (suite.time_limit, suite.work_limit), 1)?;
            let target = one.decision.objective.clone();
            let ((t1, r1), (t2, r2)) = match suite.work_limit {
                // The same work gives the same answer: the ratio of the two runs' times.
                Some(w) => {
                    let two = solve_child(&suite.binary, &file, &scratch, (suite.time_limit, Some(w)), 2)?;
                    let same = two.decision.objective.compare(&target) == Ordering::Equal;
                    ((one.wall.as_secs_f64(), 0), (if same { two.wall.as_secs_f64() } else { f64::INFINITY }, 1))
                }
                None => (time_to_reach(suite, &file, 1, &target, &scratch)?, time_to_reach(suite, &file, 2, &target, &scratch)?),
            };
            progress(out.len() + 1, total, format!("ratio {name}: 1 thread {t1:.1} s, 2 threads {t2:.1} s"));
            out.push(Ratio { name, one_status: one.decision.status, t1, t2, runs: r1 + r2 + 1 });
        }
    }
    let _ = std::fs::remove_file(&scratch);
    let _ = std::fs::remove_file(scratch.with_extension("stderr"));
    Ok(out)
}

fn objective_cell(o: &Objective) -> String {
    let rows = objective_rows(o);
    let part = |term: u8| rows.iter().filter(|r| r.term == term).map(|r| format!("{}:{}", r.level, r.value)).collect::<Vec<_>>().join(" ");
    format!("{} / {} / {}", part(1), part(2), part(3))
}

fn term_cell(rows: &[Row], term: u8) -> String {
    let cells: Vec<String> = rows
        .iter()
        .filter(|r| r.term == term && (term == 1 || r.value != 0 || r.bound.is_some_and(|b| b != 0)))
        .map(|r| format!("{}: {}", r.level, r.cell()))
        .collect();
    if cells.is_empty() {
        "0".into()
    } else {
        cells.join(", ")
    }
}

fn memory_cap_mib(nodes: usize) -> u64 {
    if nodes <= 1024 {
        1024
    } else {
        2048
    }
}

fn render(suite: &ScaleSuite, lines: &[Line], ratios: &[Ratio], contradicted: &[String]) -> String {
    let mut s = String::new();
    let work = suite.work_limit.map(|w| format!(" and work limit {w} (the time limit is then only a hard limit)")).unwrap_or_default();
    let _ = writeln!(s, "# Scale suite\n\n`{}`\n\n{}; budget {:?}{work} per solve, {} threads; each solve a separate `tessera solve` process (wall time from spawn to exit, file reading and writing included; peak memory = that process's maximum resident set).\n", suite.command, today(), suite.time_limit, suite.threads);
    s.push_str("Rows: `value (≤ atMost)` for groups placed and extra pods, `value (≥ atLeast)` for evictions, a bare value when proven, `(?)` past the first open row (no bound, as the spec has it). Levels are priorities, highest first; eviction levels with nothing evicted and a zero bound are left out.\n\n");
    s.push_str("| instance | nodes | status | placed per level | evicted per level | extra per level | wall s | peak MiB | valid | vs best known | best known (placed / evicted / extra) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    let budget = suite.time_limit.as_secs_f64() * 1.05;
    for l in lines {
        let vs = match l.versus_best {
            None => "first",
            Some(Ordering::Greater) => "better",
            Some(Ordering::Equal) => "equal",
            Some(Ordering::Less) => "**worse**",
        };
        let _ = writeln!(
            s,
            "| {}-s{} | {} | {:?} | {} | {} | {} | {:.2}{} | {}{} | {} | {} | {} |",
            l.class,
            l.seed,
            l.nodes,
            l.status,
            term_cell(&l.rows, 1),
            term_cell(&l.rows, 2),
            term_cell(&l.rows, 3),
            l.wall.as_secs_f64(),
            if l.wall.as_secs_f64() > budget { " **over**" } else { "" },
            l.peak_kib / 1024,
            if l.peak_kib / 1024 > memory_cap_mib(l.nodes) { " **over**" } else { "" },
            if l.valid { "yes" } else { "**NO**" },
            vs,
            l.best.as_deref().unwrap_or("-"),
        );
    }
    s.push_str("\n## Targets per class\n\n");
    s.push_str("| class | term 1 proven or within max(1, 1 %) | top-level evictions within 10 % of bound (term 1 proven) | as good as best known | wall ≤ budget + 5 % | peak memory under cap |\n|---|---|---|---|---|---|\n");
    for class in &suite.classes {
        let ls: Vec<&Line> = lines.iter().filter(|l| &l.class == class).collect();
        let n = ls.len();
        let t1 = ls.iter().filter(|l| term1_target(&l.rows)).count();
        let ev: Vec<f64> = ls.iter().filter_map(|l| top_eviction_gap(&l.rows)).collect();
        let ev_ok = ev.iter().filter(|g| **g <= 0.10).count();
        let good = ls.iter().filter(|l| l.versus_best.is_none_or(|o| o != Ordering::Less)).count();
        let wall = ls.iter().filter(|l| l.wall.as_secs_f64() <= budget).count();
        let mem = ls.iter().filter(|l| l.peak_kib / 1024 <= memory_cap_mib(l.nodes)).count();
        let _ = writeln!(
            s,
            "| {class} | {t1}/{n} | {} | {good}/{n} | {wall}/{n} | {mem}/{n} (cap {} MiB) |",
            if ev.is_empty() { "- (term 1 not proven)".to_string() } else { format!("{ev_ok}/{}", ev.len()) },
            ls.first().map_or(0, |l| memory_cap_mib(l.nodes))
        );
    }
    if !ratios.is_empty() {
        if suite.work_limit.is_some() {
            s.push_str("\n## 1 vs 2 threads\n\nWall time of the same work with 1 and with 2 threads (the answers must be equal; \"not reached\" if they differ).\n\n");
        } else {
            let _ = writeln!(s, "\n## 1 vs 2 threads\n\nTime to reach the answer one thread gives in {:?}: the first budget of {:?} s whose run is at least as good (a run that ends early, proven, counts with its wall time).\n", suite.time_limit, RATIO_GRID);
        }
        s.push_str("| instance | 1-thread answer | 1 thread s | 2 threads s | ratio | runs |\n|---|---|---|---|---|---|\n");
        let secs = |t: f64| if t.is_finite() { format!("{t:.2}") } else { "not reached".into() };
        for r in ratios {
            let ratio = if r.t1.is_finite() && r.t2.is_finite() { format!("{:.2}", r.t1 / r.t2) } else { "-".into() };
            let _ = writeln!(s, "| {} | {:?} | {} | {} | {ratio} | {} |", r.name, r.one_status, secs(r.t1), secs(r.t2), r.runs);
        }
        if suite.work_limit.is_none() {
            s.push_str("\n\"not reached\": no run on the grid, the full budget included, was as good as the first 1-thread run (wall-clock budgets do not repeat a run's path).\n");
        }
    }
    if !contradicted.is_empty() {
        s.push_str("\n## Bounds contradicted by a known valid decision (bugs)\n\n");
        for c in contradicted {
            let _ = writeln!(s, "- {c}");
        }
    }
    s
}

fn csv(lines: &[Line]) -> String {
    let mut s = String::from("class,seed,nodes,status,term,level,value,bound,wall_s,peak_mib,valid\n");
    for l in lines {
        for r in &l.rows {
            let _ = writeln!(
                s,
                "{},{},{},{:?},{},{},{},{},{:.3},{},{}",
                l.class,
                l.seed,
                l.nodes,
                l.status,
                r.term,
                r.level.replace(',', ";"),
                r.value,
                r.bound.map_or(String::new(), |b| b.to_string()),
                l.wall.as_secs_f64(),
                l.peak_kib / 1024,
                l.valid
            );
        }
    }
    s
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decision::{Bounds, EvictedBound, EvictedRow, PlacedBound, PlacedRow};

    fn decision(placed: &[(i64, i64, Option<i64>)], evicted: &[(i64, i64, Option<i64>)]) -> Decision {
        let mut d = bare(Objective::default());
        let mut b = Bounds::default();
        for &(p, v, bound) in placed {
            d.objective.placed_by_priority.push(PlacedRow { priority: p.into(), placed: v, pending: 10 });
            if let Some(at_most) = bound {
                b.placed_by_priority.push(PlacedBound { priority: p.into(), at_most });
            }
        }
        for &(p, v, bound) in evicted {
            d.objective.evicted_by_priority.push(EvictedRow { priority: p, pods: v });
            if let Some(at_least) = bound {
                b.evicted_by_priority.push(EvictedBound { priority: p, at_least });
            }
        }
        d.bounds = Some(b);
        d
    }

    #[test]
    fn a_known_answer_beyond_a_bound_is_reported_only_while_earlier_rows_agree() {
        // Level 100 proven at 5, level 0 open: 3 placed, at most 4.
        let ours = rows(&decision(&[(100, 5, Some(5)), (0, 3, Some(4))], &[]));
        let known = |a: i64, b: i64| decision(&[(100, a, None), (0, b, None)], &[]).objective;
        assert_eq!(contradicted_bound(&ours, &known(5, 4)), None);
        assert!(contradicted_bound(&ours, &known(5, 5)).unwrap().contains("atMost 4"));
        assert!(contradicted_bound(&ours, &known(6, 0)).unwrap().contains("level 100"));
        // A known answer worse at level 100 says nothing about level 0's bound.
        assert_eq!(contradicted_bound(&ours, &known(4, 9)), None);
    }

    #[test]
    fn eviction_bounds_are_lower_bounds() {
        let ours = rows(&decision(&[(100, 5, Some(5))], &[(10, 7, Some(4))]));
        let known = |e: i64| decision(&[(100, 5, None)], &[(10, e, None)]).objective;
        assert_eq!(contradicted_bound(&ours, &known(4)), None);
        assert!(contradicted_bound(&ours, &known(3)).unwrap().contains("atLeast 4"));
        // Term 1 proven: the top eviction row's gap is |4 - 7| / 4.
        assert_eq!(top_eviction_gap(&ours), Some(0.75));
    }

    #[test]
    fn term1_target_allows_one_group_or_one_percent() {
        let ok = |v: i64, b: i64| term1_target(&rows(&decision(&[(100, 5, Some(5)), (0, v, Some(b))], &[])));
        assert!(ok(9, 10), "one group short");
        assert!(!ok(8, 10), "two groups short of 10");
        assert!(ok(495, 500), "1 % of 500 is 5");
        assert!(!ok(494, 500));
        assert!(!term1_target(&rows(&decision(&[(100, 5, None)], &[]))), "no bound, no target");
    }

    #[test]
    fn today_is_a_civil_date() {
        let t = today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"), "{t}");
    }
}
