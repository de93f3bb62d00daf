//! `tessera compare` and `tessera bench --suite gap`: one row per (instance, solver), the
//! gap to exact, every decision checked (a failing one flagged), the csv/json/markdown
//! renderings, and a smoke run of the gap suite writing its files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tessera::tooling::compare::{self, Contender, Format, Report, Verdict};
use tessera::wire::decision::{EvictedRow, Objective, PlacedRow};
use tessera::{Decision, Instance, Options, SolverKind, Status};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const SMALL: &[&str] = &["hetero-fixed-order.yaml", "quickstart.yaml", "priority-tiers.yaml"];

fn instance_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("instances").join(name)
}

fn load(names: &[&str]) -> Vec<(String, Instance)> {
    names
        .iter()
        .map(|n| {
            let text = std::fs::read_to_string(instance_path(n)).unwrap();
            (n.to_string(), Instance::from_text(&text).unwrap())
        })
        .collect()
}

fn pick(names: &[&str]) -> Vec<Contender> {
    names.iter().map(|n| Contender::of(SolverKind::from_name(n).unwrap_or_else(|| panic!("solver {n} in the registry")))).collect()
}

fn cfg() -> Options {
    Options { time_limit: Some(std::time::Duration::from_secs(10)), ..Default::default() }
}

fn exact_vs_ffd() -> Report {
    let mut calls = 0;
    let r = compare::compare(&load(SMALL), &pick(&["exact", "ffd"]), &cfg(), &mut |done, total, _| {
        calls += 1;
        assert_eq!(done, calls);
        assert_eq!(total, 6);
    });
    assert_eq!(calls, 6, "progress is called once per solve");
    r
}

fn tessera(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("the tessera binary runs")
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-compare-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Minimal RFC 4180 reader (quoted fields with commas and doubled quotes).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => fields.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        fields.push(cur);
        rows.push(fields);
    }
    rows
}

#[test]
fn one_row_per_instance_and_solver_all_checked() {
    let r = exact_vs_ffd();
    assert_eq!(r.rows.len(), SMALL.len() * 2);
    for inst in SMALL {
        for s in ["exact", "ffd"] {
            let n = r.rows.iter().filter(|x| x.instance == *inst && x.solver == s).count();
            assert_eq!(n, 1, "{inst} / {s}");
        }
    }
    for row in &r.rows {
        assert!(row.valid, "{} / {} fails check: {:?}", row.instance, row.solver, row.violations);
        assert_eq!(row.check_text(), "ok");
        assert!(row.millis >= 0.0);
        assert_eq!(row.placed, row.placed_by_priority.iter().map(|p| p.placed).sum::<i64>());
    }
    // The exact row relates to itself as equal with zero gap.
    for row in r.rows.iter().filter(|x| x.solver == "exact") {
        assert_eq!(row.status, Status::Optimal);
        assert_eq!(row.vs_exact, Some(Verdict::Equal));
        assert_eq!(row.placed_gap, Some(0.0));
    }
    assert_eq!(r.summary.len(), 2);
    assert_eq!(r.summary[0].solver, "exact");
    assert_eq!(r.summary[1].solver, "ffd");
    assert_eq!(r.summary[1].instances, SMALL.len());
    assert_eq!(r.summary[1].compared, SMALL.len());
    assert_eq!(r.summary[1].equal_to_exact + r.summary[1].worse_than_exact, SMALL.len());
    assert_eq!(r.summary.iter().map(|s| s.invalid).sum::<usize>(), 0);
}

#[test]
fn ffd_is_never_better_than_exact() {
    let r = exact_vs_ffd();
    for inst in SMALL {
        let e = r.rows.iter().find(|x| x.instance == *inst && x.solver == "exact").unwrap();
        let f = r.rows.iter().find(|x| x.instance == *inst && x.solver == "ffd").unwrap();
        assert_ne!(e.objective().compare(&f.objective()), std::cmp::Ordering::Less, "{inst}: ffd better than exact");
        assert!(!matches!(f.vs_exact, Some(Verdict::Better { .. })), "{inst}: {:?}", f.vs_exact);
        assert!(f.placed_gap.unwrap() >= 0.0 || matches!(f.vs_exact, Some(Verdict::Worse { .. })));
    }
    assert_eq!(r.summary[1].better_than_exact, 0);
}

