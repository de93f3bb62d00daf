//! What a simulation reports: the summary (per application, per cycle, totals, timing)
//! and its renderings for people (`--format table`) and for comparisons of runs.

use super::scenario::Ms;
use super::world::World;
use crate::wire::quantity::Scale;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Placeholder counters of one task group (YuniKorn's `PlaceholderData`).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TaskGroupCounters {
    /// The task group's name.
    pub task_group: String,
    /// `Count`: placeholder asks added for the group.
    pub count: i64,
    /// `Replaced`: placeholders removed with PLACEHOLDER_REPLACED.
    pub replaced: i64,
    /// `TimedOut`: placeholders removed with any other termination type (TIMEOUT,
    /// STOPPED_BY_RM, PREEMPTED_BY_SCHEDULER, UNKNOWN) and pending asks timed out.
    pub timed_out: i64,
}

/// One application attempt.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AppSummary {
    /// The application ID.
    pub app: String,
    /// 1 for the first use of the ID, 2 after it was reused once, ...
    pub attempt: u32,
    /// The leaf queue, when the instance has queues.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Seconds.
    pub submit: f64,
    /// First real pod bound.
    pub start: Option<f64>,
    /// Last real pod finished.
    pub finish: Option<f64>,
    /// Entered Completed, Failed or Rejected.
    pub end: Option<f64>,
    /// Which of the three.
    pub outcome: Option<String>,
    /// The core state at the end of the run.
    pub state: String,
    /// `start - submit`.
    pub wait: Option<f64>,
    /// The core's counters per task group (since its last restart).
    pub placeholders: Vec<TaskGroupCounters>,
    /// Over the whole run: placeholders the shim created, replaced, timed out (any other
    /// release), and placeholder timer firings.
    pub placeholders_created: i64,
    /// Placeholders removed with PLACEHOLDER_REPLACED.
    pub placeholders_replaced: i64,
    /// Placeholders removed any other way, and pending placeholder asks timed out.
    pub placeholders_timed_out: i64,
    /// Times the placeholder timer fired.
    pub placeholder_timeouts: u32,
}

/// One cycle that ran.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CycleRow {
    /// Seconds.
    pub at: f64,
    /// Decisions made (0-2: placeholders, pods).
    pub decisions: u32,
    /// Pods the decisions placed.
    pub placed: u32,
    /// Pending pods the decisions were given.
    pub pending: u32,
    /// Real pods' requests over capacity after the cycle, per resource.
    pub utilisation: BTreeMap<String, f64>,
    /// Placeholders' requests over capacity after the cycle.
    pub reserved: BTreeMap<String, f64>,
    /// Wall-clock time of the cycle's solves (not deterministic).
    pub solve_millis: f64,
}

/// Totals of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Application attempts.
    pub apps: usize,
    /// Attempts with a real pod bound.
    pub started: usize,
    /// Attempts that never bound a real pod.
    pub never_started: usize,
    /// Attempts that reached Completed.
    pub completed: usize,
    /// Attempts that reached Failed.
    pub failed: usize,
    /// Attempts that were Rejected at admission.
    pub rejected: usize,
    /// Seconds, over started applications.
    pub mean_wait: Option<f64>,
    /// Seconds, nearest rank, over started applications.
    pub p95_wait: Option<f64>,
    /// Time-weighted real usage over capacity, per resource, up to the horizon.
    pub utilisation: BTreeMap<String, f64>,
    /// Time-weighted placeholder usage over capacity: reserved but idle.
    pub reserved_idle: BTreeMap<String, f64>,
    /// The same in unit-hours (cpu cores, memory GiB, devices, else base units).
    pub reserved_idle_hours: BTreeMap<String, f64>,
    /// Placeholder pods the shim created, over all attempts.
    pub placeholders_created: i64,
    /// Placeholders removed with PLACEHOLDER_REPLACED, over all attempts.
    pub placeholders_replaced: i64,
    /// Placeholders removed any other way, and pending placeholder asks timed out.
    pub placeholders_timed_out: i64,
    /// Placeholder timer firings, over all attempts.
    pub placeholder_timeouts: u32,
    /// Cycles that were solved (unchanged idle cycles are skipped).
    pub cycles_run: usize,
    /// Solver decisions over the run.
    pub decisions: u64,
    /// Decisions validated by the checker (`--check`).
    pub decisions_checked: u64,
    /// Checked decisions that failed the validator (logged as `checkFailed`, not applied).
    pub check_failures: u64,
}

