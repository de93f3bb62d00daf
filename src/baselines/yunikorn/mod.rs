//! The YuniKorn baselines `yunikorn-fair` and `yunikorn-binpacking`, ported from
//! apache/yunikorn-core (master after v1.8.0; `sorters.go` read at commit 898790d, where
//! StateAware is already parsed as FIFO) and the gang lifecycle of
//! `shared/spec/yunikorn-gang-lifecycle.md` (read from the same sources).
//!
//! One scheduling cycle is simulated allocation by allocation, as YuniKorn's loop runs
//! (`context.go schedule` -> `partition.go tryAllocate` -> `queue.go TryAllocate` ->
//! `application.go tryAllocate`), each step with the state left by the previous one:
//! 1. **Queues** ([`queues`]): from `root`, child queues with pending asks in `fair` order
//!    (parents always sort fair): with `application.sort.priority` enabled (the default)
//!    by current priority (the highest pending application priority below, plus
//!    `priority.offset`, only the offset past a `fence`), then by usage over `guaranteed`
//!    (`CompUsageRatioSeparately`), then larger pending first; depth first.
//! 2. **Applications** in a leaf, those with pending asks, by its
//!    `application.sort.policy`: FIFO (StateAware reads as FIFO since 1.6) by priority
//!    then `createdAt`, FAIR by priority then usage over the leaf's guarantee (priority
//!    last when priority sorting is disabled). An application that is not running yet is
//!    skipped while a queue on its path is at `maxapplications` (`canRunApp`).
//! 3. **Asks** of the application in order (priority, then creation): the first ask that
//!    fits the **queue headroom** (`max` minus usage along the path, for the resources
//!    `max` names, checked before every allocation, never afterwards) and a node is
//!    allocated; an ask that fits nothing is skipped, not the application.
//! 4. **Nodes** ([`nodes`]) in the node sorting policy's order: `fair` least used first,
//!    `binpacking` most used first (mean usage share of vcore and memory); the first node
//!    that passes the predicates (selector, affinity, taints) and has room.
//!
//! After one allocation the loop starts again from the root (queues and applications are
//! re-sorted on the new usage) until nothing can be allocated.
//!
//! Gangs (policy `gang`) follow the shim: the application first asks for one placeholder
//! per member of its minimum (each task's `minCount`; a group `minCount` above their sum is
//! made up from the tasks in order); the real pods are held until every placeholder is
//! allocated, then each replaces a placeholder on its node (`tryPlaceholderAllocate`: same
//! size, same node, so usage does not change) and the elastic pods beyond the minimum are
//! ordinary asks. Placeholders that never complete hold their nodes and quota for the rest
//! of the cycle and are then released (the placeholder timeout, collapsed to the end of the
//! cycle): the gang is not placed. Basic groups ask for every pod; they are placed with
//! whatever they get.
//!
//! What YuniKorn does not know, modelled as the shim's predicates would express it: a
//! `required` topology level is pod affinity among the group's pods (the domain of its
//! first allocated pod, or the one its bound members pin); a `slice` is one ask of `size`
//! pods allocated together, each in the slice domain of the first. No preemption, no
//! reservations (both need time to pass). Ties that YuniKorn leaves to Go map order are
//! broken by configuration order (queues) and input order (applications).
//!
//! The allocation step is [`place::World::try_ask`]; [`place::World::place_app_asks`]
//! places one application's asks in order against the current headroom and nodes.

pub(crate) mod nodes;
pub(crate) mod place;
pub(crate) mod queues;

use crate::engine::assemble::assemble;
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::Cycle;
use crate::engine::Solver;
use crate::model::queues::{QueueId, SortPolicy};
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;
use crate::wire::decision::Status;
use nodes::NodeSort;
use place::{Ask, World};
use queues::{res_of, sort_apps, sort_queues, AppKey, QueueKey, Res};

/// A YuniKorn node sorting policy as a solver.
pub struct YuniKorn {
    /// `binpacking` (else `fair`).
    pub binpacking: bool,
}

