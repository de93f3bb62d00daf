//! What a phase of the engine may spend: time and, under `options.workLimit`, work units.
//!
//! A work unit is one pricing round, or one unit of a restricted MIP's run (a
//! branch-and-bound node, or `LP_ITERATIONS_PER_UNIT` simplex iterations; one at least).
//! Under a work limit every phase ends by work and its time is only the caller's hard
//! limit: the phases never see the wall clock, so the same input gives the same decision
//! on any machine and thread count, unless that hard limit is reached (the decision then
//! says so in `stats.stoppedBy`).
//!
//! A budget's work has two counts: the plan, which its parts are shares of, and the cap,
//! the work the whole solve has left, which only stops. A round of the engine plans a
//! fixed amount of work whatever the limit ([`Budget::planned`]), so a larger limit runs
//! the same phases on the same shares and only stops later.

use std::time::Instant;

/// A budget of time and, under a work limit, of work.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Time by which the phase ends.
    pub until: Instant,
    /// Work units left of the plan (what parts are shares of); `None`: no work limit
    /// (the wall clock divides the phases).
    work: Option<u64>,
    /// Work units the solve has left: reaching 0 stops the phase, whatever its plan.
    cap: Option<u64>,
    /// Work units used by this budget and the parts it settled.
    used: u64,
}

impl Budget {
    /// Until `until`, with `work` units if a work limit is set.
    pub fn new(until: Instant, work: Option<u64>) -> Budget {
        Budget { until, work, cap: work, used: 0 }
    }

    /// A budget that plans `work` units (its parts are shares of them) but stops when
    /// this one's work runs out; without a work limit, this budget's time.
    pub fn planned(&self, work: u64) -> Budget {
        match self.cap {
            None => Budget::new(self.until, None),
            Some(_) => Budget { until: self.until, work: Some(work), cap: self.cap, used: 0 },
        }
    }

    /// Whether a work limit divides the phases.
    pub fn by_work(&self) -> bool {
        self.work.is_some()
    }

    /// A part of this budget for one phase: until `until` (within this budget's time)
    /// without a work limit; with one, `frac` of the work left, and this budget's time.
    pub fn slice(&self, until: Instant, frac: f64) -> Budget {
        match self.work {
            None => Budget::new(until.min(self.until), None),
            Some(w) => Budget { until: self.until, work: Some(((w as f64 * frac).ceil() as u64).max(1).min(w)), cap: self.cap, used: 0 },
        }
    }

    /// `frac` of what is left: of the time without a work limit, else of the work.
    pub fn part(&self, frac: f64) -> Budget {
        let now = Instant::now();
        self.slice(now + self.until.saturating_duration_since(now).mul_f64(frac.clamp(0.0, 1.0)), frac)
    }

    /// Runs `phase` on `part` and charges what it used to this budget.
    pub fn run<R>(&mut self, part: Budget, phase: impl FnOnce(&mut Budget) -> R) -> R {
        let mut p = part;
        let r = phase(&mut p);
        self.charge(p.used);
        r
    }

    /// Charges `units` of work.
    pub fn charge(&mut self, units: u64) {
        self.used = self.used.saturating_add(units);
        for w in [self.work.as_mut(), self.cap.as_mut()].into_iter().flatten() {
            *w = w.saturating_sub(units);
        }
    }

    /// Work units left: of the plan, at most what the solve has left (`None`: no work
    /// limit).
    pub fn work_left(&self) -> Option<u64> {
        self.work.zip(self.cap).map(|(w, c)| w.min(c))
    }

    /// Whether the work is used up: the plan's or the solve's.
    pub fn work_spent(&self) -> bool {
        self.work_left() == Some(0)
    }

    /// Whether a step that charges no work may still run: the solve has work left (the
    /// plan may be spent) and the time has not come; without a work limit, whether the
    /// budget is not exhausted. A smaller work limit stops a solve exactly where its cap
    /// runs out, so a larger one takes the same steps up to there.
    pub fn allows_free_step(&self) -> bool {
        match self.cap {
            Some(c) => c > 0 && Instant::now() < self.until,
            None => !self.exhausted(),
        }
    }

    /// Whether the phase must end: its work is used up or its time has come.
    pub fn exhausted(&self) -> bool {
        self.work_spent() || Instant::now() >= self.until
    }

    /// Work units used.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_part_under_a_work_limit_keeps_the_time_and_charges_the_parent() {
        let until = Instant::now() + Duration::from_secs(60);
        let mut b = Budget::new(until, Some(10));
        let p = b.part(0.25);
        // ceil(2.5) = 3 units, and the caller's time, not a quarter of it.
        assert_eq!((p.work, p.until), (Some(3), until));
        b.run(p, |p| p.charge(2));
        assert_eq!((b.work, b.used()), (Some(8), 2));
        b.run(b.part(1.0), |p| p.charge(100));
        assert!(b.work_spent() && b.exhausted());
        assert_eq!(b.used(), 102);
    }

    #[test]
    fn a_part_without_a_work_limit_is_a_share_of_the_time() {
        let now = Instant::now();
        let b = Budget::new(now + Duration::from_secs(100), None);
        let p = b.part(0.5);
        assert!(p.work.is_none() && p.work_left().is_none());
        let span = p.until.saturating_duration_since(now);
        // Half of the 100 s left when `part` read the clock, a moment after `now`.
        assert!(span > Duration::from_millis(49_900) && span < Duration::from_millis(50_100), "{span:?}");
        assert!(b.planned(8).work_left().is_none());
        // A slice never outlasts its parent.
        assert_eq!(b.slice(now + Duration::from_secs(500), 0.5).until, b.until);
    }

    #[test]
    fn a_planned_budget_shares_its_plan_and_stops_at_the_cap() {
        let until = Instant::now() + Duration::from_secs(60);
        let mut solve = Budget::new(until, Some(10));
        solve.charge(4);
        // Plans 16 units although 6 are left: its parts are shares of 16, cut at 6.
        let mut round = solve.planned(16);
        let p = round.part(0.25);
        assert_eq!((p.work, p.cap, p.work_left()), (Some(4), Some(6), Some(4)));
        round.run(p, |p| p.charge(4));
        assert_eq!(round.part(0.5).work_left(), Some(2), "half of the 12 planned, cut at the 2 left");
        round.run(round.part(1.0), |p| p.charge(2));
        assert!(round.work_spent() && round.cap == Some(0) && round.work == Some(10), "6 of 16 planned used");
        assert!(!round.allows_free_step(), "the solve's work is spent");
        solve.charge(round.used());
        assert!(solve.work_spent() && solve.used() == 10);
        // A plan smaller than what is left ends the round, not the solve.
        let mut more = Budget::new(until, Some(100));
        let mut r = more.planned(3);
        r.charge(3);
        more.charge(r.used());
        assert!(r.work_spent() && r.cap == Some(97) && !more.work_spent());
        assert!(r.allows_free_step(), "the round's plan is spent, not the solve's work");
        assert!(Budget::new(until, None).allows_free_step());
        assert!(!Budget::new(Instant::now(), Some(5)).allows_free_step(), "the time has come");
    }
}
