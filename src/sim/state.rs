//! YuniKorn's application state machine (`shared/spec/yunikorn-gang-lifecycle.md` §1;
//! apache/yunikorn-core `pkg/scheduler/objects/application_state.go`, `eventDesc`), with
//! its state and event names as YuniKorn writes them, and the termination types of the
//! scheduler interface (§8).

use std::fmt;

/// The ten application states of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AppState {
    /// Added to the partition, no ask yet.
    New,
    /// The first ask (or recovered allocation) arrived; placeholders are being allocated.
    Accepted,
    /// The whole placeholderAsk is allocated, or a real pod is.
    Running,
    /// Refused at admission (FAIR leaf, placeholderAsk above the queue max).
    Rejected,
    /// Nothing pending and no real allocation; the 30 s completing timer runs.
    Completing,
    /// Done; the application ID is free for reuse.
    Completed,
    /// Hard placeholder timeout: waiting for the last placeholder release.
    Failing,
    /// Hard timeout finished: every placeholder is gone.
    Failed,
    /// Three days after Completed, Failed or Rejected.
    Expired,
    /// Soft placeholder timeout: waiting for the last placeholder release, then Accepted.
    Resuming,
}

/// The events of the state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEvent {
    /// `runApplication`: New/Resuming to Accepted, Accepted/Completing to Running.
    Run,
    /// `rejectApplication`: New to Rejected.
    Reject,
    /// `completeApplication`: to Completing, then Completing to Completed.
    Complete,
    /// `failApplication`: to Failing, then Failing to Failed.
    Fail,
    /// `resumeApplication`: the Soft placeholder timeout, New/Accepted to Resuming.
    Resume,
    /// `expireApplication`: Completed/Failed/Rejected to Expired.
    Expire,
}

impl AppEvent {
    /// The event's string in YuniKorn (`runApplication`, ...).
    pub fn name(self) -> &'static str {
        match self {
            AppEvent::Run => "runApplication",
            AppEvent::Reject => "rejectApplication",
            AppEvent::Complete => "completeApplication",
            AppEvent::Fail => "failApplication",
            AppEvent::Resume => "resumeApplication",
            AppEvent::Expire => "expireApplication",
        }
    }
}

impl fmt::Display for AppState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl AppState {
    /// The state `event` leads to from `self`, `None` when the machine has no such
    /// transition (YuniKorn's callers only log that). A transition to the same state is
    /// returned as such; the caller swallows it as `HandleApplicationEvent` does.
    pub fn on(self, event: AppEvent) -> Option<AppState> {
        use AppEvent::*;
        use AppState::*;
        match (event, self) {
            (Reject, New) => Some(Rejected),
            (Run, New | Resuming) => Some(Accepted),
            (Run, Accepted | Running | Completing) => Some(Running),
            (Complete, Accepted | Running) => Some(Completing),
            (Complete, Completing) => Some(Completed),
            (Fail, New | Accepted | Running) => Some(Failing),
            (Fail, Failing) => Some(Failed),
            (Resume, New | Accepted) => Some(Resuming),
            (Expire, Completed | Failed | Rejected) => Some(Expired),
            _ => None,
        }
    }

    /// Completed, Failed, Rejected or Expired: the application has left the partition.
    pub fn is_terminated(self) -> bool {
        matches!(self, AppState::Completed | AppState::Failed | AppState::Rejected | AppState::Expired)
    }
}

/// `si.TerminationType` (§8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// `UNKNOWN_TERMINATION_TYPE`: the core removes an allocation on node removal.
    Unknown,
    /// `STOPPED_BY_RM`: the pod finished or was deleted on the shim's side.
    StoppedByRm,
    /// `TIMEOUT`: placeholder timeout, Completing cleanup, or a real pod larger than its placeholder.
    Timeout,
    /// `PREEMPTED_BY_SCHEDULER`: a preemption victim.
    PreemptedByScheduler,
    /// `PLACEHOLDER_REPLACED`: a placeholder swapped for a real pod of its task group.
    PlaceholderReplaced,
}

impl Termination {
    /// The name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Unknown => "UNKNOWN_TERMINATION_TYPE",
            Termination::StoppedByRm => "STOPPED_BY_RM",
            Termination::Timeout => "TIMEOUT",
            Termination::PreemptedByScheduler => "PREEMPTED_BY_SCHEDULER",
            Termination::PlaceholderReplaced => "PLACEHOLDER_REPLACED",
        }
    }
}

/// The states of the Kubernetes shim's application (§7), as far as they change what the
/// shim sends to the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShimState {
    /// Created from the first pod of the application ID.
    New,
    /// The core accepted the AddApplicationRequest.
    Accepted,
    /// Only placeholder pods go to the core; real pods are held.
    Reserving,
    /// Placeholders are being deleted after a Soft timeout; real pods still held.
    Resuming,
    /// Every task group has minMember bound placeholders (or no gang): real pods go to the core.
    Running,
    /// Hard timeout or core failure: held real pods fail.
    Failed,
    /// The core rejected the application: its pods fail `ApplicationRejected`.
    Rejected,
}

impl fmt::Display for ShimState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::AppEvent::*;
    use super::AppState::*;

    /// The table of §1, row by row, and nothing else.
    #[test]
    fn transitions_are_exactly_the_reference_table() {
        let table = [
            (Reject, New, Rejected),
            (Run, New, Accepted),
            (Run, Resuming, Accepted),
            (Run, Accepted, Running),
            (Run, Running, Running),
            (Run, Completing, Running),
            (Complete, Accepted, Completing),
            (Complete, Running, Completing),
            (Complete, Completing, Completed),
            (Fail, New, Failing),
            (Fail, Accepted, Failing),
            (Fail, Running, Failing),
            (Fail, Failing, Failed),
            (Resume, New, Resuming),
            (Resume, Accepted, Resuming),
            (Expire, Completed, Expired),
            (Expire, Failed, Expired),
            (Expire, Rejected, Expired),
        ];
        let states = [New, Accepted, Running, Rejected, Completing, Completed, Failing, Failed, Expired, Resuming];
        let mut defined = 0;
        for e in [Run, Reject, Complete, Fail, Resume, Expire] {
            for s in states {
                let want = table.iter().find(|&&(te, ts, _)| te == e && ts == s).map(|t| t.2);
                assert_eq!(s.on(e), want, "{} from {s}", e.name());
                defined += want.is_some() as usize;
            }
        }
        assert_eq!(defined, 18);
        // Resuming and Completing cannot fail (§1 note).
        assert_eq!(Resuming.on(Fail), None);
        assert_eq!(Completing.on(Fail), None);
    }
}