/// Wall-clock figures (the only non-deterministic part of a run).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    /// Wall-clock time of the whole run.
    pub wall_millis: f64,
    /// Wall-clock time inside the solver.
    pub solve_millis: f64,
    /// Cycles run over wall-clock seconds.
    pub cycles_per_wall_second: f64,
}

/// The summary of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The scenario's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The cycle solver's name.
    pub solver: String,
    /// The placeholder mode's name (`yunikorn`, `atomic`).
    pub placeholders: String,
    /// Seconds.
    pub cycle_period: f64,
    /// Usage is integrated from 0 to here: `until`, else the last change of usage.
    pub horizon: f64,
    /// Totals of the run.
    pub totals: Totals,
    /// One row per application attempt, in submission order.
    pub apps: Vec<AppSummary>,
    /// One row per cycle run.
    pub cycles: Vec<CycleRow>,
    /// Wall-clock figures.
    pub timing: Timing,
}

fn s(ms: Ms) -> f64 {
    ms as f64 / 1000.0
}

fn share(a: i128, b: i128) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Nearest-rank percentile of sorted values.
pub(super) fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

pub(super) fn summarize(w: &World, wall: std::time::Duration) -> Summary {
    let sc = w.sc;
    let names = &sc.resources;
    let (h, used, reserved, cap) = match sc.until {
        Some(u) => (u, w.acc_used.clone(), w.acc_reserved.clone(), w.acc_cap.clone()),
        None => w.acc_at_activity.clone(),
    };
    let mut apps = Vec::new();
    let mut waits = Vec::new();
    for app in &w.apps {
        let state = app.core.as_ref().map_or("New".to_string(), |c| c.state.to_string());
        let wait = app.start.map(|t| s(t - app.submitted));
        if let Some(x) = wait {
            waits.push(x);
        }
        apps.push(AppSummary {
            app: app.id.clone(),
            attempt: app.attempt,
            queue: app.queue.clone(),
            submit: s(app.submitted),
            start: app.start.map(s),
            finish: app.finish.map(s),
            end: app.ended.map(|e| s(e.0)),
            outcome: app.ended.map(|e| e.1.to_string()),
            state,
            wait,
            placeholders: app
                .core
                .iter()
                .flat_map(|c| &c.ph_data)
                .map(|d| TaskGroupCounters { task_group: d.tg.clone(), count: d.count, replaced: d.replaced, timed_out: d.timed_out })
                .collect(),
            placeholders_created: app.created_ph,
            placeholders_replaced: app.replaced,
            placeholders_timed_out: app.timed_out,
            placeholder_timeouts: app.timer_fired,
        });
    }
    waits.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let by_res = |f: &dyn Fn(usize) -> f64| -> BTreeMap<String, f64> { (0..names.len()).map(|r| (names[r].clone(), f(r))).collect() };
    let hours = |r: usize| {
        let unit = match (sc.scales[r], names[r].as_str()) {
            (Scale::Milli, _) => 1000.0,
            (Scale::Base, "memory") => (1u64 << 30) as f64,
            _ => 1.0,
        };
        reserved[r] as f64 / 3_600_000.0 / unit
    };
    let count_outcome = |st: &str| apps.iter().filter(|a| a.outcome.as_deref() == Some(st)).count();
    let cycles: Vec<CycleRow> = w
        .cycles
        .iter()
        .map(|c| CycleRow {
            at: s(c.at),
            decisions: c.decisions,
            placed: c.placed,
            pending: c.pending,
            utilisation: by_res(&|r| if c.cap[r] == 0 { 0.0 } else { c.used[r] as f64 / c.cap[r] as f64 }),
            reserved: by_res(&|r| if c.cap[r] == 0 { 0.0 } else { c.reserved[r] as f64 / c.cap[r] as f64 }),
            solve_millis: c.solve_micros as f64 / 1000.0,
        })
        .collect();
    let solve_millis: f64 = cycles.iter().map(|c| c.solve_millis).sum();
    let wall_millis = wall.as_secs_f64() * 1000.0;
    let totals = Totals {
        apps: apps.len(),
        started: waits.len(),
        never_started: apps.iter().filter(|a| a.start.is_none()).count(),
        completed: count_outcome("Completed"),
        failed: count_outcome("Failed"),
        rejected: count_outcome("Rejected"),
        mean_wait: (!waits.is_empty()).then(|| waits.iter().sum::<f64>() / waits.len() as f64),
        p95_wait: percentile(&waits, 0.95),
        utilisation: by_res(&|r| share(used[r], cap[r])),
        reserved_idle: by_res(&|r| share(reserved[r], cap[r])),
        reserved_idle_hours: by_res(&hours),
        placeholders_created: apps.iter().map(|a| a.placeholders_created).sum(),
        placeholders_replaced: apps.iter().map(|a| a.placeholders_replaced).sum(),
        placeholders_timed_out: apps.iter().map(|a| a.placeholders_timed_out).sum(),
        placeholder_timeouts: apps.iter().map(|a| a.placeholder_timeouts).sum(),
        cycles_run: cycles.len(),
        decisions: cycles.iter().map(|c| c.decisions as u64).sum(),
        decisions_checked: w.decisions_checked,
        check_failures: w.check_failures,
    };
    Summary {
        description: sc.description.clone(),
        solver: w.opts.solver.name().to_string(),
        placeholders: w.opts.placeholders.name().to_string(),
        cycle_period: s(sc.period),
        horizon: s(h),
        totals,
        apps,
        timing: Timing {
            wall_millis,
            solve_millis,
            cycles_per_wall_second: if wall_millis > 0.0 { cycles.len() as f64 / (wall_millis / 1000.0) } else { 0.0 },
        },
        cycles,
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.1}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), fmt_num)
}