impl Solver for YuniKorn {
    fn name(&self) -> &'static str {
        if self.binpacking {
            "yunikorn-binpacking"
        } else {
            "yunikorn-fair"
        }
    }
    fn describe(&self) -> &'static str {
        if self.binpacking {
            "YuniKorn core (master after v1.8.0), node sort binpacking: one allocation at a time, queues fair by priority then usage/guaranteed, apps FIFO/FAIR with priority, headroom checked per allocation, gangs as placeholders allocated member by member (incomplete ones released at the timeout)"
        } else {
            "YuniKorn core (master after v1.8.0), node sort fair: one allocation at a time, queues fair by priority then usage/guaranteed, apps FIFO/FAIR with priority, headroom checked per allocation, gangs as placeholders allocated member by member (incomplete ones released at the timeout)"
        }
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let sort = if self.binpacking { NodeSort::BinPacking } else { NodeSort::Fair };
        let a = run(&cycle, sort);
        let mut d = assemble(&cycle, &a, Status::Feasible, f64::NAN);
        d.stats.solver = Some(self.name().into());
        d.stats.solve_millis = Some(start.elapsed().as_millis() as u64);
        d
    }
}

/// One application of the cycle.
struct App {
    group: GroupId,
    /// Asks in order; gangs: the placeholders until they are all allocated, then the
    /// elastic pods.
    asks: Vec<Ask>,
    /// Per ask: allocated, or known not to fit (capacity and headroom only shrink within
    /// a cycle, so a failed ask stays failed).
    done: Vec<bool>,
    /// Gang still allocating placeholders.
    reserving: bool,
    /// Elastic asks of a gang, asked once the placeholders are all allocated.
    elastic: Vec<Ask>,
    pods: Vec<NewPod>,
    /// Allocated resource (bound members included), for FAIR sorting.
    allocated: Vec<i64>,
    allocated_pods: i64,
}

impl App {
    fn pending(&self) -> bool {
        self.done.iter().any(|&d| !d)
    }
}

/// Units (one pod, or one slice) of task `t` in the minimum and in all.
fn units(inst: &Instance, t: TaskId) -> (i64, i64, i64) {
    let task = &inst.tasks[t];
    let k = task.slice.map_or(1, |(_, k)| k);
    let max = task.count / k;
    let min = ((task.min_count + k - 1) / k).min(max).max(0);
    (min, max, k)
}

fn make_app(inst: &Instance, g: GroupId) -> App {
    let grp = &inst.groups[g];
    let gang = grp.policy == Policy::Gang;
    let mut asks = Vec::new();
    let mut elastic = Vec::new();
    if gang {
        let mut placeholders: Vec<(TaskId, i64)> = grp.tasks.iter().map(|&t| (t, units(inst, t).0)).collect();
        // A group minimum above the task minimums: more placeholders, tasks in order.
        let mut short = inst.min_new_pods(g) - placeholders.iter().map(|&(t, u)| u * units(inst, t).2).sum::<i64>();
        for (t, u) in placeholders.iter_mut() {
            let (_, max, k) = units(inst, *t);
            while short > 0 && *u < max {
                *u += 1;
                short -= k;
            }
        }
        for &(t, u) in &placeholders {
            let (_, max, k) = units(inst, t);
            asks.extend((0..u).map(|_| Ask { task: t, pods: k, placeholder: true }));
            elastic.extend((u..max).map(|_| Ask { task: t, pods: k, placeholder: false }));
        }
    } else {
        for &t in &grp.tasks {
            let (_, max, k) = units(inst, t);
            asks.extend((0..max).map(|_| Ask { task: t, pods: k, placeholder: false }));
        }
    }
    let mut allocated = vec![0; inst.resources.len()];
    for &p in &grp.bound {
        for (a, &q) in allocated.iter_mut().zip(&inst.pods[p].requests) {
            *a += q;
        }
    }
    App {
        group: g,
        done: vec![false; asks.len()],
        asks,
        reserving: gang,
        elastic,
        pods: Vec::new(),
        allocated,
        allocated_pods: grp.bound.len() as i64,
    }
}

/// Tries the application's asks in order; the first that allocates ends the step.
fn try_app(world: &mut World, app: &mut App) -> bool {
    let inst = world.cycle.inst;
    for i in 0..app.asks.len() {
        if app.done[i] {
            continue;
        }
        let ask = app.asks[i];
        app.done[i] = true;
        if let Some(pods) = world.try_ask(app.group, &ask) {
            for p in &pods {
                for (a, &q) in app.allocated.iter_mut().zip(&inst.tasks[p.task].requests) {
                    *a += q;
                }
            }
            app.allocated_pods += pods.len() as i64;
            app.pods.extend(pods);
            if app.reserving && app.done.iter().all(|&d| d) {
                finish_reservation(app);
            }
            return true;
        }
        // A failed ask: later asks of the same shape fail as well.
        for j in i + 1..app.asks.len() {
            if app.asks[j] == ask {
                app.done[j] = true;
            }
        }
    }
    false
}

