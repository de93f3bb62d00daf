//! The `tessera` command line, run as a built binary: exit codes (0 ok, 1 invalid decision
//! in `check`, 2 input or usage error), output formats, `--out` atomicity, and the
//! messages that name what is wrong.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tessera::wire::decision::{Decision, PlacedRow, Status};
use tessera::Instance;

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

fn instance(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("instances").join(name)
}

fn tessera(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("the tessera binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally, not by a signal")
}

/// A fresh scratch directory per test (no tempfile crate).
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn parse_decision(text: &str) -> Decision {
    tessera::wire::from_text(text).unwrap_or_else(|e| panic!("decision does not parse back: {e}\n{text}"))
}

/// quickstart.yaml's hand-computed objective (see tests/instances.rs for the arithmetic):
/// [1000: 2/2, 100: 1/2], no evictions, extraPods 8.
fn assert_quickstart_objective(d: &Decision) {
    let want = vec![PlacedRow { priority: 1000.into(), placed: 2, pending: 2 }, PlacedRow { priority: 100.into(), placed: 1, pending: 2 }];
    assert_eq!(d.objective.placed_by_priority, want);
    assert!(d.objective.evicted_by_priority.is_empty());
    assert_eq!(d.objective.extra_pods, 8);
}

/// Two nodes (big: 8 cpu, small: 2 cpu) and one 4-cpu pod: it can only go on `big`.
const SMALL: &str = r#"
nodes:
  - {name: big, allocatable: {cpu: "8"}}
  - {name: small, allocatable: {cpu: "2"}}
podGroups:
  - name: job
    tasks: [{name: w, count: 1, requests: {cpu: "4"}}]
"#;

// ---------------------------------------------------------------------------------------
// solve
// ---------------------------------------------------------------------------------------

