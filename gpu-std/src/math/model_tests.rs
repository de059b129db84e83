//! The default tier's GPU error bounds, checked on the CPU: the approximate instructions' CPU
//! results are moved to the edge of the PTX ISA's bounds (`approx::model`: `ex2.approx` 2 ULP
//! either way, `rcp.approx` 1 ULP), and each function is swept against its f64 reference under
//! every combination of those errors, its error counted as CUDA counts it (floats from the
//! correctly rounded result). What a GPU can add beyond this model is only the
//! instructions being wrong by other amounts within the same bounds.

#[path = "../../tests/sweep/mod.rs"]
mod sweep;

use super::approx::model;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::format;
use sweep::*;

/// Sweeps `f` under each modelled error of the approximate instructions and asserts `bound`.
fn check_modelled(
    name: &str,
    f: fn(f32) -> f32,
    reference: fn(f64) -> f64,
    ranges: &[(f32, f32)],
    bound: f64,
) {
    let mut rng = StdRng::seed_from_u64(13);
    let xs = inputs(ranges, &[], &mut rng);
    for ex2_error in [-2, 2] {
        for rcp_error in [-1, 1] {
            let worst = worst_of(xs.clone(), |x| {
                model::ERROR.with(|e| e.set((ex2_error, rcp_error)));
                let (got, want) = (f(x), reference(x as f64));
                (got, want, floats_from_rounded(got, want))
            });
            say(&format!(
                "{name} (ex2 {ex2_error:+} ULP, rcp {rcp_error:+} ULP): max error {:.0} ULP from the correctly rounded result at x = {:e}",
                worst.error, worst.input
            ));
            assert!(
                worst.error <= bound,
                "{name} with ex2 {ex2_error:+}, rcp {rcp_error:+}: {worst:?} > {bound}"
            );
        }
    }
}

#[test]
fn exp2_is_within_2_ulp_of_the_rounded_result_with_ex2_at_its_bound() {
    check_modelled(
        "exp2",
        super::exp2,
        f64::exp2,
        &[(0.0, 129.0), (-0.0, -151.0)],
        2.0,
    );
}

#[test]
fn exp_is_within_3_ulp_of_the_rounded_result_with_ex2_at_its_bound() {
    check_modelled(
        "exp",
        super::exp,
        f64::exp,
        &[(0.0, 89.0), (-0.0, -105.0)],
        3.0,
    );
}

#[test]
fn erfc_is_within_cudas_4_ulp_with_rcp_at_its_bound() {
    check_modelled(
        "erfc",
        super::erfc,
        libm::erfc,
        &[(0.0, 0.5), (0.5, 10.1), (-0.0, -4.0)],
        4.0,
    );
}

#[test]
fn normal_cdf_is_within_cudas_5_ulp_with_rcp_at_its_bound() {
    check_modelled(
        "normal_cdf",
        super::normal_cdf,
        normal_cdf_f64,
        &[(-0.0, -0.7), (-0.7, -14.2), (0.0, 0.7), (0.7, 6.0)],
        5.0,
    );
}

#[test]
fn pow_is_within_4_ulp_of_the_rounded_result_with_ex2_and_rcp_at_their_bounds() {
    use rand::Rng;
    let mut rng = StdRng::seed_from_u64(17);
    // y such that y·log2(x) spans the results from underflow to overflow.
    let spanning = |x: f32, rng: &mut StdRng| {
        let target: f32 = rng.random_range(-155.0..130.0);
        let log2x = (x as f64).log2() as f32;
        (x, if log2x == 0.0 { 3.0 } else { target / log2x })
    };
    let mut pairs = std::vec::Vec::new();
    for _ in 0..200_000 {
        let x = f32::from_bits(rng.random_range(1..0x7f80_0000u32));
        pairs.push(spanning(x, &mut rng));
        // The reduced argument's ends, m near √½ and √2 (the series' u³ part at its largest
        // share, whose rounding y magnifies most where log2 x is near ±½).
        let m = f32::from_bits(if rng.random() {
            rng.random_range(0x3f35_04f3..0x3f40_0000u32)
        } else {
            rng.random_range(0x3fa8_0000..0x3fb5_04f3u32)
        });
        pairs.push(spanning(
            m * [0.5, 1.0, 2.0][rng.random_range(0..3)],
            &mut rng,
        ));
        // x near 1 with large y.
        let near_one =
            f32::from_bits(0x3f80_0000u32.wrapping_add(rng.random_range(0..4096u32)) - 2048);
        pairs.push((near_one, rng.random_range(-4.0e6..4.0e6)));
        // Negative x with integer y of both parities.
        pairs.push((
            -rng.random_range(0.01..100.0f32),
            rng.random_range(-40..40) as f32,
        ));
    }
    for (ex2_error, rcp_error) in [(0, 0), (-2, -1), (-2, 1), (2, -1), (2, 1)] {
        model::ERROR.with(|e| e.set((ex2_error, rcp_error)));
        let mut worst = (0.0, 0.0, 0.0);
        for &(x, y) in &pairs {
            let (got, want) = (super::pow(x, y), (x as f64).powf(y as f64));
            let error = floats_from_rounded(got, want);
            if error > worst.0 || error.is_nan() {
                worst = (error, x, y);
            }
        }
        model::ERROR.with(|e| e.set((0, 0)));
        say(&format!(
            "pow (ex2 {ex2_error:+} ULP, rcp {rcp_error:+} ULP): max error {:.0} ULP from the correctly rounded result at pow({:e}, {:e})",
            worst.0, worst.1, worst.2
        ));
        assert!(
            worst.0 <= 4.0,
            "pow with ex2 {ex2_error:+}, rcp {rcp_error:+}: {worst:?}"
        );
    }
}