/// The event log as aligned text: time, application, kind, then the other fields.
pub fn log_table(log: &[Value]) -> String {
    let mut out = String::new();
    for line in log {
        let Value::Object(m) = line else { continue };
        let at = m.get("at").map(|v| v.to_string()).unwrap_or_default();
        let mut app = m.get("app").and_then(|v| v.as_str()).unwrap_or("").to_string();
        if let Some(n) = m.get("attempt") {
            app = format!("{app}#{n}");
        }
        let kind = m.get("kind").and_then(|v| v.as_str()).unwrap_or("");
        let rest: Vec<String> = m
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "at" | "app" | "attempt" | "kind"))
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect();
        let _ = writeln!(out, "{at:>9}  {app:<16} {kind:<17} {}", rest.join(" "));
    }
    out
}

/// The summary for people: applications, then totals.
pub fn summary_table(sm: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "solver {}, placeholders {}, cycle {} s, horizon {} s",
        sm.solver,
        sm.placeholders,
        fmt_num(sm.cycle_period),
        fmt_num(sm.horizon)
    );
    let _ = writeln!(
        out,
        "{:<18} {:<11} {:>8} {:>8} {:>8} {:>8} {:>8}  placeholders (count/replaced/timedOut)",
        "app", "state", "submit", "start", "wait", "finish", "end"
    );
    for a in &sm.apps {
        let name = if a.attempt > 1 { format!("{}#{}", a.app, a.attempt) } else { a.app.clone() };
        let ph: Vec<String> =
            a.placeholders.iter().map(|c| format!("{} {}/{}/{}", c.task_group, c.count, c.replaced, c.timed_out)).collect();
        let _ = writeln!(
            out,
            "{name:<18} {:<11} {:>8} {:>8} {:>8} {:>8} {:>8}  {}",
            a.state,
            fmt_num(a.submit),
            opt(a.start),
            opt(a.wait),
            opt(a.finish),
            opt(a.end),
            ph.join(", ")
        );
    }
    let t = &sm.totals;
    let _ = writeln!(
        out,
        "\napplications {} (started {}, never started {}, rejected {}); wait mean {} s, p95 {} s",
        t.apps,
        t.started,
        t.never_started,
        t.rejected,
        opt(t.mean_wait),
        opt(t.p95_wait)
    );
    for (r, u) in &t.utilisation {
        let _ = writeln!(
            out,
            "{r:<16} utilisation {:>5.1} %   reserved idle {:>5.1} % ({:.2} unit-hours)",
            u * 100.0,
            t.reserved_idle[r] * 100.0,
            t.reserved_idle_hours[r]
        );
    }
    let _ = writeln!(
        out,
        "placeholders created {}, replaced {}, timed out {}; placeholder timer fired {} times",
        t.placeholders_created, t.placeholders_replaced, t.placeholders_timed_out, t.placeholder_timeouts
    );
    let _ = writeln!(
        out,
        "cycles run {}, decisions {} ({} checked, {} failed check); wall {:.0} ms, solve {:.0} ms, {:.1} cycles per wall second",
        t.cycles_run,
        t.decisions,
        t.decisions_checked,
        t.check_failures,
        sm.timing.wall_millis,
        sm.timing.solve_millis,
        sm.timing.cycles_per_wall_second
    );
    out
}