#[test]
fn verdict_names_the_first_term_where_it_loses() {
    let o = |placed: &[(i64, i64, i64)], ev: &[(i64, i64)], extra: i64| Objective {
        placed_by_priority: placed
            .iter()
            .map(|&(priority, placed, pending)| PlacedRow { priority: priority.into(), placed, pending })
            .collect(),
        evicted_by_priority: ev.iter().map(|&(priority, pods)| EvictedRow { priority, pods }).collect(),
        extra_pods: extra,
        extra_by_priority: vec![],
    };
    let exact = o(&[(1000, 3, 4), (100, 5, 9)], &[(0, 2)], 4);
    // Short at the highest level, though it places more low-priority groups.
    let v = compare::verdict(&o(&[(1000, 1, 4), (100, 8, 9)], &[], 0), &exact);
    assert_eq!(v, Verdict::Worse { term: "placed".into(), detail: "placed@1000 -2".into() });
    assert_eq!(v.short(), "worse: placed@1000 -2");
    // Same groups, more victims.
    let v = compare::verdict(&o(&[(1000, 3, 4), (100, 5, 9)], &[(0, 5)], 4), &exact);
    assert_eq!(v.short(), "worse: victims@0 +3");
    // Same groups and victims, fewer extra pods.
    let v = compare::verdict(&o(&[(1000, 3, 4), (100, 5, 9)], &[(0, 2)], 0), &exact);
    assert_eq!(v.short(), "worse: extra -4");
    // Fewer victims is better (exact not proven).
    let v = compare::verdict(&o(&[(1000, 3, 4), (100, 5, 9)], &[], 4), &exact);
    assert_eq!(v.short(), "better: victims@0 -2");
    assert_eq!(compare::verdict(&exact, &exact), Verdict::Equal);
    // The scalar gap.
    assert_eq!(compare::placed_gap(6, 8), 0.25);
    assert_eq!(compare::placed_gap(0, 0), 0.0);
    assert_eq!(compare::placed_gap(9, 8), -0.125);
    assert_eq!(compare::placed_gap(0, 4), 1.0);
}