#[test]
fn solve_quickstart_yaml() {
    let q = instance("quickstart.yaml");
    let o = tessera(&["solve", s(&q)]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let d = parse_decision(&stdout(&o));
    assert_eq!(d.status, Status::Optimal);
    assert_quickstart_objective(&d);
    let inst = Instance::from_text(&std::fs::read_to_string(&q).unwrap()).unwrap();
    let report = tessera::check::check(&inst, &d);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
}

#[test]
fn solve_json_output_is_the_same_decision() {
    let q = instance("quickstart.yaml");
    let yaml = tessera(&["solve", s(&q)]);
    let json = tessera(&["solve", s(&q), "--output", "json"]);
    assert_eq!(code(&json), 0, "stderr: {}", stderr(&json));
    let text = stdout(&json);
    assert!(text.trim_start().starts_with('{'), "not JSON: {text}");
    let dj: Decision = serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON does not parse: {e}\n{text}"));
    assert_eq!(dj.status, Status::Optimal);
    assert_quickstart_objective(&dj);
    let dy = parse_decision(&stdout(&yaml));
    assert_eq!(dj.without_timings(), dy.without_timings(), "YAML and JSON outputs carry different decisions");
}

/// `--progress` reports on standard error, one line per objective tier (quickstart has
/// four: groups placed, evictions, elastic pods, packing), and changes nothing in the
/// decision; without it standard error stays empty.
#[test]
fn solve_progress_goes_to_stderr_and_changes_nothing() {
    let q = instance("quickstart.yaml");
    let plain = tessera(&["solve", s(&q)]);
    let with = tessera(&["solve", s(&q), "--progress"]);
    assert_eq!(code(&with), 0, "stderr: {}", stderr(&with));
    assert_eq!(stderr(&plain), "");
    let err = stderr(&with);
    assert!(err.lines().all(|l| l.starts_with("tessera: [")), "{err}");
    assert!(err.contains("4 pending groups; warm start (greedy) places 3"), "{err}");
    for tier in
        ["tier placed@1000+placed@100: proven", "tier evicted@50+evicted@10: proven", "tier extra@1000+extra@100: proven", "tier packing:"]
    {
        assert!(err.contains(tier), "no {tier:?} in:\n{err}");
    }
    let (dp, dw) = (parse_decision(&stdout(&plain)), parse_decision(&stdout(&with)));
    assert_quickstart_objective(&dw);
    assert_eq!(dp.without_timings(), dw.without_timings());
}

/// A one-byte overflow that HiGHS accepts within its tolerance (tests/cases.rs has the
/// arithmetic): `--progress` says the rows were sharpened, and the decision is proven.
#[test]
fn solve_progress_names_a_sharpened_row() {
    let dir = scratch("sharpen");
    let inst = write(&dir, "bytes.yaml", common::ONE_BYTE_OVER);
    let o = tessera(&["solve", s(&inst), "--progress"]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    assert!(stderr(&o).contains("tier placed@0: a solution overflowed a capacity row"), "{}", stderr(&o));
    let d = parse_decision(&stdout(&o));
    assert_eq!(d.status, Status::Optimal);
    assert!(d.placements.is_empty());
}

#[test]
fn solve_out_writes_the_file() {
    let dir = scratch("out");
    let out = dir.join("decision.yaml");
    let o = tessera(&["solve", s(&instance("hetero-fixed-order.yaml")), "--out", s(&out)]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    assert!(stdout(&o).trim().is_empty(), "with --out nothing goes to stdout: {}", stdout(&o));
    let d = parse_decision(&std::fs::read_to_string(&out).expect("--out file written"));
    assert_eq!(d.status, Status::Optimal);
    // Hand: large (8 cpu) only fits big-node, small then only small-node.
    let pods = &d.placements[0].pods;
    assert!(pods.iter().any(|p| p.task == "large" && p.node == "big-node"));
    assert!(pods.iter().any(|p| p.task == "small" && p.node == "small-node"));
    // Only the decision is left behind (no temporary file).
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn solve_reads_standard_input() {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(["solve", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(SMALL.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let d = parse_decision(&stdout(&o));
    assert_eq!(d.placements.len(), 1);
    assert_eq!(d.placements[0].pods[0].node, "big");
}

#[test]
fn bad_quantity_exits_2_names_the_path_and_writes_no_file() {
    let dir = scratch("badq");
    let bad = write(
        &dir,
        "bad.yaml",
        "nodes:\n  - {name: n1, allocatable: {cpu: \"4\", memory: 12Q}}\npodGroups:\n  - {name: g, tasks: [{name: w, count: 1, requests: {cpu: \"1\"}}]}\n",
    );
    let out = dir.join("decision.yaml");
    let o = tessera(&["solve", s(&bad), "--out", s(&out)]);
    assert_eq!(code(&o), 2, "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("nodes[0].allocatable.memory"), "stderr should name the path: {err}");
    assert!(err.contains("12Q"), "stderr should quote the bad value: {err}");
    assert!(!out.exists(), "--out must not be written on an input error");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "only the input file may remain: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_key_exits_2_naming_the_key() {
    let dir = scratch("unknown-key");
    let bad = write(&dir, "bad.yaml", "nodes:\n  - {name: n1, allocatable: {cpu: \"4\"}, colour: red}\n");
    let o = tessera(&["solve", s(&bad)]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("colour"), "stderr should name the key: {err}");
    assert!(err.contains("nodes[0]"), "stderr should name the path: {err}");
    assert!(stdout(&o).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_file_exits_2() {
    let dir = scratch("missing");
    let missing = dir.join("does-not-exist.yaml");
    let o = tessera(&["solve", s(&missing)]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("does-not-exist.yaml"), "stderr should name the file: {}", stderr(&o));
    let o = tessera(&["solve"]);
    assert_eq!(code(&o), 2, "no instance at all is a usage error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn list_solvers() {
    let o = tessera(&["solve", "--list-solvers"]);
    assert_eq!(code(&o), 0);
    let names: Vec<String> = stdout(&o).lines().filter_map(|l| l.split_whitespace().next().map(String::from)).collect();
    assert!(names.contains(&"exact".to_string()), "{names:?}");
    assert!(names.contains(&"ffd".to_string()), "{names:?}");
}

#[test]
fn solve_with_ffd() {
    let q = instance("gang-all-or-nothing.yaml");
    let o = tessera(&["solve", s(&q), "--solver", "ffd"]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let d = parse_decision(&stdout(&o));
    let inst = Instance::from_text(&std::fs::read_to_string(&q).unwrap()).unwrap();
    assert!(tessera::check::check(&inst, &d).violations.is_empty());
}

#[test]
fn bad_time_limit_exits_2() {
    let o = tessera(&["solve", s(&instance("quickstart.yaml")), "--time-limit", "bogus"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--time-limit"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    // A good one is accepted.
    let o = tessera(&["solve", s(&instance("hetero-fixed-order.yaml")), "--time-limit", "5s"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn bad_gap_exits_2() {
    let o = tessera(&["solve", s(&instance("hetero-fixed-order.yaml")), "--gap", "2"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--gap"), "{}", stderr(&o));
}

#[test]
fn unknown_solver_exits_2() {
    let o = tessera(&["solve", s(&instance("quickstart.yaml")), "--solver", "simulated-annealing"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("simulated-annealing"), "{err}");
    assert!(err.contains("exact"), "should list the available solvers: {err}");
    assert!(stdout(&o).is_empty());
}

// ---------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------

#[test]
fn check_accepts_the_solvers_own_decision() {
    let dir = scratch("check-ok");
    let q = instance("quickstart.yaml");
    let out = dir.join("d.yaml");
    assert_eq!(code(&tessera(&["solve", s(&q), "--out", s(&out)])), 0);
    let o = tessera(&["check", s(&q), s(&out)]);
    assert_eq!(code(&o), 0, "stdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.lines().any(|l| l.trim() == "VALID"), "{text}");
    assert!(!text.contains("INVALID"), "{text}");
    // The objective, as computed by hand: [1000: 2/2, 100: 1/2], extra pods 8.
    assert!(text.contains("1000: 2/2"), "{text}");
    assert!(text.contains("100: 1/2"), "{text}");
    assert!(text.contains("extra pods: 8"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_accepts_a_json_decision() {
    let dir = scratch("check-json");
    let q = instance("selectors-taints.yaml");
    let out = dir.join("d.json");
    assert_eq!(code(&tessera(&["solve", s(&q), "--output", "json", "--out", s(&out)])), 0);
    let o = tessera(&["check", s(&q), s(&out)]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Solves SMALL, then corrupts the decision with `corrupt`; `check` must exit 1 and print
/// every `fragment`.
fn check_corrupted(test: &str, corrupt: fn(&mut Decision), fragments: &[&str]) {
    let dir = scratch(test);
    let inst = write(&dir, "inst.yaml", SMALL);
    let o = tessera(&["solve", s(&inst)]);
    assert_eq!(code(&o), 0);
    let mut d = parse_decision(&stdout(&o));
    // Hand: the 4-cpu pod only fits `big`.
    assert_eq!(d.placements[0].pods[0].node, "big");
    corrupt(&mut d);
    let bad = write(&dir, "bad.yaml", &d.to_yaml());
    let o = tessera(&["check", s(&inst), s(&bad)]);
    assert_eq!(code(&o), 1, "stdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("INVALID"), "{text}");
    for f in fragments {
        assert!(text.contains(f), "check output should contain {f:?}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_rejects_a_pod_moved_to_a_too_small_node() {
    // 4 cpu on `small` (2 cpu): rule 1, capacity.
    check_corrupted("check-move", |d| d.placements[0].pods[0].node = "small".into(), &["rule 1", "small", "cpu"]);
}

#[test]
fn check_rejects_a_misreported_objective() {
    check_corrupted("check-objective", |d| d.objective.extra_pods = 3, &["rule 0", "extraPods"]);
}

#[test]
fn check_rejects_a_dropped_group() {
    // The placed group is removed but its objective row still says placed: 1.
    check_corrupted("check-dropped", |d| d.placements.clear(), &["job"]);
}

#[test]
fn check_bad_decision_file_exits_2() {
    let dir = scratch("check-garbage");
    let inst = write(&dir, "inst.yaml", SMALL);
    let bad = write(&dir, "bad.yaml", "status: Optimal\nplacements: 7\n");
    let o = tessera(&["check", s(&inst), s(&bad)]);
    assert_eq!(code(&o), 2, "stdout: {}", stdout(&o));
    assert!(stderr(&o).contains("bad.yaml"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// generate, export-lp
// ---------------------------------------------------------------------------------------

#[test]
fn generate_is_deterministic_per_seed() {
    let a = tessera(&["generate", "--class", "tiny", "--seed", "7"]);
    let b = tessera(&["generate", "--class", "tiny", "--seed", "7"]);
    let c = tessera(&["generate", "--class", "tiny", "--seed", "8"]);
    assert_eq!(code(&a), 0, "{}", stderr(&a));
    assert_eq!(code(&c), 0, "{}", stderr(&c));
    assert!(!stdout(&a).is_empty());
    assert_eq!(stdout(&a), stdout(&b), "same seed, different output");
    assert_ne!(stdout(&a), stdout(&c), "different seeds, same output");
    // The output is a valid instance that the exact solver handles.
    let inst = Instance::from_text(&stdout(&a)).unwrap_or_else(|e| panic!("generated instance is invalid: {e}"));
    let d = tessera::SolverKind::from_name("exact").unwrap().solve(&inst, &Default::default());
    assert!(tessera::check::check(&inst, &d).violations.is_empty());
}

#[test]
fn generate_list_and_unknown_class() {
    let o = tessera(&["generate", "--list"]);
    assert_eq!(code(&o), 0);
    let names: Vec<String> = stdout(&o).lines().filter_map(|l| l.split_whitespace().next().map(String::from)).collect();
    assert!(names.contains(&"tiny".to_string()), "{names:?}");
    let o = tessera(&["generate", "--class", "no-such-class"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn export_lp_prints_an_lp() {
    let o = tessera(&["export-lp", s(&instance("hetero-fixed-order.yaml"))]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.lines().any(|l| l.trim() == "Maximize"), "{text}");
    assert!(text.lines().any(|l| l.trim() == "Subject To"), "{text}");
    assert!(text.lines().any(|l| l.trim() == "End"), "{text}");
    let maxi = text.find("Maximize").unwrap();
    let st = text.find("Subject To").unwrap();
    assert!(maxi < st, "objective before constraints");
}

/// The `.lp` files in `models/` are what `models/cycle.md` walks through row by row: each
/// must be what `export-lp` writes for its instance today, so a model change cannot leave
/// them stale.
#[test]
fn the_lp_files_in_models_are_fresh_exports() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut checked = 0;
    for entry in std::fs::read_dir(&models).unwrap() {
        let lp = entry.unwrap().path();
        if lp.extension().and_then(|e| e.to_str()) != Some("lp") {
            continue;
        }
        let stem = lp.file_stem().unwrap().to_str().unwrap().to_string();
        let beside = models.join(format!("{stem}.yaml"));
        let source = if beside.exists() { beside } else { instance(&format!("{stem}.yaml")) };
        let o = tessera(&["export-lp", s(&source)]);
        assert_eq!(code(&o), 0, "{stem}: {}", stderr(&o));
        let want = std::fs::read_to_string(&lp).unwrap();
        assert!(
            stdout(&o) == want,
            "models/{stem}.lp differs from `tessera export-lp {}`; re-export it (models/README.md)",
            source.display()
        );
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} .lp files found in models/");
}

#[test]
fn export_lp_writes_a_later_tier_with_the_earlier_values_as_floors() {
    // The values come from the decision: stats.tierValues, one per tier solved. By hand:
    // gang-4 cannot fit (three 4-cpu nodes, four 3-cpu pods), best-effort places all ten
    // pods, nine beyond its minimum.
    let inst = instance("gang-all-or-nothing.yaml");
    let o = tessera(&["solve", s(&inst), "--output", "json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let values = d["stats"]["tierValues"].as_array().expect("tierValues").clone();
    assert_eq!(values.len(), 3, "{values:?}");
    assert_eq!(values[1].as_f64(), Some(9.0));
    let t1 = values[0].as_f64().unwrap().to_string();
    let o = tessera(&["export-lp", s(&inst), "--tier", "2", "--fix", &t1]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains(&format!("\\ Floor row: placed@100 + placed@1 >= {t1}.")), "{text}");
    assert!(text.contains("\\ The objective below is tier 2."), "{text}");
    let o = tessera(&["export-lp", s(&inst), "--tier", "2"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--tier 2 needs the values of the 1 earlier tier(s) in --fix, got 0"), "{}", stderr(&o));
    let o = tessera(&["export-lp", s(&inst), "--tier", "7", "--fix", "1,2,3,4,5,6"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--tier 7: this model has tiers 1 to 3"), "{}", stderr(&o));
}

#[test]
fn export_lp_bad_input_exits_2() {
    let dir = scratch("lp-bad");
    let bad = write(&dir, "bad.yaml", "nodes:\n  - {name: n1, allocatable: {memory: 12Q}}\n");
    let o = tessera(&["export-lp", s(&bad)]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("nodes[0].allocatable.memory"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The look-ahead end to end (models/cycle.md 6.7), started at once
/// (`TESSERA_LOOK_AHEAD_PATIENCE_MS=0`) on a cycle large enough for the search and with
/// victims (`preempt-256` seed 1), against the same cycle without it. Term 1 comes
/// first: the look-ahead may not cost a group once term 1 is proven, may not claim
/// term 1 when it is not, and its decision must pass `tessera check`. (Which run proves
/// term 1 within the budget depends on the machine; the assertions hold either way.)
#[test]
fn the_look_ahead_never_costs_a_proven_term_1() {
    let dir = scratch("look-ahead");
    let inst = dir.join("preempt-256-1.yaml");
    let o = tessera(&["generate", "--class", "preempt-256", "--seed", "1", "--out", s(&inst)]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let solve = |env: (&str, &str)| {
        // The compact model alone: at 256 nodes with victims the decomposition engine
        // would prove term 1 first, and the look-ahead is the compact model's.
        let o = Command::new(BIN)
            .env(env.0, env.1)
            .env("TESSERA_ENGINE", "compact")
            .args(["solve", s(&inst), "--time-limit", "12s"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
        let out = dir.join(format!("{}.yaml", env.0));
        std::fs::write(&out, stdout(&o)).unwrap();
        let c = tessera(&["check", s(&inst), s(&out)]);
        assert_eq!(code(&c), 0, "{} {}: {}", env.0, env.1, stdout(&c));
        parse_decision(&stdout(&o))
    };
    let forced = solve(("TESSERA_LOOK_AHEAD_PATIENCE_MS", "0"));
    let plain = solve(("TESSERA_NO_LOOK_AHEAD", "1"));
    let term1 = |d: &Decision| d.stats.terms_proven.as_ref().is_some_and(|t| t.contains(&1));
    let placed = |d: &Decision| d.objective.placed_by_priority.iter().map(|r| r.placed).collect::<Vec<_>>();
    let ran = &forced.stats.look_ahead.as_ref().expect("the look-ahead ran").tier;
    assert!(ran.starts_with("evicted@"), "the look-ahead ran: {:?}", forced.stats);
    assert!(plain.stats.look_ahead.is_none());
    // Under rule 6's witness rows term 1 of this cycle is no longer proven within the
    // budget by either run; whatever is proven must agree, and what is not proven must
    // say so (an open row, a positive gap).
    for d in [&forced, &plain] {
        if !term1(d) {
            assert_eq!(d.status, Status::Feasible);
            assert!(d.gap > 0.0, "{:?}", d.stats);
        }
    }
    if term1(&forced) && term1(&plain) {
        assert_eq!(placed(&forced), placed(&plain), "both proven: the same optimum");
    } else if term1(&plain) {
        assert!(placed(&forced) <= placed(&plain), "{:?} beats the proven optimum {:?}", placed(&forced), placed(&plain));
    } else if term1(&forced) {
        assert!(placed(&plain) <= placed(&forced), "{:?} beats the proven optimum {:?}", placed(&plain), placed(&forced));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `simulate --openb --emit-scenario` writes the generated scenario; replaying that file
/// gives the same event log and summary as generating it in place. The progress lines
/// (standard error is not a terminal here) go to standard error only.
#[test]
fn simulate_emitted_openb_scenario_replays_the_same_run() {
    let dir = scratch("emit-scenario");
    let file = dir.join("day.yaml");
    let gen = ["--openb", "64", "--hours", "0.25"];
    let o = tessera(&[&["simulate"][..], &gen, &["--emit-scenario", "--out", s(&file)]].concat());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = std::fs::read_to_string(&file).expect("the scenario was written");
    assert!(text.contains("cyclePeriod") && text.contains("submit"), "{text}");
    let run = ["--solver", "ffd", "--check"];
    let direct = tessera(&[&["simulate"][..], &gen, &run].concat());
    let replay = tessera(&[&["simulate", s(&file)][..], &run].concat());
    assert_eq!(code(&direct), 0, "{}", stderr(&direct));
    assert_eq!(code(&replay), 0, "{}", stderr(&replay));
    // The summary's wall-clock timing differs between runs; everything before it must not.
    let body = |o: &Output| stdout(o).lines().filter(|l| !l.contains("\"kind\":\"summary\"")).map(String::from).collect::<Vec<_>>();
    assert!(body(&direct).len() > 10, "a quarter hour on 64 nodes has events");
    assert_eq!(body(&direct), body(&replay));
    assert!(stderr(&direct).contains("% of simulated time") && stderr(&direct).contains("ffd / yunikorn: done"), "{}", stderr(&direct));
    assert!(!stdout(&direct).contains("simulated time"));
}

/// `bench --suite scale --work-limit`: every solve gets the work limit, so two runs of the
/// suite write the same decisions (timings aside), each valid, and the report says so.
#[test]
fn scale_suite_with_a_work_limit_repeats_its_decisions() {
    let dir = scratch("scale-work");
    let run = |sub: &str| {
        let out = dir.join(sub);
        let args = ["bench", "--suite", "scale", "--classes", "flat-64", "--seeds", "2", "--ratio-seeds", "0", "--work-limit", "5"];
        let o = tessera(&[&args[..], &["--time-limit", "120s", "--out", out.to_str().unwrap()]].concat());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stdout(&o).contains("work limit 5"), "{}", stdout(&o));
        out
    };
    let (a, b) = (run("a"), run("b"));
    for seed in [1, 2] {
        let read = |dir: &Path| -> Decision {
            let text = std::fs::read_to_string(dir.join("decisions").join(format!("flat-64-s{seed}.json"))).unwrap();
            serde_json::from_str(&text).unwrap()
        };
        let (da, db) = (read(&a), read(&b));
        assert!(da.stats.work.is_some(), "seed {seed}: no work reported");
        assert_eq!(
            serde_json::to_string(&da.without_timings()).unwrap(),
            serde_json::to_string(&db.without_timings()).unwrap(),
            "seed {seed}: the two runs decide differently"
        );
    }
    // Another suite refuses the flag rather than ignoring it.
    let o = tessera(&["bench", "--suite", "flat", "--work-limit", "5"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--work-limit"), "{}", stderr(&o));
}
