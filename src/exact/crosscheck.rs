//! A second MILP solver checks HiGHS: every tier of the cycle models of random tiny
//! instances is solved by HiGHS and by `good_lp` with its pure-Rust `microlp` backend,
//! and both must find the same optimum. HiGHS has returned a wrong "Optimal" here before
//! (a MIP start translated wrongly into its presolved space; see `highs.rs`), and the
//! exact engine's proofs are only as good as its solver's.

use super::highs::{self, Mip, MipParams, MipStatus, INF};
use super::milp::{tier_value, CycleModel};
use crate::engine::cycle::Cycle;
use crate::model::Instance;
use good_lp::{microlp, variable, variables, Expression, ResolutionError, Solution, SolverModel, Variable};
use std::time::{Duration, Instant};

/// The optimum of `mip` (maximize its `col_cost`) by microlp; `None` if infeasible.
fn microlp_optimum(mip: &Mip) -> Option<f64> {
    let mut vars = variables!();
    let cols: Vec<Variable> = (0..mip.num_cols())
        .map(|c| {
            let mut v = variable().min(mip.col_lower[c]);
            if mip.col_upper[c] < INF {
                v = v.max(mip.col_upper[c]);
            }
            if mip.col_integer[c] {
                v = v.integer();
            }
            vars.add(v)
        })
        .collect();
    let expr = |entries: &[(usize, f64)]| -> Expression { entries.iter().map(|&(c, a)| a * cols[c]).sum() };
    let objective = expr(&mip.col_cost.iter().copied().enumerate().filter(|&(_, a)| a != 0.0).collect::<Vec<_>>());
    let mut model = vars.maximise(objective.clone()).using(microlp);
    for row in &mip.rows {
        let e = expr(&row.entries);
        if row.lower > -INF {
            model = model.with(e.clone().geq(row.lower));
        }
        if row.upper < INF {
            model = model.with(e.leq(row.upper));
        }
    }
    match model.solve() {
        Ok(solution) => Some(solution.eval(&objective)),
        Err(ResolutionError::Infeasible) => None,
        Err(e) => panic!("microlp failed: {e}"),
    }
}

fn highs_optimum(mip: &Mip) -> Option<(f64, Vec<f64>)> {
    let res = highs::solve(mip, None, &MipParams::until(Instant::now() + Duration::from_secs(60), 0.0, 0.0));
    match res.status {
        MipStatus::Optimal => Some((res.objective, res.values)),
        MipStatus::Infeasible => None,
        s => panic!("HiGHS did not finish a tiny model: {s:?}"),
    }
}

/// Solves every tier of `inst`'s model with both solvers, each tier with the earlier ones
/// held at HiGHS's optimum; returns how many tiers were compared.
fn compare_tiers(inst: &Instance, what: &str) -> usize {
    let cycle = Cycle::new(inst);
    let model = CycleModel::build(&cycle);
    let mut mip = model.mip.clone();
    let tiers = model.tiers();
    for (i, tier) in tiers.iter().enumerate() {
        mip.col_cost.iter_mut().for_each(|c| *c = 0.0);
        for &(c, a) in &tier.coefs {
            mip.col_cost[c] = a;
        }
        let h = highs_optimum(&mip);
        let m = microlp_optimum(&mip);
        let (hv, values) = match (h, m) {
            (Some((hv, values)), Some(mv)) => {
                assert!(
                    (hv - mv).abs() <= 1e-6 * hv.abs().max(1.0),
                    "{what}, tier {} ({}): HiGHS {hv}, microlp {mv}",
                    i + 1,
                    tier.names.join("+")
                );
                (hv, values)
            }
            (None, None) => panic!("{what}: tier {} infeasible for both, but the empty placement is always feasible", i + 1),
            (h, m) => panic!("{what}, tier {}: HiGHS {:?}, microlp {m:?}", i + 1, h.map(|h| h.0)),
        };
        assert!((tier_value(&tier.coefs, &values) - hv).abs() <= 1e-6 * hv.abs().max(1.0));
        // Held at its optimum for the tiers after it (integer-valued for terms 1-3).
        let floor = if tier.exact { hv.round() - 0.5 } else { hv - 1e-6 * hv.abs().max(1.0) };
        mip.add_row(floor, INF, tier.coefs.clone());
    }
    tiers.len()
}

#[test]
fn highs_and_microlp_agree_on_every_tier_of_tiny_cycles() {
    let mut tiers = 0;
    let mut instances = 0;
    for (class, seeds) in [("tiny", 0..120u64), ("tiny-queues", 0..40u64)] {
        for seed in seeds {
            let doc = crate::tooling::generate::generate(class, seed).expect("a class of the generator");
            let inst = Instance::from_doc(&doc).expect("generated instances are valid");
            tiers += compare_tiers(&inst, &format!("{class} seed {seed}"));
            instances += 1;
        }
    }
    // Every tiny cycle has at least its term-1 tier; most have several.
    assert!(tiers > instances, "{tiers} tiers over {instances} instances");
}
