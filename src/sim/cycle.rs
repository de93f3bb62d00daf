//! One scheduling cycle of the simulator, in YuniKorn's order (`context.go schedule`):
//! release confirmations that arrived since the last cycle, then placeholder replacement
//! (`tryPlaceholderAllocate`, §3 of the lifecycle reference), then new allocations decided
//! by the cycle solver on an instance built from the simulator's state. Every decision is
//! a [`Decision`] on a valid [`Instance`], checked with [`crate::check()`] when asked.

use super::scenario::Ms;
use super::state::Termination;
use super::world::{AppIdx, CycleStat, Phase, Place, PodId, World};
use super::PlaceholderMode;
use crate::baselines::yunikorn::nodes::{sorted_nodes, NodeSort};
use crate::engine::cycle::{passes_filters, Cycle};
use crate::model::{Instance, TaskId};
use crate::options::{Options, SolverKind};
use crate::wire::decision::Decision;
use crate::wire::{InstanceDoc, PodDoc, PodGroupDoc, TaskDoc};
use std::collections::BTreeMap;

/// Which pending asks a cycle instance holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Want {
    /// Placeholder asks (`--placeholders yunikorn`: placed by YuniKorn's allocator).
    Placeholders,
    /// Asks of normal allocation: real asks that cannot replace a placeholder.
    Normal,
    /// Both, each application's placeholders as one gang (`--placeholders atomic`).
    Atomic,
    /// Real asks with a task group, one task each (predicates of the replacement step).
    Probe,
}

/// A cycle instance and where its pending pods come from.
pub(super) struct Built {
    pub doc: InstanceDoc,
    /// (group, task) -> the simulator's pods, in creation order.
    pub tasks: BTreeMap<(String, String), Vec<PodId>>,
    pub groups: BTreeMap<String, AppIdx>,
}

/// What a cycle instance says about one pod beyond its requests.
fn flags(w: &World, p: PodId) -> (bool, bool) {
    // (releasing, never a victim)
    let pod = &w.pods[p];
    if matches!(pod.phase, Phase::Swapping { .. }) {
        return (false, true);
    }
    match pod.released {
        Some(Termination::PlaceholderReplaced) => {
            let a = pod.app.expect("released pods belong to applications");
            let elsewhere = w.apps[a].pods.iter().any(|&q| matches!(&w.pods[q].phase, Phase::Swapping { ph, node: Some(_) } if *ph == p));
            // Replaced on another node: its queue charge has passed to the replacement.
            // On its own node it stands for the replacement until the confirmation.
            (elsewhere, true)
        }
        Some(_) => (false, true),
        None => (false, false),
    }
}