#[test]
fn csv_json_markdown_and_table_render() {
    let r = exact_vs_ffd();
    // CSV: a header and one record per row, every record as wide as the header.
    let csv = compare::render(&r, Format::Csv);
    let recs = parse_csv(&csv);
    assert_eq!(recs.len(), 1 + r.rows.len());
    assert_eq!(recs[0], compare::CSV_HEADER.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    for rec in &recs[1..] {
        assert_eq!(rec.len(), compare::CSV_HEADER.len(), "{rec:?}");
        assert_eq!(rec[11], "ok");
    }
    let col = |name: &str| compare::CSV_HEADER.iter().position(|h| *h == name).unwrap();
    let hetero_ffd = recs.iter().find(|x| x[0] == "hetero-fixed-order.yaml" && x[3] == "ffd").unwrap();
    assert_eq!(hetero_ffd[col("placed_by_priority")], "0:1/1");
    // Extra pods per level add up to the total, and some row has them.
    let mut levels_seen = 0;
    for rec in &recs[1..] {
        let levels = &rec[col("extra_by_priority")];
        let total: i64 = rec[col("extra_pods")].parse().unwrap();
        if levels == "-" {
            assert_eq!(total, 0, "{rec:?}");
            continue;
        }
        let sum: i64 = levels.split(' ').map(|l| l.split_once(':').unwrap().1.parse::<i64>().unwrap()).sum();
        assert_eq!(sum, total, "{rec:?}");
        levels_seen += 1;
    }
    assert!(levels_seen > 0, "no row with extra pods per level: {csv}");
    // The table shows them too, next to the total (quickstart: 8 = 6 + 2).
    let quick = r.rows.iter().find(|x| x.instance == "quickstart.yaml" && x.solver == "exact").unwrap();
    assert_eq!(quick.extra_text(), format!("{} ({})", quick.extra_pods, quick.extra_levels()));
    assert!(compare::render(&r, Format::Table).contains(&quick.extra_text()));
    // JSON parses and carries rows and summary.
    let json: serde_json::Value = serde_json::from_str(&compare::render(&r, Format::Json)).expect("json parses");
    assert_eq!(json["rows"].as_array().unwrap().len(), r.rows.len());
    assert_eq!(json["summary"].as_array().unwrap().len(), 2);
    assert_eq!(json["rows"][0]["solver"], "exact");
    assert_eq!(json["rows"][0]["vsExact"]["verdict"], "equal");
    // Markdown: two tables, a line per row and per solver.
    let md = compare::render(&r, Format::Markdown);
    assert!(md.starts_with("| instance | solver |"), "{md}");
    let table_lines = md.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| instance") && !l.starts_with("| solver")).count();
    assert_eq!(table_lines, r.rows.len() + r.summary.len());
    // Terminal table: aligned columns with every instance and solver.
    let t = compare::render(&r, Format::Table);
    for inst in SMALL {
        assert!(t.contains(inst));
    }
    assert!(t.contains("ffd") && t.contains("vs exact") && t.contains("median ms"));
}

/// A broken "heuristic": places a pod on a node that does not exist.
fn broken(inst: &Instance, cfg: &Options) -> Decision {
    let mut d = SolverKind::Ffd.solve(inst, cfg);
    if let Some(p) = d.placements.first_mut() {
        p.pods[0].node = "no-such-node".into();
    }
    d
}

#[test]
fn a_failing_decision_is_flagged_not_hidden() {
    let list = vec![Contender::of(SolverKind::Exact), Contender::custom("broken", broken)];
    let r = compare::compare(&load(&["hetero-fixed-order.yaml"]), &list, &cfg(), &mut |_, _, _| {});
    assert_eq!(r.rows.len(), 2);
    let bad = &r.rows[1];
    assert!(!bad.valid && !bad.violations.is_empty());
    assert!(bad.check_text().starts_with("FAIL"));
    assert_eq!(r.invalid().count(), 1);
    assert_eq!(r.summary[1].invalid, 1);
    let t = compare::render(&r, Format::Table);
    assert!(t.contains("FAIL") && t.contains("!! 1 decision(s) FAIL check"), "{t}");
    assert!(compare::render(&r, Format::Markdown).contains("FAIL check"));
    let csv = compare::render(&r, Format::Csv);
    assert!(parse_csv(&csv)[2][11] == "FAIL");
}

#[test]
fn cli_compare_csv_exits_0() {
    let p = instance_path("hetero-fixed-order.yaml");
    let o = tessera(&["compare", p.to_str().unwrap(), "--solvers", "exact,ffd", "--format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let recs = parse_csv(&out);
    assert_eq!(recs.len(), 3, "{out}");
    assert_eq!(recs[0][0], "instance");
    assert_eq!(recs[1][3], "exact");
    assert_eq!(recs[2][3], "ffd");
    // Default format: the aligned table, every solver of the registry by default.
    let o = tessera(&["compare", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), SolverKind::ALL.len());
}

#[test]
fn cli_compare_errors_name_the_file_and_exit_2() {
    let dir = scratch("errors");
    let missing = dir.join("missing.yaml");
    let o = tessera(&["compare", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.yaml"));
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "nodes:\n  - {name: n1, allocatable: {cpu: \"lots\"}}\npodGroups: []\n").unwrap();
    let good = instance_path("quickstart.yaml");
    let o = tessera(&["compare", good.to_str().unwrap(), bad.to_str().unwrap(), "--solvers", "ffd"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.yaml") && err.contains("nodes[0]"), "{err}");
    let o = tessera(&["compare", good.to_str().unwrap(), "--solvers", "exact,nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_gap_suite_smoke() {
    let dir = scratch("gap");
    let out = dir.join("report");
    let o = tessera(&["bench", "--suite", "gap", "--out", out.to_str().unwrap(), "--classes", "tiny,hetero-trap", "--seeds", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["results.csv", "summary.md", "gap-distribution.svg", "time-vs-nodes.svg"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    for f in ["gap-distribution.svg", "time-vs-nodes.svg"] {
        let svg = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(svg.starts_with("<svg"), "{f}: {}", &svg[..svg.len().min(80)]);
        assert!(svg.trim_end().ends_with("</svg>"));
    }
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let recs = parse_csv(&csv);
    let n_solvers = SolverKind::ALL.len();
    assert_eq!(recs.len(), 1 + 2 * n_solvers, "header + 2 instances x {n_solvers} solvers");
    assert_eq!(&recs[0][..3], &["class", "seed", "time_limit_ms"]);
    assert!(recs[1..].iter().all(|r| r[3 + 11] == "ok"), "every decision passes check");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("tessera bench --suite gap"), "the command is in summary.md");
    assert!(md.contains("### tiny") && md.contains("### hetero-trap"));
    assert!(md.contains("gap-distribution.svg"));
    // The gap suite needs --out; the old suites refuse it.
    assert_eq!(tessera(&["bench", "--suite", "gap"]).status.code(), Some(2));
    assert_eq!(tessera(&["bench", "--suite", "flat", "--out", out.to_str().unwrap()]).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