/// Every placeholder is allocated (or known not to fit): if all are allocated, the real
/// pods replace them on their nodes and the elastic pods become asks.
fn finish_reservation(app: &mut App) {
    let complete = app.pods.len() as i64 == app.asks.iter().map(|a| a.pods).sum::<i64>();
    if complete {
        app.reserving = false;
        app.asks = std::mem::take(&mut app.elastic);
        app.done = vec![false; app.asks.len()];
    }
}

/// Pending resource of an application (its asks not yet tried).
fn pending_res(inst: &Instance, app: &App) -> (Vec<i64>, i64) {
    let mut v = vec![0; inst.resources.len()];
    let mut pods = 0;
    for (ask, &d) in app.asks.iter().zip(&app.done) {
        if !d {
            for (x, &q) in v.iter_mut().zip(&inst.tasks[ask.task].requests) {
                *x += q * ask.pods;
            }
            pods += ask.pods;
        }
    }
    (v, pods)
}

/// One step of `root.TryAllocate`: descends the sorted queues to the first application
/// that allocates an ask. False when nothing can be allocated.
fn step(world: &mut World, apps: &mut [App]) -> bool {
    let inst = world.cycle.inst;
    let Some(qs) = &inst.queues else {
        // No queue tree: every application in one FIFO leaf with priority sorting.
        let mut keys: Vec<AppKey> = apps.iter().enumerate().filter(|(_, a)| a.pending()).map(|(i, a)| app_key(inst, i, a)).collect();
        sort_apps(&mut keys, SortPolicy::Fifo, true, None);
        return keys.iter().any(|k| try_app(world, &mut apps[k.group]));
    };
    let tree = &qs.tree;
    // Pending resources and current priorities per queue.
    let n = tree.queues.len();
    let mut pending: Vec<Res> = vec![Res::new(); n];
    let mut prio_apps = Vec::new();
    for a in apps.iter().filter(|a| a.pending()) {
        let g = &inst.groups[a.group];
        let Some(leaf) = g.queue_id else { continue };
        let (v, pods) = pending_res(inst, a);
        let r = res_of(inst, &v, pods);
        for q in tree.ancestors(leaf) {
            for (k, x) in &r {
                *pending[q].entry(k.clone()).or_default() += x;
            }
        }
        prio_apps.push(crate::model::queues::App { name: g.name.clone(), queue: leaf, priority: g.priority, created_at: g.created_at });
    }
    let prios = crate::model::queues::queue_priorities(tree, &prio_apps);
    descend(world, apps, 0, &pending, &prios)
}

fn app_key(inst: &Instance, i: usize, a: &App) -> AppKey {
    let g = &inst.groups[a.group];
    AppKey { group: i, priority: g.priority, submitted: g.created_at, allocated: res_of(inst, &a.allocated, a.allocated_pods) }
}

fn guaranteed(inst: &Instance, q: QueueId) -> Option<Res> {
    let qs = inst.queues.as_ref()?;
    let g: Res = qs.guaranteed[q].iter().filter(|&&(_, v)| v != 0).map(|&(r, v)| (inst.resources[r].clone(), v)).collect();
    (!g.is_empty()).then_some(g)
}

fn descend(world: &mut World, apps: &mut [App], q: QueueId, pending: &[Res], prios: &[Option<i64>]) -> bool {
    let inst = world.cycle.inst;
    let tree = &inst.queues.as_ref().expect("queues").tree;
    let queue = &tree.queues[q];
    if !queue.is_parent {
        let mut keys: Vec<AppKey> = apps
            .iter()
            .enumerate()
            .filter(|(_, a)| a.pending() && inst.groups[a.group].queue_id == Some(q))
            .map(|(i, a)| app_key(inst, i, a))
            .collect();
        sort_apps(&mut keys, queue.sort_policy, queue.sort_priority, guaranteed(inst, q).as_ref());
        return keys.iter().any(|k| try_app(world, &mut apps[k.group]));
    }
    let mut keys: Vec<QueueKey> = queue
        .children
        .iter()
        .filter(|&&c| pending[c].values().any(|&v| v > 0))
        .map(|&c| QueueKey {
            queue: c,
            priority: prios[c].unwrap_or(i64::MIN),
            allocated: world.queues.allocated(inst, c),
            guaranteed: guaranteed(inst, c),
            pending: pending[c].clone(),
        })
        .collect();
    sort_queues(&mut keys, queue.sort_priority);
    keys.iter().any(|k| descend(world, apps, k.queue, pending, prios))
}

