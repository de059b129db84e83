//! Finance: Black-Scholes prices of ten million options (the seed's comparison), and Monte Carlo
//! estimates of π and of a European option's price with a counter-based generator.

use super::inputs::{inputs_rng, uniform, within, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::kernels::finance::black_scholes_prices;
use crate::kernels::monte_carlo::{in_quarter_disk, PI_STREAM};
use crate::ops::{self, Estimate, OptionParams};
use crate::{DeviceBuffer, Module, Result};
use ferrocuda_std::random::Philox4x32;
use rayon::prelude::*;

/// The standard normal CDF in f64, Φ(x) = erfc(-x/√2)/2.
fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// Black-Scholes call and put in f64: the reference.
fn black_scholes_f64(spot: f64, strike: f64, years: f64, rate: f64, vol: f64) -> (f64, f64) {
    let discounted = strike * (-rate * years).exp();
    let vol_sqrt_t = vol * years.sqrt();
    let d1 = ((spot / strike).ln() + (rate + 0.5 * vol * vol) * years) / vol_sqrt_t;
    let d2 = d1 - vol_sqrt_t;
    (
        spot * normal_cdf(d1) - discounted * normal_cdf(d2),
        discounted * normal_cdf(-d2) - spot * normal_cdf(-d1),
    )
}

/// NVIDIA's BlackScholes sample's market: one rate and volatility for all options.
pub(super) const RATE: f32 = 0.02;
pub(super) const VOLATILITY: f32 = 0.30;

pub(super) struct BlackScholes {
    pub(super) spot: Vec<f32>,
    pub(super) strike: Vec<f32>,
    pub(super) years: Vec<f32>,
    call: Vec<f32>,
    put: Vec<f32>,
}

impl BlackScholes {
    pub(super) fn new(scale: Scale) -> Self {
        Self::with_options(scale.pick(10_000_000, 1 << 20, 4099))
    }

    /// `n` options drawn from the sample's ranges.
    pub(super) fn with_options(n: usize) -> Self {
        let mut rng = inputs_rng("Black-Scholes");
        // The sample's ranges: spot 5-30, strike 1-100, 0.25-10 years.
        BlackScholes {
            spot: uniform(&mut rng, n, 5.0..30.0),
            strike: uniform(&mut rng, n, 1.0..100.0),
            years: uniform(&mut rng, n, 0.25..10.0),
            call: vec![0.0; n],
            put: vec![0.0; n],
        }
    }

    /// Every price against the f64 formula. f32 prices carry the rounding of f32 inputs to the
    /// formula: within 1e-5 of (spot + strike), plus 1e-4 relative.
    pub(super) fn check(&self, call: &[f32], put: &[f32]) -> Verdict {
        let n = self.spot.len();
        if call.len() != n || put.len() != n {
            return Err(format!(
                "{} calls and {} puts, expected {n}",
                call.len(),
                put.len()
            ));
        }
        for i in 0..n {
            let (s, k, t) = (
                self.spot[i] as f64,
                self.strike[i] as f64,
                self.years[i] as f64,
            );
            let (want_call, want_put) = black_scholes_f64(s, k, t, RATE as f64, VOLATILITY as f64);
            for (what, got, want) in [("call", call[i], want_call), ("put", put[i], want_put)] {
                let tolerance = 1e-5 * (s + k) + 1e-4 * want.abs();
                if !within(got as f64, want, tolerance) {
                    return Err(format!(
                        "option {i} (spot {s}, strike {k}, {t} years): {what} {got}, expected \
                         {want} (± {tolerance:.2e})"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Workload for BlackScholes {
    fn size(&self) -> String {
        format!("{} options", self.spot.len())
    }
    fn work(&self) -> Work {
        Work {
            bytes: 20 * self.spot.len() as u64,
            flops: 0,
        }
    }
    fn run_loop(&mut self) {
        for i in 0..self.spot.len() {
            let (c, p) = black_scholes_prices(
                self.spot[i],
                self.strike[i],
                self.years[i],
                RATE,
                VOLATILITY,
            );
            self.call[i] = c;
            self.put[i] = p;
        }
    }
    fn run_rayon(&mut self) {
        let (spot, strike, years) = (&self.spot, &self.strike, &self.years);
        self.call
            .par_iter_mut()
            .zip(self.put.par_iter_mut())
            .enumerate()
            .for_each(|(i, (c, p))| {
                (*c, *p) = black_scholes_prices(spot[i], strike[i], years[i], RATE, VOLATILITY)
            });
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.call, &self.put)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["black_scholes"]
    }

    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        let n = self.spot.len();
        Ok(Box::new(BlackScholesOnDevice {
            workload: self,
            kernels,
            spot: device.upload(&self.spot)?,
            strike: device.upload(&self.strike)?,
            years: device.upload(&self.years)?,
            call: device.alloc_zeroed(n)?,
            put: device.alloc_zeroed(n)?,
        }))
    }
}

struct BlackScholesOnDevice<'a> {
    workload: &'a BlackScholes,
    kernels: &'a Module,
    spot: DeviceBuffer<f32>,
    strike: DeviceBuffer<f32>,
    years: DeviceBuffer<f32>,
    call: DeviceBuffer<f32>,
    put: DeviceBuffer<f32>,
}

impl DeviceRun for BlackScholesOnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        ops::black_scholes(
            self.kernels,
            &self.spot,
            &self.strike,
            &self.years,
            RATE,
            VOLATILITY,
            &mut self.call,
            &mut self.put,
        )
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self
            .workload
            .check(&self.call.to_vec()?, &self.put.to_vec()?))
    }
}

/// The seed every Monte Carlo workload draws with.
const SEED: u64 = 2024;

/// π from random points of the unit square (the hits in the quarter disk), with Philox.
pub(super) struct MonteCarloPi {
    samples: u64,
    /// The hit count of the reference loop: every implementation draws the same points.
    exact_hits: u64,
    hits: u64,
}

/// Hits among the samples of Philox blocks `blocks`, as the kernel draws them.
fn pi_hits(rng: &Philox4x32, samples: u64, blocks: std::ops::Range<u64>) -> u64 {
    let mut hits = 0;
    for i in blocks {
        let [a, b, c, d] = rng.block_at(i, PI_STREAM);
        hits += in_quarter_disk(a, b) as u64;
        if 2 * i + 1 < samples {
            hits += in_quarter_disk(c, d) as u64;
        }
    }
    hits
}

impl MonteCarloPi {
    pub(super) fn new(scale: Scale) -> Self {
        let samples = scale.pick(1 << 26, 1 << 22, 10_001);
        let mut this = MonteCarloPi {
            samples,
            exact_hits: 0,
            hits: 0,
        };
        this.run_rayon();
        this.exact_hits = this.hits;
        this
    }

    /// The count must equal the reference's exactly (same samples), and the estimate must lie
    /// within 4 standard errors of π.
    fn check(&self, hits: u64) -> Verdict {
        if hits != self.exact_hits {
            return Err(format!(
                "{hits} hits, but the same {} samples give {}",
                self.samples, self.exact_hits
            ));
        }
        let n = self.samples as f64;
        let p = hits as f64 / n;
        let std_error = 4.0 * (p * (1.0 - p) / n).sqrt();
        let estimate = 4.0 * p;
        if within(estimate, std::f64::consts::PI, 4.0 * std_error) {
            Ok(())
        } else {
            Err(format!(
                "π estimated as {estimate}, more than 4 × {std_error:.2e} off"
            ))
        }
    }
}

impl Workload for MonteCarloPi {
    fn size(&self) -> String {
        format!("{} samples", self.samples)
    }
    fn work(&self) -> Work {
        Work { bytes: 8, flops: 0 }
    }
    fn run_loop(&mut self) {
        let rng = Philox4x32::from_seed(SEED);
        self.hits = pi_hits(&rng, self.samples, 0..self.samples.div_ceil(2));
    }
    fn run_rayon(&mut self) {
        let rng = Philox4x32::from_seed(SEED);
        let blocks = self.samples.div_ceil(2);
        let chunk = 1 << 16;
        self.hits = (0..blocks.div_ceil(chunk))
            .into_par_iter()
            .map(|c| pi_hits(&rng, self.samples, c * chunk..((c + 1) * chunk).min(blocks)))
            .sum();
    }
    fn check_loop(&self) -> Verdict {
        self.check(self.hits)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["monte_carlo_pi"]
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        Ok(Box::new(PiOnDevice {
            workload: self,
            kernels,
            estimate: None,
        }))
    }
}

struct PiOnDevice<'a> {
    workload: &'a MonteCarloPi,
    kernels: &'a Module,
    estimate: Option<Estimate>,
}

impl DeviceRun for PiOnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        self.estimate = Some(ops::monte_carlo_pi(
            self.kernels,
            self.workload.samples,
            SEED,
        )?);
        Ok(())
    }
    fn check(&mut self) -> Result<Verdict> {
        let Some(estimate) = self.estimate else {
            return Ok(Err("not run".into()));
        };
        // The estimate is 4·hits/samples: recover the count, exactly.
        let hits = (estimate.value / 4.0 * self.workload.samples as f64).round() as u64;
        Ok(self.workload.check(hits))
    }
}