/// Runs side by side (Markdown).
pub fn compare_table(runs: &[Summary]) -> String {
    let mut out = String::new();
    let res: Vec<String> = runs.first().map(|r| r.totals.utilisation.keys().cloned().collect()).unwrap_or_default();
    let mut head =
        vec!["solver", "placeholders", "apps", "started", "mean wait s", "p95 wait s"].into_iter().map(String::from).collect::<Vec<_>>();
    for r in &res {
        head.push(format!("util {r}"));
    }
    for r in &res {
        head.push(format!("reserved idle {r} (share, unit-h)"));
    }
    head.extend(["ph timeouts", "ph timed out", "cycles", "cycles/wall s"].map(String::from));
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}|", head.iter().map(|_| "---").collect::<Vec<_>>().join("|"));
    for sm in runs {
        let t = &sm.totals;
        let mut row = vec![
            sm.solver.clone(),
            sm.placeholders.clone(),
            t.apps.to_string(),
            t.started.to_string(),
            t.mean_wait.map_or("-".into(), |v| format!("{v:.1}")),
            t.p95_wait.map_or("-".into(), |v| format!("{v:.1}")),
        ];
        for r in &res {
            row.push(format!("{:.1} %", t.utilisation[r] * 100.0));
        }
        for r in &res {
            row.push(format!("{:.2} % ({:.1})", t.reserved_idle[r] * 100.0, t.reserved_idle_hours[r]));
        }
        row.push(t.placeholder_timeouts.to_string());
        row.push(t.placeholders_timed_out.to_string());
        row.push(t.cycles_run.to_string());
        row.push(format!("{:.1}", sm.timing.cycles_per_wall_second));
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentile() {
        let v: Vec<f64> = (1..=20).map(|x| x as f64).collect();
        assert_eq!(percentile(&v, 0.95), Some(19.0));
        assert_eq!(percentile(&v, 1.0), Some(20.0));
        assert_eq!(percentile(&[7.0], 0.95), Some(7.0));
        assert_eq!(percentile(&[], 0.95), None);
    }
}
