//! How to solve: the solver, its budgets (wall clock, relative gap, deterministic work),
//! a cancel handle, progress, and typed diagnostic switches. Every field has a sensible
//! default; the instance's own `options` fill what is left `None` here.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Which way of deciding the cycle [`crate::solve`] uses: the exact engine or one of the
/// baselines (each modelled on a real scheduler; [`SolverKind::describe`] says which).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SolverKind {
    /// The exact engine: lexicographic terms 1-3 proven tier by tier, with bounds.
    #[default]
    Exact,
    /// First-fit decreasing over groups, no evictions.
    Ffd,
    /// Kubernetes workload preemption: first fit, then evict and reprieve.
    K8sPreempt,
    /// kube-scheduler pod by pod, LeastAllocated scoring.
    K8sPod,
    /// kube-scheduler pod by pod, MostAllocated scoring.
    K8sPodMostAllocated,
    /// kube-scheduler with the gang (PodGroup) plugin.
    K8sPodGroup,
    /// Kueue v0.19 topology-aware scheduling with its default gates (`TASProfileMixed`:
    /// LeastFreeCapacity for unconstrained requests, BestFit otherwise).
    Kueue,
    /// Kueue v0.19 topology-aware scheduling with `TASProfileMixed` off (BestFit everywhere).
    KueueBestFit,
    /// YuniKorn core (queues, applications, placeholders), fair node sorting.
    YuniKornFair,
    /// YuniKorn core (queues, applications, placeholders), binpacking node sorting.
    YuniKornBinpacking,
    /// Best-fit decreasing over groups, no evictions.
    Bfd,
}

impl SolverKind {
    /// Every solver, the exact one first.
    pub const ALL: &'static [SolverKind] = &[
        SolverKind::Exact,
        SolverKind::Ffd,
        SolverKind::K8sPreempt,
        SolverKind::K8sPod,
        SolverKind::K8sPodMostAllocated,
        SolverKind::K8sPodGroup,
        SolverKind::Kueue,
        SolverKind::KueueBestFit,
        SolverKind::YuniKornFair,
        SolverKind::YuniKornBinpacking,
        SolverKind::Bfd,
    ];

    /// Whether decisions of this solver carry proofs and bounds.
    pub fn is_exact(self) -> bool {
        self == SolverKind::Exact
    }
}

// `name`, `describe`, `from_name` and `solve` are in `crate::solvers`, where each kind
// meets its implementation.

impl fmt::Display for SolverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Stops a running solve from another thread: the solver returns its best verified
/// decision so far, as at a deadline. Clones share the same flag.
#[derive(Clone, Debug, Default)]
pub struct CancelHandle(Arc<AtomicBool>);

impl CancelHandle {
    /// A handle that is not cancelled.
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }
    /// Asks every solve holding a clone of this handle to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether [`CancelHandle::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    pub(crate) fn flag(&self) -> &Arc<AtomicBool> {
        &self.0
    }
}

/// Receives progress lines while the exact engine works (the warm start, each tier as
/// it is proven or stopped, the deadline). Never changes the answer.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(&str) + Send + Sync>);

impl ProgressSink {
    /// Progress lines go to `f`.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> ProgressSink {
        ProgressSink(Arc::new(f))
    }
    /// Progress lines go to standard error, prefixed `tessera: `.
    pub fn stderr() -> ProgressSink {
        ProgressSink::new(|line| eprintln!("tessera: {line}"))
    }
    pub(crate) fn say(&self, line: &str) {
        (self.0)(line)
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// Settings of one solve. `Options::default()` is the exact engine with the instance's
/// own `options` (else a 10 s budget, gap 0, no work limit).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The solver (default: exact).
    pub solver: SolverKind,
    /// Wall-clock budget, a hard deadline for the whole call. Default:
    /// `options.timeLimit` of the instance, else 10 s.
    pub time_limit: Option<Duration>,
    /// Relative gap of the first open objective row at which the exact engine may stop.
    /// Default: `options.relativeGap`, else 0 (prove optimal).
    pub relative_gap: Option<f64>,
    /// Deterministic budget in work units (see [`Options::work_limit`]); 0 = none.
    /// Default: `options.workLimit`, else none.
    pub work_limit: Option<u64>,
    /// Threads for parallel phases (`None`: rayon's default). Never changes the answer.
    pub threads: Option<usize>,
    /// Stops the solve early from another thread.
    pub cancel: CancelHandle,
    /// Progress lines, if wanted.
    pub progress: Option<ProgressSink>,
    /// Switches for measurements and diagnosis; the defaults are what users want.
    pub diagnostics: Diagnostics,
}

impl Options {
    /// The exact engine with default settings.
    pub fn exact() -> Options {
        Options::default()
    }
    /// The given solver with default settings.
    pub fn with_solver(solver: SolverKind) -> Options {
        Options { solver, ..Options::default() }
    }
    /// The wall-clock budget for `inst`: this option, else the instance's, else 10 s.
    pub fn time_limit(&self, inst: &crate::Instance) -> Duration {
        self.time_limit.or(inst.options.time_limit).unwrap_or(Duration::from_secs(10))
    }
    /// The relative gap for `inst`: this option, else the instance's, else 0.
    pub fn relative_gap(&self, inst: &crate::Instance) -> f64 {
        self.relative_gap.unwrap_or(inst.options.relative_gap)
    }
    /// The deterministic work budget for `inst` (`None`: only the wall clock limits the
    /// solve). One unit is one branch-and-bound node or 1,000 simplex iterations of a
    /// HiGHS run, or one pricing round of the decomposition engine; each phase of the
    /// exact engines gets its documented share (`models/cycle.md` 6.8, "Work limit").
    /// With it the same input gives the same decision on any machine and thread count,
    /// as long as the wall-clock budget does not end the solve first (the decision's
    /// `stats.stoppedBy` says which ended it).
    pub fn work_limit(&self, inst: &crate::Instance) -> Option<u64> {
        Some(self.work_limit.unwrap_or(inst.options.work_limit)).filter(|&w| w > 0)
    }
}

