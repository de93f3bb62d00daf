//! Large-neighbourhood search for the incumbent of one tier, run beside HiGHS.
//!
//! Why: on a few hundred partly filled nodes HiGHS often has the tier's bound long before
//! it finds a solution that meets it, because it gets no MIP start (see `highs.rs`) and
//! must rediscover everything the earlier tiers fixed. Measured on `flat-256` seed 2: the
//! elastic-pods tier ended at 6 038 against a bound of 7 820 after 10 s, although 7 819 is
//! reachable. This search first frees every pod column with the group decisions kept
//! (one large sub-model), then frees the columns of a few nodes at a time, keeps every other
//! node's pods where they are, and has HiGHS re-pack that small sub-model (built over the
//! free columns only, see [`sub_model`]) with a row that asks for a strictly better tier
//! value. In cycles with victims each round starts with group moves: all pods of one
//! group (or two) free on every node, since a gang's pods span more nodes than a block.
//!
//! Every solution it keeps passes [`verify_rows`] on the tier's own model, whose rows
//! hold the earlier tiers at their optimum: it is a valid placement and never worse in
//! the terms above. It runs on the second core while HiGHS works on the full tier; when
//! its value meets the live bound (HiGHS's, or term 1's relaxation bound, see
//! [`LiveRun::with_ceiling`]) the tier is proven, and it stops HiGHS.
//!
//! Deterministic apart from where it is stopped: neighbourhoods come from a fixed
//! pseudo-random order and each sub-solve has a node limit (its short time limit is only
//! a safety net).

use super::highs::{self, LiveRun, Mip, MipParams, INF};
use super::milp::{tier_value, verify_rows, CycleModel, Tier};
use crate::model::{GroupId, NodeId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Below this many columns HiGHS solves the full model quickly enough alone.
pub const MIN_COLUMNS: usize = 2_000;
/// Nodes freed per sub-model at first; doubled after a round without improvement.
const BLOCK: usize = 12;
const MAX_BLOCK: usize = 48;
const SUB_NODES: i64 = 300;
const SUB_TIME: Duration = Duration::from_millis(400);
/// Group moves per round, most costly (or heaviest left-out) groups first: the blocks
/// after them need their share of the round (measured: all placed groups, on flat-256
/// with preemption, left the blocks too little time on 6 of 10 seeds).
const MAX_MOVES: usize = 8;
/// Nodes per block of `costly_blocks`: twice the first random blocks. Measured on
/// preempt-256 seed 1 at 10 s (one run each): 24 and 36 nodes ended at a tier value of
/// about -1 650 to -2 170, 48 at -3 173, blocks of the random blocks' size (12 growing
/// to 48) at -7 145, none at -10 125.
const COSTLY_BLOCK: usize = 24;
/// Placed groups tried together with each left-out group.
const PARTNERS: usize = 6;

/// When the search ends: at `deadline`, when `stop` is set (HiGHS finished), when
/// its value meets the `live` bound (then it sets `stop` itself), or after `patience`
/// without an improvement.
pub struct Until<'a> {
    pub deadline: Instant,
    pub stop: &'a Arc<AtomicBool>,
    pub live: &'a LiveRun,
    /// Start with the fixed-groups sub-model (see [`search`]).
    pub fixed_groups_first: bool,
    /// Give up once this long has passed since the start or the last improvement.
    pub patience: Option<Duration>,
    /// Deterministic mode (`options.workLimit`): at most this many branch-and-bound nodes
    /// over all sub-models, which then have no time limits of their own (the deadline
    /// stays a safety net).
    pub work: Option<u64>,
}

