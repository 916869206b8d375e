//! Summaries of repeated measurements: median and spread.

use serde::Serialize;

/// Median, quartiles and extremes of the per-repetition values of one
/// figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Median of the repetitions.
    pub median: f64,
    /// Smallest repetition.
    pub min: f64,
    /// Largest repetition.
    pub max: f64,
    /// First quartile (linear interpolation).
    pub q1: f64,
    /// Third quartile (linear interpolation).
    pub q3: f64,
    /// Number of repetitions.
    pub n: usize,
}

/// The `p`-quantile (0..=1) of sorted values, linearly interpolated.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Summary {
    /// Summarise `values`; `None` when there are none (or any is not finite).
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Summary {
            median: quantile(&v, 0.5),
            min: v[0],
            max: v[v.len() - 1],
            q1: quantile(&v, 0.25),
            q3: quantile(&v, 0.75),
            n: v.len(),
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn median_and_quartiles() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!((s.min, s.max), (1.0, 5.0));
        assert_eq!((s.q1, s.q3), (2.0, 4.0));
        let s = Summary::of(&[1.0, 2.0]).unwrap();
        assert_eq!(s.median, 1.5);
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[f64::NAN]).is_none());
    }
}
