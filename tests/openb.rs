//! The classes built from Alibaba's openb GPU-cluster trace (`tessera generate --class
//! openb-*`, `src/generate/openb.rs`), end to end: every solver's decision on such a cycle
//! passes the independent validator, the exact solver is never worse than the baselines,
//! and a missing trace is an error that names the folder. The trace is read from
//! `../shared/data/openb` (or `TESSERA_OPENB_DIR`); these tests fail, not skip, without it.

use std::cmp::Ordering;
use std::process::Command;
use std::time::Duration;
use tessera::tooling::generate;
use tessera::{check, Instance, Options, SolverKind};

/// Real shapes, preemption on (trace BE pods are preemptible): every solver's decision
/// is valid and reports the objective the validator recomputes; exact (warm-started from
/// the best greedy, then HiGHS) is at least as good as every heuristic on terms 1-3.
#[test]
fn every_decision_on_openb_cycles_passes_check_and_exact_is_never_worse() {
    for seed in [1, 2] {
        let doc = generate::generate("openb-64", seed).unwrap_or_else(|e| panic!("the openb trace: {e}"));
        let inst = Instance::from_doc(&doc).unwrap();
        let cfg = Options { time_limit: Some(Duration::from_secs(3)), ..Default::default() };
        let exact = SolverKind::from_name("exact").unwrap().solve(&inst, &cfg);
        for s in SolverKind::ALL {
            let d = if s.name() == "exact" { exact.clone() } else { s.solve(&inst, &cfg) };
            let report = check::check(&inst, &d);
            assert!(report.violations.is_empty(), "seed {seed}, {}: {:#?}", s.name(), report.violations);
            assert_eq!(d.objective, report.objective, "seed {seed}, {}: misreported objective", s.name());
            assert_ne!(exact.objective.compare(&d.objective), Ordering::Less, "seed {seed}: exact worse than {}", s.name());
        }
        assert!(!exact.placements.is_empty(), "seed {seed}: nothing placed");
    }
}

/// Without the trace, `tessera generate` exits 2 naming the folder and the variable that
/// points to it, and writes no file.
#[test]
fn a_missing_trace_is_an_error_naming_where_it_was_looked_for() {
    let dir = std::env::temp_dir().join(format!("tessera-openb-missing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("cycle.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["generate", "--class", "openb-256", "--seed", "1", "--out", out.to_str().unwrap()])
        .env("TESSERA_OPENB_DIR", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(dir.to_str().unwrap()) && err.contains("openb_node_list_all_node.csv") && err.contains("TESSERA_OPENB_DIR"),
        "{err}"
    );
    assert!(!out.exists(), "a file was written");
    let _ = std::fs::remove_dir_all(&dir);
}