impl World<'_> {
    fn wanted(&self, p: PodId, want: Want) -> bool {
        if self.pods[p].phase != Phase::Pending {
            return false;
        }
        let ph = self.is_ph(p);
        match want {
            Want::Placeholders => ph,
            Want::Normal => !ph && !self.can_replace(p),
            Want::Atomic => ph || !self.can_replace(p),
            Want::Probe => !ph && self.pods[p].spec.task_group.is_some(),
        }
    }

    /// The cycle instance: the cluster as it is, with the pending asks `want` selects.
    pub(super) fn build(&self, want: Want) -> Built {
        let sc = self.sc;
        let mut doc = InstanceDoc {
            topology: sc.instance.topology.clone(),
            shared_devices: sc.instance.shared_devices.clone(),
            priority_classes: sc.instance.priority_classes.clone(),
            nodes: self.nodes.clone(),
            pod_groups: sc.instance.pod_groups.clone(),
            pods: Vec::new(),
            queues: sc.instance.queues.clone(),
            options: sc.instance.options.clone(),
        };
        let mut tasks = BTreeMap::new();
        let mut groups = BTreeMap::new();
        for (a, app) in self.apps.iter().enumerate() {
            let pending: Vec<PodId> = app.pods.iter().copied().filter(|&p| self.wanted(p, want)).collect();
            let bound = app.pods.iter().any(|&p| matches!(self.pods[p].phase, Phase::Bound(_) | Phase::Swapping { node: Some(_), .. }));
            if pending.is_empty() && !bound {
                continue;
            }
            let name = self.group_name(a);
            let gang = want == Want::Atomic && pending.iter().any(|&p| self.is_ph(p));
            let mut shapes: Vec<(String, TaskDoc, Vec<PodId>)> = Vec::new();
            for &p in &pending {
                let s = &self.pods[p].spec;
                let key = if want == Want::Probe {
                    format!("pod {p}")
                } else {
                    serde_json::to_string(&(self.is_ph(p), &s.task_group, &s.req, &s.node_selector, &s.tolerations, &s.node_affinity))
                        .expect("serializable")
                };
                match shapes.iter_mut().find(|x| x.0 == key) {
                    Some(x) => {
                        x.1.count += 1;
                        x.2.push(p);
                    }
                    None => {
                        let t = TaskDoc {
                            name: format!("t{}", shapes.len()),
                            count: 1,
                            requests: sc.resources_doc(&s.req),
                            node_selector: s.node_selector.clone(),
                            tolerations: s.tolerations.clone(),
                            node_affinity: s.node_affinity.clone(),
                            ..Default::default()
                        };
                        shapes.push((key, t, vec![p]));
                    }
                }
            }
            let mut task_docs = Vec::new();
            if shapes.is_empty() {
                // Only bound pods: the group still needs a task, with nothing to place.
                task_docs.push(TaskDoc { name: "bound".into(), count: 0, ..Default::default() });
            }
            for (_, mut t, pods) in shapes {
                if gang {
                    // The whole rest of the gang's placeholders, or nothing; real pods
                    // of the group are extra.
                    t.min_count = Some(if self.is_ph(pods[0]) { t.count } else { 0 });
                }
                tasks.insert((name.clone(), t.name.clone()), pods);
                task_docs.push(t);
            }
            groups.insert(name.clone(), a);
            doc.pod_groups.push(PodGroupDoc {
                name: name.clone(),
                queue: app.queue.clone(),
                priority: Some(app.priority),
                created_at: Some(app.submitted / 1000),
                policy: Some(if gang { "gang" } else { "basic" }.into()),
                tasks: task_docs,
                ..Default::default()
            });
        }
        for (p, pod) in self.pods.iter().enumerate() {
            let place = match &pod.phase {
                Phase::Bound(pl) | Phase::Swapping { node: Some(pl), .. } => pl,
                _ => continue,
            };
            if let Some(bg) = &pod.background {
                doc.pods.push(bg.clone());
                continue;
            }
            let a = pod.app.expect("pods without documents belong to applications");
            let (releasing, guarded) = flags(self, p);
            doc.pods.push(PodDoc {
                name: pod.name.clone(),
                node: place.node.clone(),
                pod_group: Some(self.group_name(a)),
                requests: sc.resources_doc(&pod.spec.req),
                device_ids: place.devices.clone(),
                placeholder: pod.spec.placeholder,
                releasing,
                preemptible: guarded.then_some(false),
                ..Default::default()
            });
        }
        Built { doc, tasks, groups }
    }

    fn instance(&self, built: &Built) -> Result<Instance, String> {
        Instance::from_doc(&built.doc)
            .map_err(|e| format!("at {} s the simulator's cycle instance is invalid: {e}", self.now as f64 / 1000.0))
    }

    /// One decision: build, solve, check, apply.
    fn decide(&mut self, want: Want, stat: &mut CycleStat) -> Result<(), String> {
        let built = self.build(want);
        if built.tasks.is_empty() {
            return Ok(());
        }
        let inst = self.instance(&built)?;
        let opts = if want == Want::Placeholders {
            Options::with_solver(SolverKind::YuniKornFair)
        } else {
            Options {
                solver: self.opts.solver,
                time_limit: self.opts.time_limit,
                work_limit: self.opts.work_limit,
                threads: self.opts.threads,
                ..Options::default()
            }
        };
        let t0 = std::time::Instant::now();
        let d = crate::solve(&inst, &opts);
        stat.solve_micros += t0.elapsed().as_micros() as u64;
        stat.decisions += 1;
        stat.pending += built.tasks.values().map(|v| v.len() as u32).sum::<u32>();
        if self.opts.check {
            self.decisions_checked += 1;
            let report = crate::check(&inst, &d);
            if !report.is_valid() {
                // Counted and logged; the decision is not applied, so the state stays
                // one that valid decisions led to.
                self.check_failures += 1;
                let what = if want == Want::Placeholders { "placeholders" } else { "pods" };
                let text = crate::check::render(&report);
                self.emit(
                    None,
                    "checkFailed",
                    vec![
                        ("solver", serde_json::json!(opts.solver.name())),
                        ("decision", serde_json::json!(what)),
                        ("report", serde_json::json!(text)),
                    ],
                );
                debug_assert!(false, "a cycle decision fails check:\n{text}");
                return Ok(());
            }
        }
        self.apply(&built, &d, stat);
        Ok(())
    }

    fn apply(&mut self, built: &Built, d: &Decision, stat: &mut CycleStat) {
        for ev in &d.evictions {
            if let Some(&p) = self.by_name.get(&ev.pod) {
                self.evict(p, &ev.preemptor);
            }
        }
        for pl in &d.placements {
            let Some(&a) = built.groups.get(&pl.pod_group) else { continue };
            let mut next: BTreeMap<&str, usize> = BTreeMap::new();
            for pod in &pl.pods {
                let i = next.entry(pod.task.as_str()).or_default();
                let Some(&p) = built.tasks.get(&(pl.pod_group.clone(), pod.task.clone())).and_then(|v| v.get(*i)) else { continue };
                *i += 1;
                let devices = pod.device_ids.iter().map(|(r, ids)| (r.clone(), ids.iter().map(|&x| x as i64).collect())).collect();
                self.allocate(a, p, Place { node: pod.node.clone(), devices, since: self.now });
                stat.placed += 1;
            }
        }
    }

    /// `tryPlaceholderAllocate` for every application, until no swap is left (§3).
    fn replacement_step(&mut self) -> Result<(), String> {
        let candidates: Vec<AppIdx> = (0..self.apps.len())
            .filter(|&a| {
                let app = &self.apps[a];
                app.core.is_some()
                    && app
                        .pods
                        .iter()
                        .any(|&p| self.is_ph(p) && matches!(self.pods[p].phase, Phase::Bound(_)) && self.pods[p].released.is_none())
                    && app.pods.iter().any(|&p| self.wanted(p, Want::Probe))
            })
            .collect();
        if candidates.is_empty() {
            return Ok(());
        }
        let built = self.build(Want::Probe);
        let inst = self.instance(&built)?;
        let cycle = Cycle::new(&inst);
        let mut states = cycle.nodes.clone();
        let mut task_of: BTreeMap<PodId, TaskId> = BTreeMap::new();
        for ((g, t), pods) in &built.tasks {
            let gid = inst.group_id(g).expect("built group");
            let tid = inst.groups[gid].tasks.iter().copied().find(|&x| &inst.tasks[x].name == t).expect("built task");
            task_of.insert(pods[0], tid);
        }
        let probe = Probe { inst: &inst, cycle: &cycle, task_of: &task_of };
        for a in candidates {
            while self.try_placeholder_allocate(a, &probe, &mut states) {}
        }
        Ok(())
    }

    fn try_placeholder_allocate(&mut self, a: AppIdx, pr: &Probe, states: &mut [crate::engine::cycle::NodeState]) -> bool {
        let app_pods = self.apps[a].pods.clone();
        let asks: Vec<PodId> = app_pods.iter().copied().filter(|&p| self.wanted(p, Want::Probe)).collect();
        let mut first: Option<(PodId, PodId)> = None;
        for &r in &asks {
            let tg = self.pods[r].spec.task_group.clone();
            for &ph in &app_pods {
                if !self.is_ph(ph) || self.pods[ph].released.is_some() || self.pods[ph].spec.task_group != tg {
                    continue;
                }
                let Phase::Bound(place) = self.pods[ph].phase.clone() else { continue };
                let larger = self.pods[r].spec.req.iter().zip(&self.pods[ph].spec.req).any(|(x, y)| x > y);
                if larger {
                    self.release(a, ph, Termination::Timeout, "cancel placeholder: resource incompatible");
                    continue;
                }
                if first.is_none() {
                    first = Some((r, ph));
                }
                let fits = match (pr.inst.node_id(&place.node), pr.task_of.get(&r)) {
                    (Some(n), Some(&t)) => passes_filters(pr.inst, t, n),
                    _ => false,
                };
                if fits {
                    self.pods[r].phase = Phase::Swapping { ph, node: None };
                    let msg = format!("replacing allocationKey: {}", self.pods[r].name);
                    self.release(a, ph, Termination::PlaceholderReplaced, &msg);
                    return true;
                }
            }
        }
        // No placeholder's node passes the predicates: the first pair, on the first node of
        // the node iterator that fits the real pod.
        let Some((r, ph)) = first else { return false };
        let Some(&t) = pr.task_of.get(&r) else { return false };
        let inst = pr.inst;
        for n in sorted_nodes(pr.cycle, states, NodeSort::Fair) {
            if !passes_filters(inst, t, n) {
                continue;
            }
            if let Some(dev) = states[n].take(inst, &pr.cycle.shared_ids, &inst.tasks[t].requests) {
                let devices =
                    dev.iter().map(|(&rid, ids)| (inst.resources[rid].clone(), ids.iter().map(|&x| x as i64).collect())).collect();
                self.pods[r].phase =
                    Phase::Swapping { ph, node: Some(Place { node: inst.nodes[n].name.clone(), devices, since: self.now }) };
                self.on_bound(r);
                let msg = format!("replacing allocationKey: {}", self.pods[r].name);
                self.release(a, ph, Termination::PlaceholderReplaced, &msg);
                return true;
            }
        }
        false
    }

    /// One cycle at time `t`.
    pub(super) fn cycle(&mut self, t: Ms) -> Result<(), String> {
        self.advance(t);
        self.changed = false;
        self.last_cycle = Some(t);
        let mut stat = CycleStat { at: t, ..Default::default() };
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.in_flight).into_iter().partition(|&(_, _, sent)| sent < t);
        self.in_flight = rest;
        for (p, term, _) in due {
            self.confirm(p, term);
        }
        self.replacement_step()?;
        match self.mode() {
            PlaceholderMode::YuniKorn => {
                self.decide(Want::Placeholders, &mut stat)?;
                self.decide(Want::Normal, &mut stat)?;
            }
            PlaceholderMode::Atomic => self.decide(Want::Atomic, &mut stat)?,
        }
        stat.used = self.used.clone();
        stat.reserved = self.reserved.clone();
        stat.cap = self.cap.clone();
        self.cycles.push(stat);
        self.dirty = self.changed;
        Ok(())
    }

    /// When the next cycle runs: at the next tick of the period if there are asks and
    /// something changed since the last cycle (an unchanged cycle would decide the same),
    /// or at the first tick after a release in flight was sent.
    fn next_cycle(&self) -> Option<Ms> {
        let p = self.sc.period;
        let at_or_after = |x: Ms| (x + p - 1) / p * p;
        let bump = |g: Ms| match self.last_cycle {
            Some(l) if g <= l => l + p,
            _ => g,
        };
        let mut best: Option<Ms> = None;
        if self.dirty && self.has_asks() {
            best = Some(bump(at_or_after(self.now)));
        }
        if let Some(s) = self.in_flight.iter().map(|f| f.2).min() {
            let g = bump((s / p + 1) * p).max(bump(at_or_after(self.now)));
            best = Some(best.map_or(g, |b: Ms| b.min(g)));
        }
        best
    }

    /// Runs the scenario to its end.
    pub(super) fn run(&mut self, progress: &mut dyn FnMut(super::Progress)) -> Result<(), String> {
        let events = &self.sc.events;
        let end = self.sc.until.or(events.last().map(|e| e.0)).unwrap_or(0);
        let mut i = 0;
        loop {
            let te = [events.get(i).map(|e| e.0), self.next_timer()].into_iter().flatten().min();
            let tc = self.next_cycle();
            let t = match (te, tc) {
                (None, None) => break,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => a.min(b),
            };
            if let Some(u) = self.sc.until {
                if t > u {
                    self.advance(u);
                    break;
                }
            }
            if te == Some(t) {
                self.advance(t);
                while i < events.len() && events[i].0 == t {
                    self.apply_event(&events[i].1);
                    i += 1;
                }
                self.fire_timers_at(t);
            } else {
                self.cycle(t)?;
                progress(super::Progress { at: t, end, cycles: self.cycles.len() as u64 });
            }
        }
        Ok(())
    }
}

struct Probe<'a> {
    inst: &'a Instance,
    cycle: &'a Cycle<'a>,
    task_of: &'a BTreeMap<PodId, TaskId>,
}
