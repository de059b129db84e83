//! Option pricing: Black-Scholes-Merton in closed form for many options, and a Monte Carlo
//! European option price under geometric Brownian motion.

use super::checks::check_len;
use super::launch::{grid_stride_blocks, THREADS_1D};
use super::monte_carlo::{blocks_for, check_samples, Estimate};
use crate::kernels::finance::black_scholes as black_scholes_kernel;
use crate::kernels::monte_carlo::{monte_carlo_option, OPTION_SUMS};
use crate::{launch, Error, InputData, Module, OutputData, Result};

/// [`Error::InvalidInput`] unless `value` is finite and (if `positive`) above 0.
fn check_parameter(op: &'static str, what: &str, value: f32, positive: bool) -> Result<()> {
    if !value.is_finite() || (positive && value <= 0.0) {
        let need = if positive {
            "finite and above 0"
        } else {
            "finite"
        };
        return Err(Error::InvalidInput {
            op,
            detail: format!("{what} is {value}; it must be {need}"),
        });
    }
    Ok(())
}

/// Black-Scholes-Merton prices of European call and put options on non-dividend stocks:
/// option `i` is on a stock at `spot[i]`, struck at `strike[i]` and expiring in `years[i]`,
/// with one continuously compounded risk-free `rate` and one `volatility` (both per year) for
/// all, as NVIDIA's BlackScholes sample. Writes `call[i]` and `put[i]`.
///
/// call = S·Φ(d1) - K·e^(-rT)·Φ(d2) and put = K·e^(-rT)·Φ(-d2) - S·Φ(-d1), with
/// d1 = (ln(S/K) + (r + σ²/2)·T)/(σ√T) and d2 = d1 - σ√T
/// ([`black_scholes_prices`](crate::kernels::finance::black_scholes_prices)), in f32 with
/// ferrocuda-std's accurate math: deep in- and out-of-the-money prices keep their relative accuracy,
/// `years[i] = 0` gives the intrinsic values, and an option outside the model (spot or strike
/// not above 0, negative years, NaN) gets NaN prices: the elements themselves are not checked
/// here, which would need a copy from the GPU when they are [`DeviceBuffer`](crate::DeviceBuffer)s.
/// One launch of [`black_scholes`](crate::kernels::finance::black_scholes), grid-stride.
///
/// ```
/// use ferrocuda::{ops, Device};
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// let (mut call, mut put) = (vec![0.0f32; 1], vec![0.0f32; 1]);
/// ops::black_scholes(&kernels, &[100.0], &[100.0], &[1.0], 0.05, 0.2, &mut call, &mut put)?;
/// assert!((call[0] - 10.4506).abs() < 1e-3 && (put[0] - 5.5735).abs() < 1e-3);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidInput`] if `strike`, `years`, `call` or `put` differ in length from `spot`,
/// if `rate` is not finite, or if `volatility` is not finite and above 0; launch errors.
#[allow(clippy::too_many_arguments)]
pub fn black_scholes(
    kernels: &Module,
    spot: &(impl InputData<f32> + ?Sized),
    strike: &(impl InputData<f32> + ?Sized),
    years: &(impl InputData<f32> + ?Sized),
    rate: f32,
    volatility: f32,
    call: &mut (impl OutputData<f32> + ?Sized),
    put: &mut (impl OutputData<f32> + ?Sized),
) -> Result<()> {
    const OP: &str = "black_scholes";
    let n = spot.len();
    check_len(OP, "strike", strike.len(), n, "the length of spot")?;
    check_len(OP, "years", years.len(), n, "the length of spot")?;
    check_len(OP, "call", call.len(), n, "the length of spot")?;
    check_len(OP, "put", put.len(), n, "the length of spot")?;
    check_parameter(OP, "rate", rate, false)?;
    check_parameter(OP, "volatility", volatility, true)?;
    if n == 0 {
        return Ok(());
    }
    let blocks = grid_stride_blocks(kernels, n, THREADS_1D);
    launch!(
        kernels,
        black_scholes_kernel[blocks, THREADS_1D](spot, strike, years, rate, volatility, call, put)
    )
}

/// The terms of a European option on a non-dividend stock under Black-Scholes assumptions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionParams {
    /// The stock's price now, above 0.
    pub spot: f32,
    /// The strike price, above 0.
    pub strike: f32,
    /// Time to expiry in years, 0 or more.
    pub years: f32,
    /// The continuously compounded risk-free rate per year.
    pub rate: f32,
    /// The stock's volatility per year, above 0.
    pub volatility: f32,
}