/// Which formulation the exact engine uses for a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineChoice {
    /// The compact cycle MILP (`models/cycle.md`): one integer per task and node.
    Compact,
    /// Column generation over node patterns (`models/decomposition.md`); cycles it does
    /// not express (queues, `preemptionModel: yunikorn`, a required hostname level) still
    /// go to the compact model.
    Decomposition,
    /// The decomposition engine proves term 1 with part of the budget, then the compact
    /// model continues from its decision and bounds (`models/decomposition.md` §1).
    Handoff,
}

/// Where the incumbent's value goes in as a floor row on a tier's objective.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FloorRows {
    /// Term-1 tier only (default).
    #[default]
    Term1,
    /// Every exact tier.
    All,
    /// None.
    None,
}

/// Switches that reproduce the measurements behind the exact engine's defaults. None is
/// needed to use Tessera; `Diagnostics::default()` is the engine as shipped. The CLI reads
/// them once from `TESSERA_*` environment variables ([`Diagnostics::from_env`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnostics {
    /// HiGHS's log on standard error (`TESSERA_HIGHS_LOG`).
    pub highs_log: bool,
    /// HiGHS presolve off (`TESSERA_PRESOLVE_OFF`).
    pub presolve_off: bool,
    /// HiGHS `mip_heuristic_effort` (`TESSERA_HIGHS_HEUR=x`).
    pub heuristic_effort: Option<f64>,
    /// Hand the incumbent to HiGHS as a MIP start (`TESSERA_HIGHS_MIP_START`).
    pub mip_start: bool,
    /// The term-1 relaxation cut goes into the full model (`TESSERA_CUT`).
    pub cut: bool,
    /// Floor rows (`TESSERA_FLOOR=none|all`).
    pub floor: FloorRows,
    /// Per-tier status lines on standard error (`TESSERA_DEBUG`).
    pub debug: bool,
    /// Tier merge limit instead of the default (`TESSERA_MAG=x`).
    pub magnitude: Option<f64>,
    /// No neighbourhood search beside HiGHS (`TESSERA_NO_LNS`).
    pub no_lns: bool,
    /// Per-device columns where fractional shares could be pooled (`TESSERA_NO_POOL`).
    pub no_pool: bool,
    /// Terms 1-2 tiers place the minimum pods only (`TESSERA_MIN_PODS`).
    pub min_pods: bool,
    /// HiGHS is not told to look only for solutions beating the incumbent (`TESSERA_NO_CUTOFF`).
    pub no_cutoff: bool,
    /// The search skips its first, fixed-groups sub-model (`TESSERA_NO_FIXED_GROUPS`).
    pub no_fixed_groups: bool,
    /// The search's eviction tiers skip the blocks around their costliest evictions
    /// (`TESSERA_NO_COSTLY_BLOCKS`).
    pub no_costly_blocks: bool,
    /// The term-1 search does not move on to the next tier's evictions when it stalls
    /// (`TESSERA_NO_LOOK_AHEAD`).
    pub no_look_ahead: bool,
    /// The term-1 search's patience before the look-ahead (`TESSERA_LOOK_AHEAD_PATIENCE_MS=n`).
    pub look_ahead_patience: Option<Duration>,
    /// Force the topology decomposition on or off (`None`: chosen by cycle size).
    pub decompose: Option<bool>,
    /// Force the exact engine's formulation (`TESSERA_ENGINE=compact|decomposition`;
    /// `None`: chosen by cycle size, models/decomposition.md §7).
    pub engine: Option<EngineChoice>,
    /// Any further HiGHS options, set last (`TESSERA_HIGHS_OPT=name=value,...`).
    pub highs_options: Vec<(String, String)>,
}

impl Diagnostics {
    /// The switches named by `TESSERA_*` environment variables (see each field).
    pub fn from_env() -> Diagnostics {
        let on = |k: &str| std::env::var_os(k).is_some();
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<f64>().ok());
        Diagnostics {
            highs_log: on("TESSERA_HIGHS_LOG"),
            presolve_off: on("TESSERA_PRESOLVE_OFF"),
            heuristic_effort: num("TESSERA_HIGHS_HEUR"),
            mip_start: on("TESSERA_HIGHS_MIP_START"),
            cut: on("TESSERA_CUT"),
            floor: match std::env::var("TESSERA_FLOOR").as_deref() {
                Ok("none") => FloorRows::None,
                Ok("all") => FloorRows::All,
                _ => FloorRows::Term1,
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
            look_ahead_patience: num("TESSERA_LOOK_AHEAD_PATIENCE_MS").map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1e3)),
            decompose: match std::env::var("TESSERA_DECOMPOSE").as_deref() {
                Ok("on") | Ok("1") => Some(true),
                Ok("off") | Ok("0") => Some(false),
                _ => None,
            },
            engine: match std::env::var("TESSERA_ENGINE").as_deref() {
                Ok("compact") => Some(EngineChoice::Compact),
                Ok("decomposition") | Ok("colgen") => Some(EngineChoice::Decomposition),
                Ok("handoff") => Some(EngineChoice::Handoff),
                _ => None,
            },
            highs_options: std::env::var("TESSERA_HIGHS_OPT")
                .unwrap_or_default()
                .split(',')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
        }
    }
}
