//! Balanced placement (`TASBalancedPlacement`, Alpha, off by default in v0.19), ported
//! from kubernetes-sigs/kueue `pkg/cache/scheduler/tas_balanced_placement.go` (same
//! stored version as the parent module). Kueue's per-domain counts are named
//! `podCount`, `sliceCount`, ... there; here they are the parent module's `state`,
//! `slice_state`, ...
//!
//! For a `preferred` request: look one level above the preferred level, and for each of
//! its domains compute the balance threshold (the largest minimum number of slices every
//! used domain would get) of a greedy fill of its children; keep the best (ties: fewer
//! domains at the preferred level). Below the threshold, domains are pruned. Then a
//! dynamic program picks the fewest domains with the least total capacity that hold the
//! request, and the slices are spread evenly (threshold each, the rest in sort order).

use super::{Counts, Params, Run};
use std::collections::BTreeMap;

impl Run<'_> {
    /// `evaluateGreedyAssignment`: whether a BestFit greedy fill of `ds` holds the
    /// request, with how many domains, and the last domain used with and without leader.
    fn evaluate_greedy(&self, ds: &[usize], slice_count: i64, leader_count: i64) -> (bool, i64, Option<usize>, Option<usize>) {
        let mut selected = 0;
        let (mut last, mut last_with_leader) = (None, None);
        let mut rem_slices = slice_count;
        let mut rem_leaders = leader_count;
        let without_leader = if leader_count > 0 {
            let with = self.sorted_domains_with_leader(ds, false);
            let mut idx = 0;
            while rem_leaders > 0 && idx < with.len() && self.doms[with[idx]].c.leader_state > 0 {
                selected += 1;
                last_with_leader = Some(with[idx]);
                rem_leaders -= self.doms[with[idx]].c.leader_state;
                rem_slices -= self.doms[with[idx]].c.slice_state_with_leader;
                idx += 1;
            }
            self.sorted_domains(&with[idx..], false)
        } else {
            self.sorted_domains(ds, false)
        };
        if rem_leaders > 0 {
            return (false, 0, None, None);
        }
        let mut idx = 0;
        while rem_slices > 0 && idx < without_leader.len() && self.doms[without_leader[idx]].c.slice_state > 0 {
            selected += 1;
            last = Some(without_leader[idx]);
            rem_slices -= self.doms[without_leader[idx]].c.slice_state;
            idx += 1;
        }
        if rem_slices > 0 {
            return (false, 0, None, None);
        }
        (true, selected, last_with_leader, last)
    }

    /// `balanceThresholdValue`.
    fn balance_threshold(&self, slice_count: i64, selected: i64, last_with_leader: Option<usize>, last: Option<usize>) -> i64 {
        let mut t = slice_count / selected.max(1);
        if let Some(d) = last_with_leader {
            t = t.min(self.doms[d].c.slice_state_with_leader);
        }
        if let Some(d) = last {
            t = t.min(self.doms[d].c.slice_state);
        }
        t
    }

    fn entropy(&self, ds: &[usize]) -> f64 {
        let total: i64 = ds.iter().map(|&d| self.doms[d].c.state).sum();
        if ds.is_empty() || total == 0 {
            return 0.0;
        }
        let mut e = 0.0;
        for &d in ds {
            let n = self.doms[d].c.state;
            if n > 0 {
                let p = n as f64 / total as f64;
                e += -p * p.log2();
            }
        }
        e
    }

    /// `compareDomainCapacityAndEntropy`: leader capacity, then slices with leader
    /// (descending), then the entropy of the children's pods (descending), then values.
    fn cmp_capacity_entropy(&self, a: usize, b: usize) -> std::cmp::Ordering {
        let (x, y) = (&self.doms[a], &self.doms[b]);
        y.c.leader_state
            .cmp(&x.c.leader_state)
            .then(y.c.slice_state_with_leader.cmp(&x.c.slice_state_with_leader))
            .then_with(|| {
                let (ea, eb) = (self.entropy(&x.children), self.entropy(&y.children));
                eb.partial_cmp(&ea).unwrap_or(std::cmp::Ordering::Equal)
            })
            .then_with(|| x.values.cmp(&y.values))
    }

    /// `selectOptimalDomainSetToFit`: among sets of the greedy number of domains that
    /// hold the request, the one leaving the least room (dynamic program over domains in
    /// value order, or capacity-and-entropy order).
    fn select_optimal_domain_set(
        &self,
        ds: &[usize],
        slice_count: i64,
        leader_count: i64,
        slice_size: i64,
        by_entropy: bool,
    ) -> Option<Vec<usize>> {
        let (fit, optimal, _, _) = self.evaluate_greedy(ds, slice_count, leader_count);
        if !fit {
            return None;
        }
        let mut ordered = ds.to_vec();
        if by_entropy {
            ordered.sort_by(|&a, &b| self.cmp_capacity_entropy(a, b));
        } else {
            ordered.sort_by(|&a, &b| self.doms[a].values.cmp(&self.doms[b].values));
        }
        let n = optimal as usize;
        // placements[i][leaders left][pods left] = domains chosen.
        let mut placements: Vec<BTreeMap<i64, BTreeMap<i64, Vec<usize>>>> = vec![BTreeMap::new(); n + 1];
        placements[0].entry(leader_count).or_default().insert(slice_count * slice_size, Vec::new());
        for &d in &ordered {
            let c = self.doms[d].c;
            for i in (1..=n).rev() {
                let before: Vec<(i64, i64, Vec<usize>)> =
                    placements[i - 1].iter().flat_map(|(&l, m)| m.iter().map(move |(&p, v)| (l, p, v.clone()))).collect();
                for (bl, bp, placement) in before {
                    if bl <= 0 && bp <= 0 {
                        continue;
                    }
                    let mut with = placement.clone();
                    with.push(d);
                    if bl > 0 && c.leader_state > 0 {
                        let (al, ap) = (bl - c.leader_state, bp - c.state_with_leader);
                        placements[i].entry(al).or_default().entry(ap).or_insert_with(|| with.clone());
                    }
                    if c.slice_state > 0 {
                        let ap = bp - c.state;
                        placements[i].entry(bl).or_default().entry(ap).or_insert_with(|| with.clone());
                    }
                }
            }
        }
        let best = placements[n].get(&0)?;
        // The largest pods-left value that is not positive.
        best.iter().rfind(|(&left, _)| left <= 0).map(|(_, v)| v.clone())
    }

    /// `placeSlicesOnDomainsBalanced`: threshold slices on each domain of the optimal set,
    /// the rest in sort order (leaders first).
    fn place_balanced(
        &mut self,
        ds: &[usize],
        slice_count: i64,
        leader_count: i64,
        slice_size: i64,
        threshold: i64,
    ) -> Result<Vec<usize>, String> {
        let Some(set) = self.select_optimal_domain_set(ds, slice_count, leader_count, slice_size, false) else {
            return Err("TAS Balanced Placement: Cannot find optimal domain set to fit the request".into());
        };
        if slice_count < set.len() as i64 * threshold {
            return Err("TAS Balanced Placement: Not enough slices to meet the threshold".into());
        }
        let set = self.sorted_domains_with_leader(&set, false);
        let mut extra_left = slice_count - set.len() as i64 * threshold;
        let mut leaders_left = leader_count;
        for &d in &set {
            let c = &mut self.doms[d].c;
            let take;
            if leaders_left > 0 {
                take = (c.slice_state_with_leader - threshold).min(extra_left);
                c.leader_state = 1;
                leaders_left -= 1;
            } else if extra_left > 0 {
                take = (c.slice_state - threshold).min(extra_left);
                c.leader_state = 0;
            } else {
                c.leader_state = 0;
                take = 0;
            }
            c.state = (threshold + take) * slice_size;
            c.slice_state = threshold + take;
            c.slice_state_with_leader = c.slice_state;
            c.state_with_leader = c.state - c.leader_state;
            extra_left -= take;
        }
        if extra_left > 0 || leaders_left > 0 {
            return Err("TAS Balanced Placement: Not all slices or leaders could be placed".into());
        }
        Ok(set)
    }

    /// Deep copy of subtrees with their current counts (`cloneDomains`), so pruning one
    /// candidate set leaves the others intact.
    fn clone_domains(&mut self, ds: &[usize]) -> Vec<usize> {
        ds.iter().map(|&d| self.clone_domain(d, None)).collect()
    }

    fn clone_domain(&mut self, d: usize, parent: Option<usize>) -> usize {
        let mut copy = self.doms[d].clone();
        copy.parent = parent;
        copy.children = Vec::new();
        let id = self.doms.len();
        self.doms.push(copy);
        let children = self.doms[d].children.clone();
        let cloned: Vec<usize> = children.into_iter().map(|c| self.clone_domain(c, Some(id))).collect();
        self.doms[id].children = cloned;
        id
    }

    fn clear_state(&mut self, d: usize) {
        self.doms[d].c = Counts::default();
        for c in self.doms[d].children.clone() {
            self.clear_state(c);
        }
    }

    fn clear_leader_capacity(&mut self, d: usize) {
        let c = &mut self.doms[d].c;
        c.state_with_leader = 0;
        c.slice_state_with_leader = 0;
        c.leader_state = 0;
        for ch in self.doms[d].children.clone() {
            self.clear_leader_capacity(ch);
        }
    }

    fn prune_node(&mut self, d: usize, threshold: i64, leader_required: bool) {
        let c = self.doms[d].c;
        if c.slice_state < threshold {
            self.clear_state(d);
            return;
        }
        if leader_required && c.leader_state > 0 && c.slice_state_with_leader < threshold {
            self.clear_leader_capacity(d);
        }
    }

    fn prune_below_threshold(&mut self, ds: &[usize], threshold: i64, p: &Params, level: usize) {
        let leader_required = p.leader_count > 0;
        for &d in ds {
            for c in self.doms[d].children.clone() {
                self.prune_node(c, threshold, leader_required);
            }
        }
        let none = BTreeMap::new();
        for &d in ds {
            self.fill_in_counts_helper(d, p.slice_size, p.slice_level, level, &none, leader_required);
            self.prune_node(d, threshold, leader_required);
        }
    }

    fn lower_if_above_slice(&self, ds: &[usize], p: &Params) -> Vec<usize> {
        if p.requested_level < p.slice_level {
            self.lower_level_domains(ds)
        } else {
            ds.to_vec()
        }
    }

    /// `findBestDomainsForBalancedPlacement`: the best candidate set and its threshold (0:
    /// balanced placement is not possible).
    pub(super) fn find_best_domains_for_balanced_placement(&mut self, p: &Params) -> (Vec<usize>, i64) {
        let slice_count = p.count / p.slice_size;
        let groups: Vec<Vec<usize>> = if p.requested_level == 0 {
            vec![self.tree.per_level[0].clone()]
        } else {
            let mut higher = self.tree.per_level[p.requested_level - 1].clone();
            higher.sort_by(|&a, &b| self.doms[a].values.cmp(&self.doms[b].values));
            higher.iter().map(|&h| self.doms[h].children.clone()).collect()
        };
        let mut best_threshold = 0;
        let mut best_count = 0;
        let mut best: Vec<usize> = Vec::new();
        for siblings in groups {
            let mut candidates = self.clone_domains(&siblings);
            let lower = self.lower_if_above_slice(&candidates, p);
            let (fits, selected, last_with_leader, last) = self.evaluate_greedy(&lower, slice_count, p.leader_count);
            if !fits {
                continue;
            }
            let mut threshold = self.balance_threshold(slice_count, selected, last_with_leader, last);
            let mut with_reservation = threshold;
            if p.leader_count > 0 {
                if let Some(l) = last {
                    with_reservation = threshold.min(self.doms[l].c.slice_state_with_leader);
                }
            }
            if threshold >= best_threshold {
                self.prune_below_threshold(&candidates, threshold, p, p.requested_level);
                let (mut fits_after, mut count, _, _) = self.evaluate_greedy(&candidates, slice_count, p.leader_count);
                if !fits_after && with_reservation < threshold {
                    if with_reservation <= 0 || with_reservation < best_threshold {
                        continue;
                    }
                    threshold = with_reservation;
                    candidates = self.clone_domains(&siblings);
                    self.prune_below_threshold(&candidates, threshold, p, p.requested_level);
                    let r = self.evaluate_greedy(&candidates, slice_count, p.leader_count);
                    fits_after = r.0;
                    count = r.1;
                }
                if !fits_after {
                    continue;
                }
                if threshold > best_threshold || (threshold == best_threshold && count < best_count) {
                    best_threshold = threshold;
                    best_count = count;
                    best = candidates;
                }
            }
        }
        (best, best_threshold)
    }

    /// `applyBalancedPlacementAlgorithm`: the domains and the level the descent starts at.
    pub(super) fn apply_balanced_placement(&mut self, p: &Params, threshold: i64, fit: Vec<usize>) -> Result<(Vec<usize>, usize), String> {
        let slice_count = p.count / p.slice_size;
        let (mut curr, level) = if p.requested_level < p.slice_level {
            let Some(set) = self.select_optimal_domain_set(&fit, slice_count, p.leader_count, p.slice_size, true) else {
                return Err("TAS Balanced Placement: Cannot find optimal domain set to fit the request".into());
            };
            (self.lower_level_domains(&set), p.requested_level + 1)
        } else {
            (fit, p.requested_level)
        };
        curr = self.place_balanced(&curr, slice_count, p.leader_count, p.slice_size, threshold)?;
        Ok((curr, level))
    }
}