/// Monte Carlo prices of a European call and put with the same terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionEstimates {
    /// The call's price.
    pub call: Estimate,
    /// The put's price.
    pub put: Estimate,
}

/// The discounted mean payoff and its standard error from a payoff sum and sum of squares.
fn payoff_estimate(sum: f64, squares: f64, samples: u64, discount: f64) -> Estimate {
    let n = samples as f64;
    let mean = sum / n;
    let std_error = if samples > 1 {
        let variance = ((squares - n * mean * mean) / (n - 1.0)).max(0.0);
        (variance / n).sqrt()
    } else {
        f64::INFINITY
    };
    Estimate {
        value: discount * mean,
        std_error: discount * std_error,
    }
}

/// The prices of a European call and put on `params`, by Monte Carlo with `samples` simulated
/// stock prices at expiry under geometric Brownian motion,
/// S_T = S·exp((r - σ²/2)·T + σ√T·Z), Z ~ N(0, 1): each price is e^(-rT) times the mean payoff
/// (max(S_T - K, 0) for the call, max(K - S_T, 0) for the put), with its standard error (the
/// payoffs' sample standard deviation over √samples, discounted; infinite for one sample). The
/// exact price (the Black-Scholes formula) lies within 4 standard errors virtually always.
///
/// Z comes from Philox4x32-10 keyed by `seed` through Box-Muller ([`ferrocuda_std::random`]), sample
/// `j` from counter `j / 4`: the same `seed` draws the same samples on any device and launch
/// shape (the sums may differ in their last bits, being added in a different order). One launch
/// of [`monte_carlo_option`]: each block writes its sums of payoffs and squared payoffs (f32
/// compensated sums per thread, f64 across the block), which are added, averaged and discounted
/// here in f64.
///
/// ```
/// use ferrocuda::ops::{self, OptionParams};
/// use ferrocuda::Device;
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// let params = OptionParams { spot: 100.0, strike: 100.0, years: 1.0, rate: 0.05, volatility: 0.2 };
/// let prices = ops::european_option_monte_carlo(&kernels, &params, 200_000, 1)?;
/// assert!((prices.call.value - 10.4506).abs() < 5.0 * prices.call.std_error);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidInput`] if `samples` is 0, if spot, strike or volatility is not finite and
/// above 0, if years is not finite and at least 0, or if rate is not finite; launch errors.
pub fn european_option_monte_carlo(
    kernels: &Module,
    params: &OptionParams,
    samples: u64,
    seed: u64,
) -> Result<OptionEstimates> {
    const OP: &str = "european_option_monte_carlo";
    check_samples(OP, samples)?;
    check_parameter(OP, "spot", params.spot, true)?;
    check_parameter(OP, "strike", params.strike, true)?;
    check_parameter(OP, "years", params.years, false)?;
    if params.years < 0.0 {
        return Err(Error::InvalidInput {
            op: OP,
            detail: format!("years is {}; it must be 0 or more", params.years),
        });
    }
    check_parameter(OP, "rate", params.rate, false)?;
    check_parameter(OP, "volatility", params.volatility, true)?;
    let (rate, volatility, years) = (
        params.rate as f64,
        params.volatility as f64,
        params.years as f64,
    );
    let drift = ((rate - 0.5 * volatility * volatility) * years) as f32;
    let vol_sqrt_t = (volatility * years.sqrt()) as f32;

    let blocks = blocks_for(kernels, samples.div_ceil(4));
    let mut partial = kernels
        .device()
        .alloc_zeroed::<f64>(OPTION_SUMS * blocks as usize)?;
    launch!(
        kernels,
        monte_carlo_option[blocks, THREADS_1D](
            samples,
            seed,
            params.spot,
            params.strike,
            drift,
            vol_sqrt_t,
            &mut partial
        )
    )?;
    let mut sums = [0.0f64; OPTION_SUMS];
    for block in partial.to_vec()?.chunks_exact(OPTION_SUMS) {
        for (sum, value) in sums.iter_mut().zip(block) {
            *sum += value;
        }
    }
    let discount = (-rate * years).exp();
    Ok(OptionEstimates {
        call: payoff_estimate(sums[0], sums[1], samples, discount),
        put: payoff_estimate(sums[2], sums[3], samples, discount),
    })
}
