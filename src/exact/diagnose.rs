//! Entry points for tooling around the exact engine: a tier of the cycle MILP as an LP
//! file (to replay a hard tier in another solver), and the candidate-screening phase
//! timed alone (for the topology benchmark).

use super::{candidates, milp, topology};
use crate::engine::cycle;
use crate::exact::highs;
use crate::model::{GroupId, Instance};
use std::time::Duration;

/// The cycle MILP of an instance in CPLEX LP format with the objective of tier `tier`
/// (1-based; `models/*.lp` show tier 1) and one floor row per earlier tier at its value
/// in `fixed` (a decision's `stats.tierValues`). That is the model the exact solver hands
/// HiGHS for the tier, less what it adds while solving (the cutoff, and with
/// `Diagnostics::cut` / `Diagnostics::min_pods` the term-1 cut and group minimums as equalities;
/// models/cycle.md 6.1), so a hard tier can be replayed in another solver.
pub fn export_lp(inst: &Instance, tier: usize, fixed: &[f64]) -> Result<String, String> {
    let (header, mip) = tier_model(inst, tier, fixed)?;
    Ok(header + &mip.to_lp())
}

fn tier_model(inst: &Instance, tier: usize, fixed: &[f64]) -> Result<(String, highs::Mip), String> {
    let cycle = cycle::Cycle::new(inst);
    let model = milp::CycleModel::build(&cycle);
    let tiers = model.tiers();
    if tier == 0 || tier > tiers.len() {
        return Err(format!("--tier {tier}: this model has tiers 1 to {}", tiers.len()));
    }
    if fixed.len() != tier - 1 {
        return Err(format!("--tier {tier} needs the values of the {} earlier tier(s) in --fix, got {}", tier - 1, fixed.len()));
    }
    let mut mip = model.mip;
    let mut header = String::from("\\ Objective tiers, solved in order (each fixed before the next):\n");
    for (i, t) in tiers.iter().enumerate() {
        header.push_str(&format!("\\   tier {}: {} ({})\n", i + 1, t.names.join(" + "), if t.exact { "proven" } else { "best effort" }));
    }
    for &(c, v) in &tiers[tier - 1].coefs {
        mip.col_cost[c] = v;
    }
    for (i, (t, &v)) in tiers.iter().zip(fixed).enumerate() {
        let name = t.names.join(" + ");
        if !v.is_finite() || (t.exact && v.fract() != 0.0) {
            let what = if t.exact { "an integer" } else { "a finite number" };
            return Err(format!("--fix: tier {} ({name}) takes {what}, got {v}", i + 1));
        }
        // Exact tiers have integer values: the floor is the value itself.
        let floor = if t.exact { v } else { v - 1e-6 * v.abs().max(1.0) };
        header.push_str(&format!("\\ Floor row: {name} >= {floor}.\n"));
        mip.add_row(floor, highs::INF, t.coefs.clone());
    }
    header.push_str(&format!("\\ The objective below is tier {tier}.\n"));
    Ok((header, mip))
}

/// The candidate-evaluation phase alone (topology screening), timed on a rayon pool of
/// `threads` threads: (milliseconds, verdict per (group, domain) in group order). The
/// cycle and the topology graph are built before the clock starts. For the benchmark.
pub fn time_screening(inst: &Instance, threads: usize) -> Result<(f64, Option<f64>, Vec<(GroupId, usize, u8)>), String> {
    let cycle = cycle::Cycle::new(inst);
    let topo = topology::TopologyGraph::new(&cycle);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string())?;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let cpu0 = process_cpu_ms();
    let t = std::time::Instant::now();
    let s = pool.install(|| candidates::screen(&cycle, &topo, deadline));
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    // CPU time over wall time: how many cores the phase actually got (the machine is
    // shared; a second thread cannot speed up what no second core runs).
    let cores = cpu0.zip(process_cpu_ms()).map(|(a, b)| (b - a) / ms.max(1e-9));
    let verdicts = s
        .candidates
        .iter()
        .enumerate()
        .flat_map(|(g, cs)| {
            cs.iter().map(move |c| {
                let v = match c.verdict {
                    candidates::Verdict::Feasible => 0,
                    candidates::Verdict::Infeasible => 1,
                    candidates::Verdict::Unknown => 2,
                };
                (g, c.domain, v)
            })
        })
        .collect();
    Ok((ms, cores, verdicts))
}

/// CPU time of this process in milliseconds (Linux `/proc/self/stat`, 10 ms ticks).
fn process_cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(mip: &highs::Mip) -> highs::MipResult {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        highs::solve(mip, None, &highs::MipParams::until(deadline, 0.0, 0.0))
    }

    /// instances/gang-all-or-nothing.yaml by hand: three 4-cpu nodes hold only three of
    /// gang-4's 3-cpu pods, so it stays out; best-effort (basic, 10 pods of 1 cpu) then
    /// places all 10 pods: 9 beyond its minimum of one.
    #[test]
    fn a_later_tier_is_the_tier_objective_under_the_earlier_values() {
        let inst = Instance::from_text(include_str!("../../instances/gang-all-or-nothing.yaml")).unwrap();
        let (h1, m1) = tier_model(&inst, 1, &[]).unwrap();
        assert!(h1.contains("tier 2: extra@1 (proven)"), "{h1}");
        let r1 = solve(&m1);
        assert_eq!(r1.status, highs::MipStatus::Optimal);
        let (h2, m2) = tier_model(&inst, 2, &[r1.objective]).unwrap();
        assert!(h2.contains(&format!("Floor row: placed@100 + placed@1 >= {}.", r1.objective)), "{h2}");
        let r2 = solve(&m2);
        assert_eq!((r2.status, r2.objective), (highs::MipStatus::Optimal, 9.0));
        // The floor binds: nothing beats the term-1 optimum.
        let (_, over) = tier_model(&inst, 2, &[r1.objective + 1.0]).unwrap();
        assert_eq!(solve(&over).status, highs::MipStatus::Infeasible);
        assert_eq!(tier_model(&inst, 4, &[1.0, 9.0, 0.0]).unwrap_err(), "--tier 4: this model has tiers 1 to 3");
        assert_eq!(tier_model(&inst, 2, &[]).unwrap_err(), "--tier 2 needs the values of the 1 earlier tier(s) in --fix, got 0");
        assert_eq!(tier_model(&inst, 2, &[0.5]).unwrap_err(), "--fix: tier 1 (placed@100 + placed@1) takes an integer, got 0.5");
        assert_eq!(tier_model(&inst, 3, &[1.0, f64::NAN]).unwrap_err(), "--fix: tier 2 (extra@1) takes an integer, got NaN");
        assert!(export_lp(&inst, 2, &[r1.objective]).unwrap().contains("The objective below is tier 2."));
    }
}