/// Improves `start` on `tier` of `mip` (maximize) until `stop`, the deadline, the
/// patience runs out, or a round of the largest neighbourhoods finds nothing. `on_better` sees each
/// improvement; the best one is returned (`None` if none was found).
pub fn search(
    model: &CycleModel,
    mip: &Mip,
    tier: &Tier,
    start: &[f64],
    until: Until,
    on_better: &mut dyn FnMut(&[f64]),
) -> Option<Vec<f64>> {
    let Until { deadline, stop, live, fixed_groups_first, patience, work } = until;
    let coefs = &tier.coefs[..];
    let mut last_gain = Instant::now();
    let mut budget = Budget { left: work };
    let out_of_patience = |last_gain: Instant| patience.is_some_and(|p| last_gain.elapsed() >= p);
    let col_node = model.column_nodes();
    // Neighbourhoods are drawn from the nodes the objective is about (elastic pods);
    // when it is about groups (placed@), from every node with a column.
    let mut targets: Vec<NodeId> = coefs.iter().filter_map(|&(c, _)| col_node[c]).collect();
    if targets.is_empty() {
        targets = col_node.iter().flatten().copied().collect();
    }
    targets.sort_unstable();
    targets.dedup();
    if targets.is_empty() {
        return None;
    }
    let max_node = col_node.iter().flatten().copied().max().unwrap_or(0);
    let mut best = start.to_vec();
    let mut best_val = tier_value(coefs, &best);
    let mut found = None;
    let mut block = BLOCK;
    let mut in_block = vec![false; max_node + 1];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    // First, every pod column of every node at once with the group decisions (and
    // domains, slices, evictions: the columns without a node) kept: the tier's whole
    // packing question for the incumbent's groups, which HiGHS's own heuristics reach
    // only after the root of the full tier.
    if fixed_groups_first && !stop.load(Ordering::Relaxed) {
        let free: Vec<bool> = col_node.iter().map(|n| n.is_some()).collect();
        if let Some((sub, cols)) = sub_model(mip, coefs, &free, &best, (best_val + 0.5, &[])) {
            let half = deadline.saturating_duration_since(Instant::now()) / 2;
            let until = if budget.left.is_some() { deadline } else { Instant::now() + half };
            let params = MipParams {
                stop: Some(Arc::clone(stop)),
                max_nodes: budget.nodes(i64::MAX),
                max_work: budget.left,
                ..MipParams::until(until, 0.0, 0.999).with(&model.diag)
            };
            let res = highs::solve(&sub, None, &params);
            budget.spend(&res);
            let better = strictly_better(mip, coefs, &best, best_val, &cols, &res.values);
            adopt(better, (&mut best, &mut best_val, &mut found, &mut last_gain), on_better);
            if model.diag.debug {
                eprintln!("lns: fixed groups: {:?}, best {best_val}", res.status);
            }
        }
    }
    // (Whether that met HiGHS's bound is checked, like after every sub-model, at the top
    // of the loop.)
    // Group moves, in cycles with victims. A gang's pods span more nodes than a block, so
    // each round first frees, one group at a time, every pod column of one group (and
    // every column without a node: evictions, group decisions, domains):
    // - in an eviction tier (its objective is on eviction columns only), the groups whose
    //   pods sit where the incumbent evicts, most costly first: a costly eviction goes
    //   away only when its preemptor moves;
    // - in a tier of groups placed (the first), the groups left out, by their weight,
    //   alone and with the placed groups in their way (`left_out_moves`): with evictions
    //   free in that tier, a left-out group can often make its own room.
    // At most `MAX_MOVES` groups per round, so the node blocks keep their share.
    let eviction_cols: Vec<usize> = model.eviction_nodes().iter().map(|&(c, _)| c).collect(); // ascending
    let y_group: std::collections::HashMap<usize, GroupId> = model.group_columns().into_iter().map(|(g, c)| (c, g)).collect();
    let eviction_tier = !coefs.is_empty() && coefs.iter().all(|(c, _)| eviction_cols.binary_search(c).is_ok());
    let placement_tier = !eviction_cols.is_empty() && !coefs.is_empty() && coefs.iter().all(|(c, _)| y_group.contains_key(c));
    let col_group = if eviction_tier || placement_tier { model.column_groups() } else { Vec::new() };
    // Eviction tiers: what each eviction column costs in the tier.
    let weight = weights_of(coefs);
    // Costly blocks: eviction tiers over several priority levels. Measured (models/cycle.md
    // 6.7): preempt-256 seeds 1-5 at 10 s, better on 5 of 5 (priority-1000 victims 20, 25,
    // 7, 23, 53 -> 5, 4, 7, 15, 11). Not in a tier of one level, where every eviction costs
    // the same: there no measurement showed a difference beyond run-to-run variation.
    let costly_tier = eviction_tier && coefs.iter().any(|&(_, a)| (a - coefs[0].1).abs() > 1e-9) && !model.diag.no_costly_blocks;
    // After a round whose group moves found nothing, the rounds go on without them: on
    // flat clusters with preemption they rarely pay and take the blocks' time (measured,
    // models/cycle.md 6.7).
    let mut moves_pay = true;
    let mut costly_pay = true;
    // In the first tier evictions cost nothing, so a sub-model would evict at random and
    // the eviction tier would start from that (measured: a flat-256 cycle with preemption
    // ended with 2 priority-100 victims where the previous code, whose first tier HiGHS
    // alone solved, had none). A penalty below 1 in total keeps only the evictions needed.
    let penalty: Vec<(usize, f64)> = if placement_tier {
        let eps = 0.5 / (eviction_cols.len() as f64 + 1.0);
        eviction_cols.iter().map(|&c| (c, -eps)).collect()
    } else {
        Vec::new()
    };
    loop {
        let mut improved = false;
        let mut solves = 0;
        let round_start = Instant::now();
        let movers: Vec<Vec<GroupId>> = if !moves_pay {
            Vec::new()
        } else if eviction_tier {
            let mut by_cost = preemptors_by_cost(model, &weight, &best, &col_node, &col_group);
            by_cost.truncate(MAX_MOVES);
            by_cost.into_iter().map(|g| vec![g]).collect()
        } else if placement_tier {
            left_out_moves(coefs, &best, &y_group, &col_node, &col_group)
        } else {
            Vec::new()
        };
        for moving in movers {
            if stop.load(Ordering::Relaxed)
                || Instant::now() >= deadline
                || live.bound() < best_val + 0.999
                || out_of_patience(last_gain)
                || budget.spent()
            {
                break;
            }
            // The group's pod columns everywhere, the node-wide device columns (whole
            // devices), and the columns without a node (evictions, domains, slices).
            let free: Vec<bool> =
                (0..col_node.len()).map(|c| col_node[c].is_none() || col_group[c].is_none_or(|h| moving.contains(&h))).collect();
            let Some(better) =
                try_neighbourhood(mip, (coefs, &penalty), &free, (&best, best_val), (deadline, stop), &model.diag, &mut budget)
            else {
                continue;
            };
            solves += 1;
            improved |= adopt(better, (&mut best, &mut best_val, &mut found, &mut last_gain), on_better);
        }
        moves_pay &= improved;
        if model.diag.debug && (eviction_tier || placement_tier) {
            eprintln!("lns: {solves} group moves: best {best_val}");
        }
        // First, blocks around the costliest evictions, each with the nodes that have the
        // most room for the pods there (`costly_blocks`).
        let costly = if costly_tier && costly_pay {
            costly_blocks(model, mip, &weight, &best, &col_node, &col_group, COSTLY_BLOCK)
        } else {
            Vec::new()
        };
        let mut costly_gain = false;
        // Then random blocks of `block` nodes.
        let mut order = targets.clone();
        for i in (1..order.len()).rev() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            order.swap(i, (rng % (i as u64 + 1)) as usize);
        }
        for (i, chunk) in costly.iter().map(|b| &b[..]).chain(order.chunks(block)).enumerate() {
            if stop.load(Ordering::Relaxed) || Instant::now() >= deadline || out_of_patience(last_gain) || budget.spent() {
                if model.diag.debug {
                    eprintln!(
                        "lns: stopped after {solves} sub-models in {} ms of this round, best {best_val}{}",
                        round_start.elapsed().as_millis(),
                        if out_of_patience(last_gain) { " (no gain within its patience)" } else { "" }
                    );
                }
                return found;
            }
            // Proven: nothing above `best_val` exists (integer objective).
            if live.bound() < best_val + 0.999 {
                stop.store(true, Ordering::Relaxed);
                return found;
            }
            in_block.iter_mut().for_each(|b| *b = false);
            for &n in chunk {
                in_block[n] = true;
            }
            let free: Vec<bool> = col_node.iter().map(|n| n.is_none_or(|n| in_block[n])).collect();
            let Some(better) =
                try_neighbourhood(mip, (coefs, &penalty), &free, (&best, best_val), (deadline, stop), &model.diag, &mut budget)
            else {
                continue;
            };
            solves += 1;
            let gain = adopt(better, (&mut best, &mut best_val, &mut found, &mut last_gain), on_better);
            costly_gain |= gain && i < costly.len();
            improved |= gain;
        }
        // Like the group moves: the costly blocks stop for the tier after a round without gain.
        if !costly.is_empty() {
            costly_pay &= costly_gain;
        }
        if model.diag.debug {
            eprintln!(
                "lns: round with blocks of {block}: best {best_val}, {} ms left",
                deadline.saturating_duration_since(Instant::now()).as_millis()
            );
        }
        if !improved {
            if block >= MAX_BLOCK.min(targets.len()) {
                return found;
            }
            block = (block * 2).min(MAX_BLOCK);
        }
    }
}

