//! Confidence intervals: Wilson score intervals for sampled probabilities, Student-t intervals
//! for means over runs.

use serde::Serialize;

/// The normal quantile for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval (Wilson 1927) of a proportion: `successes` out of `n` trials, at
/// normal quantile `z` (1.96 for 95%). Returns `(low, high)` within [0, 1]; `(0, 1)` when `n` is
/// 0. Unlike the normal ("Wald") interval it is never empty at 0 or n successes and keeps close
/// to its nominal coverage for small `n`, which is what a handful of samples per step gives.
pub fn wilson(successes: usize, n: usize, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Two-sided 97.5% quantiles of Student's t distribution for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 97.5% quantile of Student's t with `df` degrees of freedom (tabulated up to 30, then
/// 2.021 (40), 2.000 (60), 1.980 (120), 1.96).
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        31..=40 => 2.021,
        41..=60 => 2.000,
        61..=120 => 1.980,
        _ => Z95,
    }
}

/// A mean with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MeanCi {
    /// The sample mean (0 for no values).
    pub mean: f64,
    /// Half-width of the 95% Student-t interval (`mean ± half`); 0 for fewer than two values
    /// with no spread, infinite for one value.
    pub half: f64,
    /// Number of values.
    pub n: usize,
}

impl MeanCi {
    /// The mean of `xs` and the half-width `t(0.975, n-1) · s / √n` (s: sample standard
    /// deviation).
    pub fn of(xs: &[f64]) -> MeanCi {
        let n = xs.len();
        if n == 0 {
            return MeanCi {
                mean: 0.0,
                half: 0.0,
                n,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return MeanCi {
                mean,
                half: f64::INFINITY,
                n,
            };
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        MeanCi {
            mean,
            half: t975(n - 1) * (var / n as f64).sqrt(),
            n,
        }
    }
}

impl std::fmt::Display for MeanCi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.half.is_finite() {
            write!(f, "{:.2} ± {:.2}", self.mean, self.half)
        } else {
            write!(f, "{:.2}", self.mean)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_known_values() {
        // 0 of 10: upper bound z²/(n+z²) = 3.8415/13.8415.
        let (lo, hi) = wilson(0, 10, Z95);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.277_53).abs() < 1e-4, "{hi}");
        // 5 of 10: symmetric around 0.5, (0.2366, 0.7634).
        let (lo, hi) = wilson(5, 10, Z95);
        assert!((lo - 0.236_6).abs() < 1e-3 && (hi - 0.763_4).abs() < 1e-3);
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }

    #[test]
    fn mean_ci() {
        let m = MeanCi::of(&[1.0, 2.0, 3.0]);
        assert_eq!(m.mean, 2.0);
        // s = 1, t(2) = 4.303: half = 4.303 / sqrt(3).
        assert!((m.half - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert!(MeanCi::of(&[4.0]).half.is_infinite());
    }
}
