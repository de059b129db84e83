//! Option pricing in closed form: Black-Scholes-Merton for European calls and puts.

use ferrocuda_std::{kernel, math, thread, Out};

/// `(Φ(d), Φ(-d))`, both accurate in the tails: the smaller one is `normal_cdf(-|d|)` itself,
/// the larger one 1 minus it (at least ½, so that subtraction loses nothing). Branch-free:
/// `normal_cdf` is one formula for every input, and the two results are selects.
#[inline(always)]
fn cdf_and_complement(d: f32) -> (f32, f32) {
    let tail = math::normal_cdf(-d.abs());
    let body = 1.0 - tail;
    if d > 0.0 {
        (body, tail)
    } else {
        (tail, body)
    }
}

/// The Black-Scholes-Merton prices `(call, put)` of European options on a non-dividend stock at
/// `spot`, struck at `strike`, expiring in `years`, with the continuously compounded risk-free
/// `rate` and the `volatility` (both per year):
///
/// call = S·Φ(d1) - K·e^(-rT)·Φ(d2), put = K·e^(-rT)·Φ(-d2) - S·Φ(-d1),
/// d1 = (ln(S/K) + (r + σ²/2)·T) / (σ√T), d2 = d1 - σ√T.
///
/// The put uses Φ(-d), not 1 - Φ(d), so deep in- and out-of-the-money prices keep their
/// relative accuracy. `years = 0` gives the intrinsic values max(S - K, 0) and max(K - S, 0).
/// Inputs outside the model (spot or strike not positive, negative years, NaN) give NaN.
/// The kernel and the tests' f64 reference share this formula.
#[inline(always)]
pub fn black_scholes_prices(
    spot: f32,
    strike: f32,
    years: f32,
    rate: f32,
    volatility: f32,
) -> (f32, f32) {
    let valid = spot > 0.0 && strike > 0.0 && years >= 0.0;
    if !valid {
        return (f32::NAN, f32::NAN);
    }
    let discounted_strike = strike * math::exp(-rate * years);
    let vol_sqrt_t = volatility * math::sqrt(years);
    if vol_sqrt_t == 0.0 {
        return (
            (spot - discounted_strike).max(0.0),
            (discounted_strike - spot).max(0.0),
        );
    }
    let d1 =
        (math::ln(spot / strike) + (rate + 0.5 * volatility * volatility) * years) / vol_sqrt_t;
    let d2 = d1 - vol_sqrt_t;
    let (cdf_d1, cdf_minus_d1) = cdf_and_complement(d1);
    let (cdf_d2, cdf_minus_d2) = cdf_and_complement(d2);
    // Both prices are positive in exact arithmetic; a rounding below 0 is clamped.
    let call = spot * cdf_d1 - discounted_strike * cdf_d2;
    let put = discounted_strike * cdf_minus_d2 - spot * cdf_minus_d1;
    (call.max(0.0), put.max(0.0))
}

/// Black-Scholes-Merton call and put prices of `spot.len()` European options (as NVIDIA's
/// BlackScholes sample: per-option spot, strike and years to expiry, one rate and volatility):
/// `call[i], put[i] = black_scholes_prices(spot[i], strike[i], years[i], rate, volatility)`.
/// Grid-stride: any grid covers any number of options.
///
/// Uses ferrocuda-std's default math tier, CUDA's accuracy at CUDA's cost (on the GPU: exp
/// within 3 ULP, ln 1, sqrt correctly rounded, the normal CDF 5 (CUDA's bound), all
/// branch-free; see [`ferrocuda_std::math`]): per option about as many instructions as CUDA C
/// with `normcdff`, where the reproducible tier took 2.2 times as many. CPU and GPU prices can
/// differ in the last bits; both are within the tolerance `tests/ops_finance.rs` states against
/// its f64 reference.
#[kernel(same_len(spot, strike, years, call, put))]
pub fn black_scholes(
    spot: &[f32],
    strike: &[f32],
    years: &[f32],
    rate: f32,
    volatility: f32,
    call: Out<f32>,
    put: Out<f32>,
) {
    for i in thread::grid_stride(call.len()) {
        let (c, p) = black_scholes_prices(spot[i], strike[i], years[i], rate, volatility);
        call.set(i, c);
        put.set(i, p);
    }
}
