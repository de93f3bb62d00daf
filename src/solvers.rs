//! The registry: the one point where a [`SolverKind`] becomes its implementation.

use crate::baselines::{bfd, ffd, k8s_pod, k8s_podgroup, k8s_preempt, kueue_tas, yunikorn};
use crate::engine::Solver;
use crate::model::Instance;
use crate::options::{Options, SolverKind};
use crate::wire::decision::Decision;

fn solver_of(kind: SolverKind) -> &'static dyn Solver {
    static EXACT: crate::exact::Exact = crate::exact::Exact;
    static FFD: ffd::FirstFitDecreasing = ffd::FirstFitDecreasing;
    static K8S_PREEMPT: k8s_preempt::K8sPreemption = k8s_preempt::K8sPreemption;
    static K8S_POD: k8s_pod::K8sPod = k8s_pod::K8sPod { most_allocated: false };
    static K8S_POD_MOST: k8s_pod::K8sPod = k8s_pod::K8sPod { most_allocated: true };
    static K8S_PODGROUP: k8s_podgroup::K8sPodGroup = k8s_podgroup::K8sPodGroup;
    static KUEUE: kueue_tas::solver::Kueue = kueue_tas::solver::Kueue { mixed: true };
    static KUEUE_BEST: kueue_tas::solver::Kueue = kueue_tas::solver::Kueue { mixed: false };
    static YK_FAIR: yunikorn::YuniKorn = yunikorn::YuniKorn { binpacking: false };
    static YK_BIN: yunikorn::YuniKorn = yunikorn::YuniKorn { binpacking: true };
    static BFD: bfd::BestFitDecreasing = bfd::BestFitDecreasing;
    match kind {
        SolverKind::Exact => &EXACT,
        SolverKind::Ffd => &FFD,
        SolverKind::K8sPreempt => &K8S_PREEMPT,
        SolverKind::K8sPod => &K8S_POD,
        SolverKind::K8sPodMostAllocated => &K8S_POD_MOST,
        SolverKind::K8sPodGroup => &K8S_PODGROUP,
        SolverKind::Kueue => &KUEUE,
        SolverKind::KueueBestFit => &KUEUE_BEST,
        SolverKind::YuniKornFair => &YK_FAIR,
        SolverKind::YuniKornBinpacking => &YK_BIN,
        SolverKind::Bfd => &BFD,
    }
}

impl SolverKind {
    /// The name used on the command line (`--solver NAME`) and in decisions' `stats.solver`.
    pub fn name(self) -> &'static str {
        solver_of(self).name()
    }

    /// One line on what it does and where its behaviour comes from.
    pub fn describe(self) -> &'static str {
        solver_of(self).describe()
    }

    /// The solver of that name, if any.
    pub fn from_name(name: &str) -> Option<SolverKind> {
        SolverKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Decides `inst` with this solver (whatever `opts.solver` says); [`crate::solve`]
    /// is `opts.solver.solve(inst, opts)`.
    pub fn solve(self, inst: &Instance, opts: &Options) -> Decision {
        solver_of(self).solve(inst, opts)
    }
}