/// The search on `next` with `held` kept at least at its value in `from` (a floor row):
/// what `run_tiers` runs on the second core while HiGHS is still at work on `held`. Each
/// solution it keeps passes every row of `mip` and the floor; none is proven.
pub fn look_ahead(
    model: &CycleModel,
    mip: &Mip,
    (held, next): (&Tier, &Tier),
    from: &[f64],
    (deadline, stop, work): (Instant, &Arc<AtomicBool>, Option<u64>),
    on_better: &mut dyn FnMut(&[f64]),
) -> Option<Vec<f64>> {
    let mut floored = mip.clone();
    floored.add_row(tier_value(&held.coefs, from).round() - 0.5, INF, held.coefs.clone());
    // No bound is known for `next` here (HiGHS is on `held`): the search runs until told.
    let no_bound = LiveRun::default();
    let until = Until { deadline, stop, live: &no_bound, fixed_groups_first: false, patience: None, work };
    search(model, &floored, next, from, until, on_better)
}

/// The moves of a tier of groups placed: the left-out groups by weight (at most
/// [`MAX_MOVES`]), each alone, then each with the placed groups that hold the most pods
/// on the nodes it may use ([`PARTNERS`] of them), which may have to make room for it.
fn left_out_moves(
    coefs: &[(usize, f64)],
    best: &[f64],
    y_group: &std::collections::HashMap<usize, GroupId>,
    col_node: &[Option<NodeId>],
    col_group: &[Option<GroupId>],
) -> Vec<Vec<GroupId>> {
    let mut left_out: Vec<(f64, GroupId)> = coefs.iter().filter(|&&(c, _)| best[c] < 0.5).map(|&(c, a)| (a, y_group[&c])).collect();
    left_out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    left_out.truncate(MAX_MOVES);
    let mut moves: Vec<Vec<GroupId>> = left_out.iter().map(|&(_, g)| vec![g]).collect();
    let max_node = col_node.iter().flatten().copied().max().unwrap_or(0);
    for &(_, g) in &left_out {
        let mut usable = vec![false; max_node + 1];
        for c in 0..col_node.len() {
            if let (Some(n), Some(h)) = (col_node[c], col_group[c]) {
                usable[n] |= h == g;
            }
        }
        let mut pods_there: std::collections::BTreeMap<GroupId, f64> = Default::default();
        for c in 0..col_node.len() {
            if let (Some(n), Some(h)) = (col_node[c], col_group[c]) {
                if h != g && usable[n] && best[c] > 0.5 {
                    *pods_there.entry(h).or_default() += best[c];
                }
            }
        }
        let mut partners: Vec<(f64, GroupId)> = pods_there.into_iter().map(|(h, k)| (k, h)).collect();
        partners.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        moves.extend(partners.into_iter().take(PARTNERS).map(|(_, h)| vec![g, h]));
    }
    moves
}

/// Per column of a tier's objective: its weight, as a positive cost.
type Weights = std::collections::HashMap<usize, f64>;

fn weights_of(coefs: &[(usize, f64)]) -> Weights {
    coefs.iter().map(|&(c, a)| (c, a.abs())).collect()
}

