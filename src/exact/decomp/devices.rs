//! Rule 3 on one node and one shared resource, exactly: can these new pods sit on the
//! devices (fractional shares each inside one device, whole requests on devices nobody
//! else uses), and on which. A small bin packing: shares largest first, each tried on
//! every device whose free share differs from the devices already tried for it (equal
//! free shares are interchangeable), under a work cap.

/// The answer of [`pack`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packing {
    /// Per fractional item (in the order given) its device, and the devices taken whole.
    Fits(Vec<usize>, Vec<usize>),
    NoFit,
    /// The work cap ended the search.
    Unknown,
}

/// Fractional items `fracs` (milli, each below 1000) and `whole` whole devices on devices
/// with free milli `free` (1000 = nobody uses it). `budget` counts search steps and is
/// decremented; at zero the answer is [`Packing::Unknown`].
pub fn pack(free: &[i64], fracs: &[i64], whole: usize, budget: &mut u64) -> Packing {
    let full: Vec<usize> = (0..free.len()).filter(|&d| free[d] >= 1000).collect();
    if full.len() < whole {
        return Packing::NoFit;
    }
    // Whole requests take the highest-index free devices: free devices are identical,
    // and the low ones stay for shares (the compact model's reading order).
    let taken: Vec<usize> = full[full.len() - whole..].to_vec();
    if fracs.is_empty() {
        return Packing::Fits(Vec::new(), taken);
    }
    let mut residual: Vec<i64> = free.iter().map(|&f| f.max(0)).collect();
    for &d in &taken {
        residual[d] = 0;
    }
    let total: i64 = fracs.iter().sum();
    if total > residual.iter().sum::<i64>() {
        return Packing::NoFit;
    }
    let mut order: Vec<usize> = (0..fracs.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(fracs[i]), i));
    let mut choice = vec![usize::MAX; fracs.len()];
    match place(&mut residual, fracs, &order, 0, &mut choice, budget) {
        Some(true) => Packing::Fits(choice, taken),
        Some(false) => Packing::NoFit,
        None => Packing::Unknown,
    }
}

/// Depth-first placement of `order[i..]`; `None` when the budget ran out.
fn place(residual: &mut [i64], fracs: &[i64], order: &[usize], i: usize, choice: &mut [usize], budget: &mut u64) -> Option<bool> {
    if i == order.len() {
        return Some(true);
    }
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let item = order[i];
    let q = fracs[item];
    // Same size as the previous item: no earlier device than it (symmetry).
    let min_dev = if i > 0 && fracs[order[i - 1]] == q { choice[order[i - 1]] } else { 0 };
    let mut tried: Vec<i64> = Vec::new();
    // Best fit first: the fullest device that holds it.
    let mut devs: Vec<usize> = (min_dev..residual.len()).filter(|&d| residual[d] >= q).collect();
    devs.sort_by_key(|&d| (residual[d], d));
    for d in devs {
        if tried.contains(&residual[d]) {
            continue;
        }
        tried.push(residual[d]);
        residual[d] -= q;
        choice[item] = d;
        let r = place(residual, fracs, order, i + 1, choice, budget);
        residual[d] += q;
        match r {
            Some(true) => return Some(true),
            None => return None,
            Some(false) => {}
        }
    }
    choice[item] = usize::MAX;
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(free: &[i64], fracs: &[i64], whole: usize) -> bool {
        let mut b = 100_000;
        match pack(free, fracs, whole, &mut b) {
            Packing::Fits(choice, taken) => {
                // The answer itself obeys rule 3.
                let mut used = vec![0; free.len()];
                for (i, &d) in choice.iter().enumerate() {
                    used[d] += fracs[i];
                }
                for &d in &taken {
                    assert_eq!(free[d], 1000);
                    assert_eq!(used[d], 0);
                }
                assert!((0..free.len()).all(|d| used[d] <= free[d]));
                true
            }
            Packing::NoFit => false,
            Packing::Unknown => panic!("budget"),
        }
    }

    #[test]
    fn shares_pack_by_device_not_by_total() {
        // 600 + 600 on two devices with 700 free each: fits; 600 + 600 + 300: 1500 <= 1400
        // fails the total; 400 + 400 + 500 on 700 + 700: total fits, devices do not.
        assert!(fits(&[700, 700], &[600, 600], 0));
        assert!(!fits(&[700, 700], &[600, 600, 300], 0));
        assert!(!fits(&[700, 700], &[400, 400, 500], 0));
        // Largest first, best fit: 600 on the 600 device, 400 and 300 on the other.
        assert!(fits(&[700, 600], &[400, 300, 600], 0));
        // A whole device needs a device nobody uses.
        assert!(fits(&[1000, 500], &[500], 1));
        assert!(!fits(&[1000, 500], &[600], 1));
        assert!(!fits(&[999, 1000], &[], 2));
        assert!(fits(&[1000, 1000, 300], &[250, 250, 250, 250, 300], 1));
    }
}
