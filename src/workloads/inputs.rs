//! What every workload shares for its inputs and checks: a fixed generator per workload, uniform
//! values, and comparisons within a tolerance that name the first wrong element.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The outcome of checking a result: `Err` says which element is wrong and by how much.
pub type Verdict = std::result::Result<(), String>;

/// The generator every workload draws its inputs from: fixed, so runs are comparable.
pub(super) fn inputs_rng(workload: &str) -> StdRng {
    let seed = workload.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    StdRng::seed_from_u64(seed)
}

/// `n` values uniform in `range`.
pub(super) fn uniform(rng: &mut StdRng, n: usize, range: std::ops::Range<f32>) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(range.clone())).collect()
}

/// `Ok` if every `got[i]` is within `tolerance(i)` of `want(i)`, else the first that is not.
pub(super) fn check_close(
    got: &[f32],
    expected_len: usize,
    want: impl Fn(usize) -> f64,
    tolerance: impl Fn(usize) -> f64,
) -> Verdict {
    if got.len() != expected_len {
        return Err(format!("{} elements, expected {expected_len}", got.len()));
    }
    for (i, &g) in got.iter().enumerate() {
        let (w, tol) = (want(i), tolerance(i));
        if !within(g as f64, w, tol) {
            return Err(format!("element {i} is {g}, expected {w} (± {tol:.3e})"));
        }
    }
    Ok(())
}

/// Whether `got` is within `tolerance` of `want`; never for a NaN.
pub(super) fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

/// `Ok` if `got` is within `tolerance` of `want`.
pub(super) fn check_scalar(what: &str, got: f64, want: f64, tolerance: f64) -> Verdict {
    if within(got, want, tolerance) {
        Ok(())
    } else {
        Err(format!(
            "{what} is {got}, expected {want} (± {tolerance:.3e})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_first_wrong_element_and_reject_nan_and_wrong_lengths() {
        let want = |i: usize| i as f64;
        let tolerance = |_| 0.5;
        assert_eq!(check_close(&[0.0, 1.2, 2.0], 3, want, tolerance), Ok(()));
        let wrong = check_close(&[0.0, 1.0, 2.6], 3, want, tolerance).unwrap_err();
        assert!(wrong.starts_with("element 2 is 2.6, expected 2"), "{wrong}");
        assert!(check_close(&[0.0, f32::NAN], 2, want, tolerance).is_err());
        assert!(check_close(&[0.0], 2, want, tolerance)
            .unwrap_err()
            .contains("expected 2"));
        assert!(check_scalar("x", f64::NAN, 1.0, 1.0).is_err());
        assert!(check_scalar("x", 1.5, 1.0, 0.5).is_ok());
    }

    #[test]
    fn inputs_are_the_same_on_every_run() {
        let draw = || uniform(&mut inputs_rng("w"), 4, 0.0..1.0);
        assert_eq!(draw(), draw());
        assert_ne!(draw(), uniform(&mut inputs_rng("v"), 4, 0.0..1.0));
    }
}
