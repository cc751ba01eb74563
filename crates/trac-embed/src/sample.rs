//! Token choice from logits: greedy, or temperature and nucleus (top-p) sampling with a seeded
//! generator, and log-probabilities.
//!
//! Everything here is plain Rust over the logits vector (one `f32` per vocabulary token), so a
//! given seed draws the same tokens on every machine that computes the same logits.

/// `log_softmax(logits)[i]` for every `i`, in `f64`. Linear in the vocabulary.
pub fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let m = logits
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(f32::NEG_INFINITY, f32::max) as f64;
    if m == f64::NEG_INFINITY {
        return vec![f64::NEG_INFINITY; logits.len()];
    }
    let z: f64 = logits
        .iter()
        .map(|&x| {
            if x.is_finite() {
                (x as f64 - m).exp()
            } else {
                0.0
            }
        })
        .sum();
    let lz = m + z.ln();
    logits
        .iter()
        .map(|&x| {
            if x.is_finite() {
                x as f64 - lz
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect()
}

/// The index of the largest finite logit (the lowest index among equals); `None` if none is
/// finite.
pub fn argmax(logits: &[f32]) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &x) in logits.iter().enumerate() {
        if x.is_finite() && best.is_none_or(|(_, b)| x > b) {
            best = Some((i, x));
        }
    }
    best.map(|(i, _)| i)
}

/// Chooses a token: greedy ([`argmax`]) when `temperature <= 0`; else a draw from
/// `softmax(logits / temperature)`, restricted to the smallest set of most likely tokens whose
/// mass reaches `top_p` (when given and in `(0, 1)`). `rng` makes the draw reproducible.
/// `-inf` logits (masked tokens) are never chosen. `None` if every logit is masked.
///
/// Cost: O(V) for greedy and plain sampling, O(V log V) with top-p (V: vocabulary size).
pub fn choose(
    logits: &[f32],
    temperature: f32,
    top_p: Option<f32>,
    rng: &mut fastrand::Rng,
) -> Option<usize> {
    if temperature.is_nan() || temperature <= 0.0 {
        return argmax(logits);
    }
    let scaled: Vec<f32> = logits.iter().map(|&x| x / temperature).collect();
    let lp = log_softmax(&scaled);
    let mut cands: Vec<(usize, f64)> = lp
        .iter()
        .enumerate()
        .filter(|(_, l)| l.is_finite())
        .map(|(i, &l)| (i, l.exp()))
        .collect();
    if cands.is_empty() {
        return None;
    }
    if let Some(p) = top_p.filter(|p| *p > 0.0 && *p < 1.0) {
        cands.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut mass = 0.0;
        let mut keep = cands.len();
        for (k, (_, q)) in cands.iter().enumerate() {
            mass += q;
            if mass >= p as f64 {
                keep = k + 1;
                break;
            }
        }
        cands.truncate(keep);
    }
    let total: f64 = cands.iter().map(|c| c.1).sum();
    let mut u = rng.f64() * total;
    for &(i, q) in &cands {
        if u < q {
            return Some(i);
        }
        u -= q;
    }
    cands.last().map(|c| c.0)
}

/// The `k` largest finite values of `xs` with their indices, largest first (the lower index
/// first among equals). O(V·k): for the few alternatives of a token's log-probabilities.
pub fn top_k(xs: &[f64], k: usize) -> Vec<(usize, f64)> {
    let mut top: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
    if k == 0 {
        return top;
    }
    for (i, &x) in xs.iter().enumerate() {
        if !x.is_finite() || (top.len() == k && x <= top[k - 1].1) {
            continue;
        }
        let at = top.iter().position(|&(_, y)| x > y).unwrap_or(top.len());
        top.insert(at, (i, x));
        top.truncate(k);
    }
    top
}

#[cfg(test)]
mod tests {
    #[test]
    fn top_k_is_the_largest_first() {
        let xs = [0.5, 3.0, f64::NEG_INFINITY, 3.0, -1.0, 2.0];
        assert_eq!(super::top_k(&xs, 3), [(1, 3.0), (3, 3.0), (5, 2.0)]);
        assert_eq!(super::top_k(&xs, 0), []);
        assert_eq!(super::top_k(&xs, 10).len(), 5);
    }

    use super::*;

    #[test]
    fn log_softmax_normalizes() {
        let lp = log_softmax(&[1.0, 2.0, 3.0, f32::NEG_INFINITY]);
        let total: f64 = lp.iter().map(|l| l.exp()).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert_eq!(lp[3], f64::NEG_INFINITY);
        assert!((lp[2] - lp[1] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn greedy_and_masked() {
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(choose(&[0.0, 5.0, 5.0, 1.0], 0.0, None, &mut rng), Some(1));
        let masked = [f32::NEG_INFINITY, 0.0, f32::NEG_INFINITY];
        for _ in 0..50 {
            assert_eq!(choose(&masked, 1.5, None, &mut rng), Some(1));
        }
        assert_eq!(choose(&[f32::NEG_INFINITY; 3], 1.0, None, &mut rng), None);
    }

    #[test]
    fn same_seed_same_draws_and_top_p_cuts_the_tail() {
        let logits: Vec<f32> = (0..50).map(|i| (i % 7) as f32 * 0.3).collect();
        let draw = |seed| {
            let mut rng = fastrand::Rng::with_seed(seed);
            (0..40)
                .map(|_| choose(&logits, 1.0, None, &mut rng).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
        // top_p small enough: only the most likely tokens (logit 1.8: i % 7 == 6).
        let mut rng = fastrand::Rng::with_seed(9);
        for _ in 0..100 {
            let t = choose(&logits, 1.0, Some(0.05), &mut rng).unwrap();
            assert_eq!(t % 7, 6);
        }
    }

    #[test]
    fn sampling_follows_the_distribution() {
        // P = (0.75, 0.25): the count of token 0 in 4000 draws is within 5 sigma of 3000.
        let logits = [3f32.ln(), 0.0];
        let mut rng = fastrand::Rng::with_seed(42);
        let zeros = (0..4000)
            .filter(|_| choose(&logits, 1.0, None, &mut rng) == Some(0))
            .count() as f64;
        let sigma = (4000.0f64 * 0.75 * 0.25).sqrt();
        assert!((zeros - 3000.0).abs() < 5.0 * sigma, "{zeros}");
    }
}