fn run(cycle: &Cycle, sort: NodeSort) -> Assignment {
    let inst = cycle.inst;
    let mut world = World::new(cycle, sort);
    let mut apps: Vec<App> = cycle
        .pending
        .iter()
        .filter(|&&g| cycle.rejected[g].is_none() && !matches!(cycle.pinned[g], Some(Err(_))))
        .map(|&g| make_app(inst, g))
        .collect();
    while step(&mut world, &mut apps) {}
    let mut a = Assignment::empty(inst);
    for app in &mut apps {
        let g = app.group;
        if app.reserving {
            // Placeholder timeout: the partial gang is released.
            let pods = std::mem::take(&mut app.pods);
            world.release(g, &pods, true);
            continue;
        }
        if app.pods.is_empty() || !crate::baselines::common::meets_min(cycle, g, &app.pods) {
            continue;
        }
        a.pods[g] = app.pods.clone();
        a.domain[g] = inst.groups[g].required.and(world.domain[g]);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queue usage recomputed from scratch: bound pods plus every pod allocated so far.
    fn usage(inst: &Instance, apps: &[App], q: QueueId, r: ResourceId) -> i64 {
        let qs = inst.queues.as_ref().expect("queues");
        let new: i64 = apps
            .iter()
            .filter(|a| qs.groups_under[q].contains(&a.group))
            .flat_map(|a| &a.pods)
            .map(|p| inst.tasks[p.task].requests[r])
            .sum();
        qs.bound_usage(q, r) + new
    }

    /// At every step of the loop (after each single allocation, placeholders included)
    /// every queue is within its `max` and `maxapplications`, on generated queue instances.
    #[test]
    fn no_queue_is_ever_over_its_limits_at_any_step() {
        let mut steps = 0;
        for seed in 0..150 {
            let inst = Instance::from_doc(&crate::tooling::generate::generate("tiny-queues", seed).unwrap()).unwrap();
            let cycle = Cycle::new(&inst);
            for sort in [NodeSort::Fair, NodeSort::BinPacking] {
                let mut world = World::new(&cycle, sort);
                let mut apps: Vec<App> =
                    cycle.pending.iter().filter(|&&g| cycle.rejected[g].is_none()).map(|&g| make_app(&inst, g)).collect();
                while step(&mut world, &mut apps) {
                    steps += 1;
                    let qs = inst.queues.as_ref().unwrap();
                    for q in 0..qs.tree.queues.len() {
                        for &(r, m) in &qs.max[q] {
                            assert!(usage(&inst, &apps, q, r) <= m, "seed {seed}: queue {} over max", qs.tree.queues[q].path);
                        }
                        if let Some(m) = qs.tree.queues[q].max_applications {
                            let running = qs.groups_under[q]
                                .iter()
                                .filter(|&&g| !inst.groups[g].bound.is_empty() || apps.iter().any(|a| a.group == g && !a.pods.is_empty()))
                                .count();
                            assert!(running as u64 <= m, "seed {seed}: queue {} over maxapplications", qs.tree.queues[q].path);
                        }
                    }
                }
            }
        }
        assert!(steps > 300, "only {steps} allocations checked");
    }

    /// `place_app_asks` by hand. n1, n2: cpu 2; root.q: max cpu 3; basic `g`: 4 pods of cpu
    /// 1, fair node sort. Ask 1: both nodes unused, by name: n1. Ask 2: n1 at 0.5, n2 at 0:
    /// n2. Ask 3: both at 0.5: n1. Ask 4: headroom 3 - 3 = 0: not placed.
    #[test]
    fn place_app_asks_member_by_member() {
        let inst = Instance::from_text(
            r#"
nodes:
  - {name: n1, allocatable: {cpu: "2"}}
  - {name: n2, allocatable: {cpu: "2"}}
queues:
  - name: root
    queues:
      - {name: q, resources: {max: {vcore: "3"}}}
      - {name: default}
podGroups:
  - {name: g, queue: root.q, policy: basic, tasks: [{name: w, count: 4, requests: {cpu: "1"}}]}
"#,
        )
        .unwrap();
        let cycle = Cycle::new(&inst);
        let mut world = World::new(&cycle, NodeSort::Fair);
        let asks = vec![Ask { task: 0, pods: 1, placeholder: false }; 4];
        let got: Vec<Option<String>> =
            world.place_app_asks(0, &asks).into_iter().map(|p| p.map(|v| inst.nodes[v[0].node].name.clone())).collect();
        assert_eq!(got, vec![Some("n1".into()), Some("n2".into()), Some("n1".into()), None]);
    }
}