/// A European call and put by Monte Carlo under geometric Brownian motion.
pub(super) struct MonteCarloOption {
    samples: u64,
    params: OptionParams,
    result: Option<(Estimate, Estimate)>,
}

/// The option of the Black-Scholes-Merton paper's usual example: at the money, one year.
const OPTION: OptionParams = OptionParams {
    spot: 100.0,
    strike: 100.0,
    years: 1.0,
    rate: 0.05,
    volatility: 0.2,
};

/// Call and put payoff sums (and sums of squares) of samples `4·blocks.start .. 4·blocks.end`,
/// drawn as the kernel draws them, summed in f64.
fn option_sums(rng: &Philox4x32, samples: u64, blocks: std::ops::Range<u64>) -> [f64; 4] {
    use crate::kernels::monte_carlo::OPTION_STREAM;
    use ferrocuda_std::random::normal_pair;
    let p = OPTION;
    let drift = (p.rate - 0.5 * p.volatility * p.volatility) * p.years;
    let vol_sqrt_t = p.volatility * p.years.sqrt();
    let mut sums = [0.0f64; 4];
    for i in blocks {
        let [a, b, c, d] = rng.block_at(i, OPTION_STREAM);
        let (z0, z1) = normal_pair(a, b);
        let (z2, z3) = normal_pair(c, d);
        for (k, z) in [z0, z1, z2, z3].into_iter().enumerate() {
            if 4 * i + (k as u64) < samples {
                let price = p.spot
                    * ferrocuda_std::math::exp(ferrocuda_std::math::fma(vol_sqrt_t, z, drift));
                let call = (price - p.strike).max(0.0) as f64;
                let put = (p.strike - price).max(0.0) as f64;
                sums[0] += call;
                sums[1] += call * call;
                sums[2] += put;
                sums[3] += put * put;
            }
        }
    }
    sums
}

