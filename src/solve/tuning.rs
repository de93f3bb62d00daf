//! Diagnostic switches, read once from the environment. None of them is needed to use
//! Tessera; they exist to reproduce the measurements behind the solver's defaults (see
//! README, "Environment variables used for diagnosis only").

use std::sync::OnceLock;

/// Where the incumbent's value goes in as a floor row on the tier objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Floor {
    /// Term-1 tier only (default).
    Term1,
    All,
    None,
}

#[derive(Debug)]
pub struct Tuning {
    /// `TESSERA_HIGHS_LOG`: HiGHS log on stderr.
    pub highs_log: bool,
    /// `TESSERA_PRESOLVE_OFF`: HiGHS presolve off.
    pub presolve_off: bool,
    /// `TESSERA_HIGHS_HEUR=x`: `mip_heuristic_effort`.
    pub heuristic_effort: Option<f64>,
    /// `TESSERA_HIGHS_MIP_START`: hand the incumbent to HiGHS as a MIP start.
    pub mip_start: bool,
    /// `TESSERA_CUT`: the term-1 relaxation cut `W_1 <= ub + 0.5` goes into the full model.
    pub cut: bool,
    /// `TESSERA_FLOOR=none|all`.
    pub floor: Floor,
    /// `TESSERA_DEBUG`: per-tier status on stderr.
    pub debug: bool,
    /// `TESSERA_MAG=x`: tier merge limit.
    pub magnitude: Option<f64>,
    /// `TESSERA_NO_LNS`: no neighbourhood search beside HiGHS (lns.rs).
    pub no_lns: bool,
    /// `TESSERA_NO_POOL`: per-device columns where fractional shares could be pooled (milp.rs).
    pub no_pool: bool,
    /// `TESSERA_MIN_PODS`: terms 1-2 tiers place the minimum pods only (`minimum_pods_only`).
    pub min_pods: bool,
    /// `TESSERA_NO_CUTOFF`: HiGHS is not told to look only for solutions beating the incumbent.
    pub no_cutoff: bool,
    /// `TESSERA_NO_FIXED_GROUPS`: the search skips its first, fixed-groups sub-model.
    pub no_fixed_groups: bool,
    /// `TESSERA_NO_COSTLY_BLOCKS`: the search's eviction tiers skip the blocks around
    /// their costliest evictions (lns.rs `costly_blocks`).
    pub no_costly_blocks: bool,
    /// `TESSERA_NO_LOOK_AHEAD`: the search of the term-1 tier does not move on to the
    /// next tier's evictions when it stalls (exact.rs, `run_tiers`).
    pub no_look_ahead: bool,
    /// `TESSERA_LOOK_AHEAD_PATIENCE_MS=n`: the term-1 search's patience before the
    /// look-ahead, instead of the default (a test starts it at once with 0).
    pub look_ahead_patience: Option<std::time::Duration>,
    /// `TESSERA_HIGHS_OPT=name=value,...`: any further HiGHS options, set last.
    pub highs_options: Vec<(String, String)>,
}

pub fn get() -> &'static Tuning {
    static T: OnceLock<Tuning> = OnceLock::new();
    T.get_or_init(|| {
        let on = |k: &str| std::env::var_os(k).is_some();
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
        Tuning {
            highs_log: on("TESSERA_HIGHS_LOG"),
            presolve_off: on("TESSERA_PRESOLVE_OFF"),
            heuristic_effort: num("TESSERA_HIGHS_HEUR"),
            mip_start: on("TESSERA_HIGHS_MIP_START"),
            cut: on("TESSERA_CUT"),
            floor: match std::env::var("TESSERA_FLOOR").as_deref() {
                Ok("none") => Floor::None,
                Ok("all") => Floor::All,
                _ => Floor::Term1,
            },
            debug: on("TESSERA_DEBUG"),
            magnitude: num("TESSERA_MAG"),
            no_lns: on("TESSERA_NO_LNS"),
            no_pool: on("TESSERA_NO_POOL"),
            min_pods: on("TESSERA_MIN_PODS"),
            no_cutoff: on("TESSERA_NO_CUTOFF"),
            no_fixed_groups: on("TESSERA_NO_FIXED_GROUPS"),
            no_costly_blocks: on("TESSERA_NO_COSTLY_BLOCKS"),
            no_look_ahead: on("TESSERA_NO_LOOK_AHEAD"),
            look_ahead_patience: num("TESSERA_LOOK_AHEAD_PATIENCE_MS").map(|ms| std::time::Duration::from_secs_f64(ms.max(0.0) / 1e3)),
            highs_options: std::env::var("TESSERA_HIGHS_OPT")
                .unwrap_or_default()
                .split(',')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
        }
    })
}
