//! Intervals reported by the experiments: the mean over runs with a Student-t 95% interval
//! (`trac judge`), and the Wilson score 95% interval of an accuracy (`trac experiment
//! temporal`).

use serde::Serialize;

/// A point estimate with a 95% interval `[low, high]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The estimate (a mean or a proportion).
    pub value: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom (standard tables);
/// beyond 30 the normal 1.96 is used.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The mean of `xs` with its Student-t 95% interval `mean ± t(0.975, n-1)·s/√n` (`s` the sample
/// standard deviation). One value: the interval is the value itself (no spread to estimate).
/// `None` for no value.
pub fn mean_interval(xs: &[f64]) -> Option<Interval> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Interval {
            value: mean,
            low: mean,
            high: mean,
        });
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = T975.get(n - 2).copied().unwrap_or(1.96);
    let half = t * (var / n as f64).sqrt();
    Some(Interval {
        value: mean,
        low: mean - half,
        high: mean + half,
    })
}

/// The proportion `k / n` with its Wilson score 95% interval (z = 1.96; Wilson 1927), which
/// stays inside [0, 1] and is defined at 0 and n successes. `None` for `n = 0`.
pub fn wilson(k: usize, n: usize) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let z = 1.96f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    Some(Interval {
        value: p,
        low: (center - half).max(0.0),
        high: (center + half).min(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_interval_by_hand() {
        // Mean 0.5, s² = ((0.1)² + 0 + (0.1)²)/2 = 0.01, s/√3 = 0.057735, t(2) = 4.303.
        let i = mean_interval(&[0.4, 0.5, 0.6]).unwrap();
        assert!((i.value - 0.5).abs() < 1e-12);
        assert!((i.high - (0.5 + 4.303 * 0.1 / 3f64.sqrt())).abs() < 1e-9);
        assert_eq!(mean_interval(&[0.7]).unwrap().low, 0.7);
        assert!(mean_interval(&[]).is_none());
    }

    #[test]
    fn wilson_by_hand() {
        // 8 of 10: denominator 1 + 3.8416/10 = 1.38416, center (0.8 + 0.19208)/1.38416 =
        // 0.716738, half 1.96·√(0.016 + 0.009604)/1.38416 = 0.226581.
        let i = wilson(8, 10).unwrap();
        assert!((i.low - 0.490157).abs() < 1e-5, "{i:?}");
        assert!((i.high - 0.943319).abs() < 1e-5, "{i:?}");
        let all = wilson(10, 10).unwrap();
        assert_eq!(all.high, 1.0);
        assert!(wilson(0, 0).is_none());
    }
}