impl MonteCarloOption {
    pub(super) fn new(scale: Scale) -> Self {
        MonteCarloOption {
            samples: scale.pick(1 << 24, 1 << 20, 20_000),
            params: OPTION,
            result: None,
        }
    }

    fn estimates(&self, sums: [f64; 4]) -> (Estimate, Estimate) {
        let n = self.samples as f64;
        let discount = (-(self.params.rate as f64) * self.params.years as f64).exp();
        let estimate = |sum: f64, squares: f64| {
            let mean = sum / n;
            let variance = ((squares - n * mean * mean) / (n - 1.0)).max(0.0);
            Estimate {
                value: discount * mean,
                std_error: discount * (variance / n).sqrt(),
            }
        };
        (estimate(sums[0], sums[1]), estimate(sums[2], sums[3]))
    }

    /// Both prices within 4 standard errors of the Black-Scholes formula (in f64).
    fn check(&self, result: Option<(Estimate, Estimate)>) -> Verdict {
        let Some((call, put)) = result else {
            return Err("not run".into());
        };
        let p = self.params;
        let (want_call, want_put) = black_scholes_f64(
            p.spot as f64,
            p.strike as f64,
            p.years as f64,
            p.rate as f64,
            p.volatility as f64,
        );
        for (what, got, want) in [("call", call, want_call), ("put", put, want_put)] {
            if !(got.std_error > 0.0 && within(got.value, want, 4.0 * got.std_error)) {
                return Err(format!(
                    "the {what} is {} ± {:.2e}, but Black-Scholes gives {want}",
                    got.value, got.std_error
                ));
            }
        }
        Ok(())
    }
}

impl Workload for MonteCarloOption {
    fn size(&self) -> String {
        format!("{} paths", self.samples)
    }
    fn work(&self) -> Work {
        Work { bytes: 8, flops: 0 }
    }
    fn run_loop(&mut self) {
        let rng = Philox4x32::from_seed(SEED);
        let sums = option_sums(&rng, self.samples, 0..self.samples.div_ceil(4));
        self.result = Some(self.estimates(sums));
    }
    fn run_rayon(&mut self) {
        let rng = Philox4x32::from_seed(SEED);
        let blocks = self.samples.div_ceil(4);
        let chunk = 1 << 14;
        let sums = (0..blocks.div_ceil(chunk))
            .into_par_iter()
            .map(|c| option_sums(&rng, self.samples, c * chunk..((c + 1) * chunk).min(blocks)))
            .reduce(|| [0.0; 4], |a, b| std::array::from_fn(|k| a[k] + b[k]));
        self.result = Some(self.estimates(sums));
    }
    fn check_loop(&self) -> Verdict {
        self.check(self.result)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["monte_carlo_option"]
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        Ok(Box::new(OptionOnDevice {
            workload: self,
            kernels,
            result: None,
        }))
    }
}

struct OptionOnDevice<'a> {
    workload: &'a MonteCarloOption,
    kernels: &'a Module,
    result: Option<(Estimate, Estimate)>,
}

impl DeviceRun for OptionOnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let w = self.workload;
        let prices = ops::european_option_monte_carlo(self.kernels, &w.params, w.samples, SEED)?;
        self.result = Some((prices.call, prices.put));
        Ok(())
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(self.result))
    }
}