/// The units `best` evicts that the tier counts: (weight, eviction column, nodes of the
/// unit's pods), in column order.
fn counted_evictions<'m>(model: &'m CycleModel, weight: &Weights, best: &[f64]) -> Vec<(f64, usize, &'m [NodeId])> {
    model
        .eviction_nodes()
        .iter()
        .filter(|(c, _)| best[*c] > 0.5)
        .filter_map(|(c, nodes)| weight.get(c).filter(|&&w| w > 0.0).map(|&w| (w, *c, &nodes[..])))
        .collect()
}

/// Placed groups with a pod on a node where `best` evicts a unit that the tier counts,
/// by the tier weight of those evictions (each unit counted once per group), highest
/// first, then by group id.
fn preemptors_by_cost(
    model: &CycleModel,
    weight: &Weights,
    best: &[f64],
    col_node: &[Option<NodeId>],
    col_group: &[Option<GroupId>],
) -> Vec<GroupId> {
    // Per node: the evicted units (their weight) with a pod there.
    let max_node = col_node.iter().flatten().copied().max().unwrap_or(0);
    let mut evicted_on: Vec<Vec<(usize, f64)>> = vec![Vec::new(); max_node + 1];
    for (w, c, nodes) in counted_evictions(model, weight, best) {
        for &n in nodes.iter().filter(|&&n| n <= max_node) {
            evicted_on[n].push((c, w));
        }
    }
    let mut seen: std::collections::BTreeMap<GroupId, std::collections::BTreeMap<usize, f64>> = Default::default();
    for c in 0..best.len() {
        if let (Some(n), Some(g)) = (col_node[c], col_group[c]) {
            if best[c] > 0.5 {
                seen.entry(g).or_default().extend(evicted_on[n].iter().copied());
            }
        }
    }
    let mut cost: Vec<(f64, GroupId)> =
        seen.into_iter().map(|(g, units)| (units.values().sum::<f64>(), g)).filter(|&(w, _)| w > 0.0).collect();
    cost.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    cost.into_iter().map(|(_, g)| g).collect()
}

/// Blocks of `size` nodes for an eviction tier, one per costly eviction of `best` (at
/// most [`MAX_MOVES`], costliest first): the nodes of the evicted unit, then the nodes
/// with the most room for the groups whose pods sit there. A costly eviction goes away
/// only if those pods move to where they cost less, and random blocks rarely hold both
/// ends of such a move.
///
/// Room on a node, for an eviction of tier weight `w`: over its capacity rows
/// ([`CycleModel::capacity_rows`]; none: no limit), the least of (slack at `best` plus what the
/// units there that cost less than `w` and are not evicted would free), in pods of the
/// row's largest request.
fn costly_blocks(
    model: &CycleModel,
    mip: &Mip,
    weight: &Weights,
    best: &[f64],
    col_node: &[Option<NodeId>],
    col_group: &[Option<GroupId>],
    size: usize,
) -> Vec<Vec<NodeId>> {
    let mut costly = counted_evictions(model, weight, best);
    if costly.is_empty() {
        return Vec::new();
    }
    costly.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let max_node = col_node.iter().flatten().copied().max().unwrap_or(0);
    let mut rows_of: Vec<Vec<usize>> = vec![Vec::new(); max_node + 1];
    for &(n, i) in model.capacity_rows().iter().filter(|&&(n, _)| n <= max_node) {
        rows_of[n].push(i);
    }
    let room = |n: NodeId, w: f64| -> f64 {
        let mut least = f64::INFINITY;
        for &i in &rows_of[n] {
            let row = &mip.rows[i];
            let mut act = 0.0;
            let mut cheap = 0.0;
            let mut largest: f64 = 0.0;
            for &(c, a) in &row.entries {
                act += a * best[c];
                if col_node[c].is_some() {
                    largest = largest.max(a);
                } else if a < 0.0 && best[c] < 0.5 && weight.get(&c).copied().unwrap_or(0.0) < w {
                    cheap -= a;
                }
            }
            if largest > 0.0 {
                least = least.min((row.upper - act + cheap) / largest);
            }
        }
        least
    };
    // Per group: the nodes it has columns on.
    let mut group_nodes: std::collections::BTreeMap<GroupId, Vec<NodeId>> = Default::default();
    for c in 0..col_node.len() {
        if let (Some(n), Some(g)) = (col_node[c], col_group[c]) {
            group_nodes.entry(g).or_default().push(n);
        }
    }
    let mut blocks = Vec::new();
    let mut covered = vec![false; max_node + 1];
    for (w, _, nodes) in costly {
        if blocks.len() >= MAX_MOVES {
            break;
        }
        let nodes: Vec<NodeId> = nodes.iter().copied().filter(|&n| n <= max_node).collect();
        if nodes.is_empty() || nodes.iter().all(|&n| covered[n]) {
            continue;
        }
        let mut in_unit = vec![false; max_node + 1];
        nodes.iter().for_each(|&n| in_unit[n] = true);
        // The groups with pods on the unit's nodes, and every node they may use.
        let mut there: Vec<GroupId> =
            (0..best.len()).filter(|&c| best[c] > 0.5 && col_node[c].is_some_and(|n| in_unit[n])).filter_map(|c| col_group[c]).collect();
        there.sort_unstable();
        there.dedup();
        let mut cands: Vec<NodeId> = there.iter().flat_map(|g| group_nodes[g].iter().copied()).filter(|&n| !in_unit[n]).collect();
        cands.sort_unstable();
        cands.dedup();
        let mut scored: Vec<(f64, NodeId)> = cands.into_iter().map(|n| (room(n, w), n)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut block = nodes;
        block.extend(scored.into_iter().take(size.saturating_sub(block.len())).map(|(_, n)| n));
        block.iter().for_each(|&n| covered[n] = true);
        blocks.push(block);
    }
    blocks
}

/// Solves the sub-model over the `free` columns (node limit, short time limit), with
/// the tier's objective `coefs` plus the small `penalty` terms (see [`sub_model`]): `None`
/// when it has no free objective column (nothing solved), else the whole solution if it
/// is strictly better than `best_val`.
fn try_neighbourhood(
    mip: &Mip,
    (coefs, penalty): (&[(usize, f64)], &[(usize, f64)]),
    free: &[bool],
    (best, best_val): (&[f64], f64),
    (deadline, stop): (Instant, &Arc<AtomicBool>),
    diag: &crate::options::Diagnostics,
    budget: &mut Budget,
) -> Option<Option<(Vec<f64>, f64)>> {
    let (sub, cols) = sub_model(mip, coefs, free, best, (best_val + 0.5, penalty))?;
    // Deterministic mode: the node limit alone bounds the sub-solve.
    let until = if budget.left.is_some() { deadline } else { deadline.min(Instant::now() + SUB_TIME) };
    let params = MipParams {
        max_nodes: budget.nodes(SUB_NODES),
        max_work: budget.left,
        stop: Some(Arc::clone(stop)),
        ..MipParams::until(until, 0.0, 0.999).with(diag)
    };
    let res = highs::solve(&sub, None, &params);
    budget.spend(&res);
    Some(strictly_better(mip, coefs, best, best_val, &cols, &res.values))
}

/// Work units ([`highs::MipResult::work`]) left to the search in deterministic mode
/// (`None`: unlimited; the time limits bound it instead).
struct Budget {
    left: Option<u64>,
}

impl Budget {
    /// The node limit for the next sub-solve: `cap`, within what is left.
    fn nodes(&self, cap: i64) -> Option<i64> {
        match self.left {
            None if cap == i64::MAX => None,
            None => Some(cap),
            Some(left) => Some(cap.min(left.max(1) as i64)),
        }
    }
    fn spend(&mut self, res: &highs::MipResult) {
        if let Some(left) = self.left.as_mut() {
            *left = left.saturating_sub(res.work());
        }
    }
    fn spent(&self) -> bool {
        self.left == Some(0)
    }
}

/// Makes `better`, if any, the incumbent (and the search's result), and records when
/// (for the patience); true if it did.
fn adopt(
    better: Option<(Vec<f64>, f64)>,
    (best, best_val, found, last_gain): (&mut Vec<f64>, &mut f64, &mut Option<Vec<f64>>, &mut Instant),
    on_better: &mut dyn FnMut(&[f64]),
) -> bool {
    let Some((v, val)) = better else { return false };
    (*best, *best_val) = (v, val);
    on_better(best);
    *found = Some(best.clone());
    *last_gain = Instant::now();
    true
}

/// `best` with the sub-model's `values` put back at its columns `cols`, if that passes
/// every row of `mip` and beats `best_val` in the tier (by 1: integer objective).
fn strictly_better(
    mip: &Mip,
    coefs: &[(usize, f64)],
    best: &[f64],
    best_val: f64,
    cols: &[usize],
    values: &[f64],
) -> Option<(Vec<f64>, f64)> {
    if values.len() != cols.len() {
        return None;
    }
    let mut whole = best.to_vec();
    for (&c, &v) in cols.iter().zip(values) {
        whole[c] = v;
    }
    let v = verify_rows(mip, &whole)?;
    let val = tier_value(coefs, &v);
    (val > best_val + 0.5).then_some((v, val))
}

/// The model over the free columns only, every other column at its value in `best`
/// (moved into the row bounds), plus the row `tier value >= floor` (`None` when no
/// objective column is free). Rows left without a free column are dropped: `best`
/// satisfies them and nothing in them can change. Built here rather than left to HiGHS's
/// presolve, which took ~0.3 s per sub-model at 1,024 nodes. `penalty` adds terms to the
/// sub-model's objective only (not to the floor row): their total must stay below 1, so
/// they choose among solutions of equal tier value and never trade a unit of it. Returns
/// the sub-model and, per sub-model column, its column in `mip`.
fn sub_model(
    mip: &Mip,
    coefs: &[(usize, f64)],
    free: &[bool],
    best: &[f64],
    (floor, penalty): (f64, &[(usize, f64)]),
) -> Option<(Mip, Vec<usize>)> {
    let mut sub = Mip::default();
    let mut index = vec![usize::MAX; mip.num_cols()];
    let mut cols = Vec::new();
    for c in (0..mip.num_cols()).filter(|&c| free[c]) {
        index[c] = sub.add_col(mip.col_lower[c], mip.col_upper[c], mip.col_integer[c], String::new());
        cols.push(c);
    }
    let restrict = |entries: &[(usize, f64)], lower: f64, upper: f64| {
        let mut fixed = 0.0;
        let mut kept = Vec::new();
        for &(c, a) in entries {
            if free[c] {
                kept.push((index[c], a));
            } else {
                fixed += a * best[c];
            }
        }
        (!kept.is_empty()).then_some((lower - fixed, upper - fixed, kept))
    };
    for row in &mip.rows {
        if let Some((lo, up, e)) = restrict(&row.entries, row.lower, row.upper) {
            sub.add_row(lo, up, e);
        }
    }
    // No free column in the objective: nothing here can improve the tier.
    let (lo, up, e) = restrict(coefs, floor, INF)?;
    for &(c, a) in &e {
        sub.col_cost[c] = a;
    }
    sub.add_row(lo, up, e);
    for &(c, a) in penalty.iter().filter(|&&(c, _)| free[c]) {
        sub.col_cost[index[c]] += a;
    }
    Some((sub, cols))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::assignment::{Assignment, NewPod};
    use crate::engine::cycle::Cycle;
    use crate::model::Instance;

    /// 30 nodes of 2 cpu; a rigid gang of 20 one-cpu pods (priority 10) and a basic group
    /// of up to 30 two-cpu pods (priority 0). Start: the gang spread one pod per node on
    /// n00-n19, so a two-cpu pod fits only on n20-n29 (10 pods, 9 extra). Best with both
    /// groups placed (the term-1 row holds them): the gang on 10 nodes, 20 two-cpu pods on
    /// the rest, 19 extra. Getting there means moving gang pods inside a block.
    ///
    /// Improvements seen on the way to the best: the blocks alone, or the fixed-groups
    /// sub-model first (which solves this small packing question in one step).
    fn repack(fixed_groups_first: bool) -> Vec<f64> {
        repack_with(fixed_groups_first, None).expect("an improvement exists")
    }

    fn repack_with(fixed_groups_first: bool, patience: Option<Duration>) -> Option<Vec<f64>> {
        let mut yaml = String::from("nodes:\n");
        for i in 0..30 {
            yaml.push_str(&format!("  - {{name: n{i:02}, allocatable: {{cpu: \"2\"}}}}\n"));
        }
        yaml.push_str(
            "podGroups:\n  - {name: gang, priority: 10, tasks: [{name: w, count: 20, requests: {cpu: \"1\"}}]}\n  - {name: fill, policy: basic, tasks: [{name: r, count: 30, requests: {cpu: \"2\"}}]}\n",
        );
        let inst = Instance::from_text(&yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let model = CycleModel::build(&cycle);
        let (gang, fill) = (inst.group_id("gang").unwrap(), inst.group_id("fill").unwrap());
        let mut a = Assignment::empty(&inst);
        let pod = |t, n| NewPod { task: t, node: n, devices: Default::default() };
        a.pods[gang] = (0..20).map(|n| pod(inst.groups[gang].tasks[0], n)).collect();
        a.pods[fill] = (20..30).map(|n| pod(inst.groups[fill].tasks[0], n)).collect();
        let start = model.values_of(&cycle, &a);
        let tiers = model.tiers();
        let placed = tiers.iter().find(|t| t.names.iter().all(|n| n.starts_with("placed@"))).unwrap();
        let extra = tiers.iter().find(|t| t.names.iter().any(|n| n == "extra@0")).unwrap();
        // As run_tiers does after the term-1 tier: both groups stay placed.
        let mut mip = model.mip.clone();
        mip.add_row(tier_value(&placed.coefs, &start) - 0.5, INF, placed.coefs.clone());
        assert!(verify_rows(&mip, &start).is_some(), "the start is valid");
        assert_eq!(tier_value(&extra.coefs, &start), 9.0);
        let stop = Arc::new(AtomicBool::new(false));
        let live = LiveRun::default();
        let mut seen = Vec::new();
        let best = search(
            &model,
            &mip,
            extra,
            &start,
            Until {
                deadline: Instant::now() + Duration::from_secs(20),
                stop: &stop,
                live: &live,
                fixed_groups_first,
                patience,
                work: None,
            },
            &mut |v| seen.push(tier_value(&extra.coefs, v)),
        )?;
        assert_eq!(tier_value(&extra.coefs, &best), 19.0, "improvements seen: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "strictly better each time: {seen:?}");
        assert!(verify_rows(&mip, &best).is_some());
        assert_eq!(tier_value(&placed.coefs, &best), tier_value(&placed.coefs, &start), "term 1 kept");
        Some(seen)
    }

    #[test]
    fn search_repacks_blocks_to_the_optimum_and_keeps_every_row() {
        assert!(repack(false).len() > 1, "blocks of 12 of the 30 nodes improve step by step");
    }

    #[test]
    fn the_fixed_groups_sub_model_reaches_the_optimum_in_one_step() {
        assert_eq!(repack(true), vec![19.0]);
    }

    /// Out of patience before the first block: the search gives up with nothing, where
    /// without a patience it improves the same start (the test above).
    #[test]
    fn a_search_out_of_patience_gives_up() {
        assert_eq!(repack_with(false, Some(Duration::ZERO)), None);
    }

    /// 120 nodes of 4 cpu in two racks of 60: r1 = n000-n059, r2 = n060-n119. `bound(n)`
    /// gives the bound pod on node n (name, priority), if any; `groups` is the YAML of
    /// the pending groups. Every pending group wants 60 pods of 4 cpu in one rack.
    fn two_racks(bound: &dyn Fn(usize) -> Option<(String, i64)>, groups: &str) -> Instance {
        let mut yaml = String::from("topology: {levels: [example.com/rack]}\nnodes:\n");
        for i in 0..120 {
            let rack = if i < 60 { "r1" } else { "r2" };
            yaml.push_str(&format!("  - {{name: n{i:03}, labels: {{example.com/rack: {rack}}}, allocatable: {{cpu: \"4\"}}}}\n"));
        }
        yaml.push_str("pods:\n");
        for i in 0..120 {
            if let Some((name, prio)) = bound(i) {
                yaml.push_str(&format!("  - {{name: {name}, node: n{i:03}, priority: {prio}, requests: {{cpu: \"4\"}}}}\n"));
            }
        }
        yaml.push_str(groups);
        Instance::from_text(&yaml).unwrap()
    }

    fn gang(name: &str, priority: i64) -> String {
        format!(
            "  - {{name: {name}, priority: {priority}, topology: {{required: example.com/rack}}, tasks: [{{name: w, count: 60, requests: {{cpu: \"4\"}}}}]}}\n"
        )
    }

    /// `g`'s 60 pods on one rack (nodes `first..first + 60`), evicting `evicted`.
    fn on_rack(cycle: &Cycle, a: &mut Assignment, g: GroupId, first: usize, evicted: &[&str]) {
        let inst = cycle.inst;
        let t = inst.groups[g].tasks[0];
        a.pods[g] = (first..first + 60).map(|n| NewPod { task: t, node: n, devices: Default::default() }).collect();
        let l = inst.level_id("example.com/rack").unwrap();
        a.domain[g] = cycle.domain_of[l][first];
        for (u, unit) in cycle.victims.iter().enumerate() {
            if unit.pods.iter().any(|&p| evicted.iter().any(|pre| inst.pods[p].name.starts_with(pre))) {
                a.evicted.push(u);
            }
        }
    }

    /// The model of `inst`, and its gang `g` on r1 evicting the pods whose names start
    /// with `on_r1`, then on r2 evicting those starting with `on_r2` (column values).
    fn on_r1_or_r2(inst: &Instance, (on_r1, on_r2): (&str, &str)) -> (CycleModel, Vec<f64>, Vec<f64>) {
        let cycle = Cycle::new(inst);
        let model = CycleModel::build(&cycle);
        let g = inst.group_id("g").unwrap();
        let (mut r1, mut r2) = (Assignment::empty(inst), Assignment::empty(inst));
        on_rack(&cycle, &mut r1, g, 0, &[on_r1]);
        on_rack(&cycle, &mut r2, g, 60, &[on_r2]);
        let (r1, r2) = (model.values_of(&cycle, &r1), model.values_of(&cycle, &r2));
        (model, r1, r2)
    }

    fn run(model: &CycleModel, mip: &Mip, tier: &Tier, start: &[f64]) -> Option<Vec<f64>> {
        let stop = Arc::new(AtomicBool::new(false));
        let live = LiveRun::default();
        let until = Until {
            deadline: Instant::now() + Duration::from_secs(20),
            stop: &stop,
            live: &live,
            fixed_groups_first: false,
            patience: None,
            work: None,
        };
        search(model, mip, tier, start, until, &mut |_| {})
    }

    /// The eviction tier: `g` (priority 1000) sits on r1, evicting sixty priority-100 pods;
    /// on r2 it would evict priority-0 pods instead, which that tier does not count. Moving
    /// means moving all 60 pods at once (one rack), more than the largest block (48
    /// nodes) holds: only the group move gets there.
    #[test]
    fn a_group_move_takes_a_gang_to_cheaper_victims() {
        let inst = two_racks(
            &|i| Some(if i < 60 { (format!("mid-{i}"), 100) } else { (format!("low-{i}"), 0) }),
            &format!("podGroups:\n{}", gang("g", 1000)),
        );
        let (model, start, best) = on_r1_or_r2(&inst, ("mid-", "low-"));
        let tiers = model.tiers();
        let placed = tiers.iter().find(|t| t.names.iter().all(|n| n.starts_with("placed@"))).unwrap();
        let evicted = tiers.iter().find(|t| t.names.iter().any(|n| n == "evicted@100")).unwrap();
        let mut mip = model.mip.clone();
        mip.add_row(0.5, INF, placed.coefs.clone());
        assert!(verify_rows(&mip, &start).is_some() && verify_rows(&mip, &best).is_some());
        assert!(tier_value(&evicted.coefs, &best) > tier_value(&evicted.coefs, &start));
        let found = run(&model, &mip, evicted, &start).expect("the move to r2 is better");
        assert_eq!(tier_value(&evicted.coefs, &found), tier_value(&evicted.coefs, &best));
        assert!(verify_rows(&mip, &found).is_some());
    }

    /// The look-ahead: `g` (priority 1000) sits on r1 evicting sixty priority-100 pods;
    /// on r2 only 30 nodes are taken, by priority-100 pods too. With no pending group
    /// placed the eviction tier would be at its best (no eviction at all), so what keeps
    /// `g` placed is the look-ahead's floor on the tier of groups placed: it must move `g`
    /// to r2 (30 evictions) and keep it placed.
    #[test]
    fn the_look_ahead_holds_the_groups_placed_and_cuts_the_evictions() {
        let inst = two_racks(
            &|i| match i {
                0..60 => Some((format!("a-{i}"), 100)),
                60..90 => Some((format!("b-{i}"), 100)),
                _ => None,
            },
            &format!("podGroups:\n{}", gang("g", 1000)),
        );
        let (model, start, best) = on_r1_or_r2(&inst, ("a-", "b-"));
        let nothing = model.values_of(&Cycle::new(&inst), &Assignment::empty(&inst));
        let tiers = model.tiers();
        let placed = tiers.iter().find(|t| t.names.iter().all(|n| n.starts_with("placed@"))).unwrap();
        let evicted = tiers.iter().find(|t| t.names.iter().any(|n| n == "evicted@100")).unwrap();
        let (p, e) = (|v: &[f64]| tier_value(&placed.coefs, v), |v: &[f64]| tier_value(&evicted.coefs, v));
        assert!(verify_rows(&model.mip, &start).is_some() && verify_rows(&model.mip, &best).is_some());
        assert!(e(&nothing) > e(&best) && e(&best) > e(&start), "no placement evicts least, then r2, then r1");
        assert!(p(&start) > p(&nothing));
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        let found = look_ahead(&model, &model.mip, (placed, evicted), &start, (deadline, &stop, None), &mut |v| seen.push((p(v), e(v))))
            .expect("the move to r2 is better");
        assert_eq!((p(&found), e(&found)), (p(&start), e(&best)), "seen: {seen:?}");
        assert!(seen.iter().all(|&(held, _)| held == p(&start)), "every published solution keeps g placed: {seen:?}");
        assert!(verify_rows(&model.mip, &found).is_some());
    }

    /// The tier of groups placed: `a` (priority 1000) holds the empty rack r1; `b`
    /// (priority 100) is left out, since r2 is full of priority-500 pods that only `a` may
    /// evict. Placing both means moving `a` to r2 and `b` into r1: a move of the pair.
    #[test]
    fn a_left_out_gang_gets_in_by_moving_another_with_it() {
        let groups = format!("podGroups:\n{}{}", gang("a", 1000), gang("b", 100));
        let inst = two_racks(&|i| (i >= 60).then(|| (format!("mid-{i}"), 500)), &groups);
        let cycle = Cycle::new(&inst);
        let model = CycleModel::build(&cycle);
        let (a, b) = (inst.group_id("a").unwrap(), inst.group_id("b").unwrap());
        let (mut start, mut best) = (Assignment::empty(&inst), Assignment::empty(&inst));
        on_rack(&cycle, &mut start, a, 0, &[]);
        on_rack(&cycle, &mut best, a, 60, &["mid-"]);
        on_rack(&cycle, &mut best, b, 0, &[]);
        let (start, best) = (model.values_of(&cycle, &start), model.values_of(&cycle, &best));
        let tiers = model.tiers();
        let placed = tiers.iter().find(|t| t.names.iter().all(|n| n.starts_with("placed@"))).unwrap();
        assert!(verify_rows(&model.mip, &start).is_some() && verify_rows(&model.mip, &best).is_some());
        assert!(tier_value(&placed.coefs, &best) > tier_value(&placed.coefs, &start));
        let found = run(&model, &model.mip, placed, &start).expect("placing b too is better");
        assert_eq!(tier_value(&placed.coefs, &found), tier_value(&placed.coefs, &best));
        assert!(verify_rows(&model.mip, &found).is_some());
    }

    /// 200 nodes of 4 cpu, each full of one bound pod (n000: priority 1000, the others
    /// priority 100), except n150: 8 cpu and empty. `g` (priority 10 000, one pod of 4
    /// cpu) starts on n000, evicting the priority-1000 pod. The block around that eviction
    /// starts with its node, then the node with the most room for `g` at that price: n150
    /// (2 pods free) before any node whose priority-100 pod could go (1 pod each). Then it
    /// is filled to the block size, and the search moves `g` there: no eviction counted.
    #[test]
    fn a_costly_block_pairs_an_eviction_with_the_roomiest_node() {
        let mut yaml = String::from("nodes:\n");
        for i in 0..200 {
            let cpu = if i == 150 { 8 } else { 4 };
            yaml.push_str(&format!("  - {{name: n{i:03}, allocatable: {{cpu: \"{cpu}\"}}}}\n"));
        }
        yaml.push_str("pods:\n");
        for i in (0..200).filter(|&i| i != 150) {
            let prio = if i == 0 { 1000 } else { 100 };
            yaml.push_str(&format!("  - {{name: p{i:03}, node: n{i:03}, priority: {prio}, requests: {{cpu: \"4\"}}}}\n"));
        }
        yaml.push_str("podGroups:\n  - {name: g, priority: 10000, tasks: [{name: w, count: 1, requests: {cpu: \"4\"}}]}\n");
        let inst = Instance::from_text(&yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let model = CycleModel::build(&cycle);
        let g = inst.group_id("g").unwrap();
        let mut start = Assignment::empty(&inst);
        start.pods[g] = vec![NewPod { task: inst.groups[g].tasks[0], node: 0, devices: Default::default() }];
        start.evicted = (0..cycle.victims.len()).filter(|&u| cycle.victims[u].pods.iter().any(|&p| inst.pods[p].name == "p000")).collect();
        let start = model.values_of(&cycle, &start);
        let tiers = model.tiers();
        let evicted = tiers.iter().find(|t| t.names.iter().any(|n| n == "evicted@1000")).unwrap();
        assert!(evicted.names.iter().any(|n| n == "evicted@100"), "one tier of two levels: {:?}", evicted.names);
        let placed = tiers.iter().find(|t| t.names.iter().all(|n| n.starts_with("placed@"))).unwrap();
        let mut mip = model.mip.clone();
        mip.add_row(0.5, INF, placed.coefs.clone());
        assert!(verify_rows(&mip, &start).is_some());
        let (col_node, col_group) = (model.column_nodes(), model.column_groups());
        let blocks = costly_blocks(&model, &mip, &weights_of(&evicted.coefs), &start, &col_node, &col_group, COSTLY_BLOCK);
        assert_eq!(blocks.len(), 1, "one costly eviction: {blocks:?}");
        assert_eq!(&blocks[0][..2], &[0, 150], "{blocks:?}");
        assert_eq!(blocks[0].len(), COSTLY_BLOCK);
        let found = run(&model, &mip, evicted, &start).expect("moving g is better");
        assert_eq!(tier_value(&evicted.coefs, &found), 0.0);
        assert!(verify_rows(&mip, &found).is_some());
    }
}
