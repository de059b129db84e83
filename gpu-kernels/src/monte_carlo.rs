//! Monte Carlo with a counter-based generator: π from points in the unit square, and European
//! option prices under geometric Brownian motion.
//!
//! Sample `j`'s random numbers come from Philox4x32-10 ([`ferrocuda_std::random`]) with the key from
//! the seed and the counter from `j` (and a stream constant per use), so every sample is the same
//! whichever thread draws it: the results do not depend on the launch shape (the π hit count not
//! even by a rounding: it is an integer sum), and the GPU and the CPU draw the same samples.
//!
//! Each thread walks its share of the samples ([`thread::grid_stride`]), the block sums its threads' results (warp
//! shuffles, then one shared value per warp), and thread 0 of the block adds the block's sum to
//! the output (an integer atomic: exact in any order) or writes it as the block's partial sum.

use ferrocuda_std::block::{BlockScratch, BlockValue};
use ferrocuda_std::random::{normal_pair, Philox4x32};
use ferrocuda_std::{block, hint, kernel, math, shared, thread, warp, Out, Shared};

/// Most warps a block can have (1024 threads).
const MAX_WARPS: usize = 32;

/// The Philox stream (counter words 2 and 3) of [`monte_carlo_pi`]'s samples.
pub const PI_STREAM: u64 = 0x7069; // "pi"
/// The Philox stream of [`monte_carlo_option`]'s samples.
pub const OPTION_STREAM: u64 = 0x6f70_7469_6f6e; // "option"

/// Whether the point of two random words lies in the quarter disk x² + y² ≤ 1. The point is the
/// centre of one of 2^24 × 2^24 equal cells of the unit square, x = (2X + 1)/2^25 with X the top
/// 24 bits of the first word (y likewise), and the test is exact in integers:
/// (2X + 1)² + (2Y + 1)² ≤ 2^50 (never equal: the left side is 2 mod 4).
#[inline(always)]
pub fn in_quarter_disk(word_x: u32, word_y: u32) -> bool {
    let x = 2 * (word_x >> 8) as u64 + 1;
    let y = 2 * (word_y >> 8) as u64 + 1;
    x * x + y * y <= 1 << 50
}

/// Adds to `hits[0]` how many of the `samples` random points of the unit square fall in the
/// quarter disk ([`in_quarter_disk`]): 4·hits/samples estimates π. Sample `2i` and `2i + 1` use
/// the four words of Philox block `i` (stream [`PI_STREAM`], key from `seed`). Grid-stride over
/// the blocks; each block adds its count with one atomic, so `hits` must start at 0.
#[kernel]
pub fn monte_carlo_pi(samples: u64, seed: u64, hits: Out<u64>) {
    let scratch = shared!([u64; MAX_WARPS]);
    let rng = Philox4x32::from_seed(seed);
    // Block i's second point, sample 2i + 1, exists where 2i + 1 < samples, i.e. below
    // `samples / 2` blocks (a bound, rather than 2i + 1 in the loop: one induction variable).
    let whole_blocks = samples / 2;
    // usize is 64 bits on the GPU and on the hosts the executor runs on. A `fold` rather than a
    // `for` loop: on the CPU executor each chunk of indices is a plain range loop, which LLVM
    // vectorises as it does the plain loop (the `for` loop's deadline check between chunks kept
    // it scalar, 2.4× slower per thread); on the GPU it is the same loop (75 instructions).
    let count = thread::grid_stride(samples.div_ceil(2) as usize).fold(0u64, |count, i| {
        // Opaque, so that LLVM does not add induction variables for the counter's words.
        let i = hint::opaque(i as u64);
        let [a, b, c, d] = rng.block_at(i, PI_STREAM);
        count + in_quarter_disk(a, b) as u64 + (i < whole_blocks && in_quarter_disk(c, d)) as u64
    });
    let total = block::reduce_add(count, scratch);
    if thread::thread_idx().x == 0 && total != 0 {
        hits.atomic_add(0, total);
    }
}

/// Sums of a block of [`monte_carlo_option`]: Σ call payoff, Σ call payoff², Σ put payoff,
/// Σ put payoff² (undiscounted), in this order in `partial[4·block ..]`.
pub const OPTION_SUMS: usize = 4;

/// A running f32 sum with Kahan's compensation: each thread adds thousands of payoffs, whose
/// plain f32 sum would drift by more than the Monte Carlo error it is meant to measure.
#[derive(Clone, Copy)]
struct CompensatedSum {
    sum: f32,
    carry: f32,
}

impl CompensatedSum {
    #[inline(always)]
    fn new() -> Self {
        CompensatedSum {
            sum: 0.0,
            carry: 0.0,
        }
    }
    #[inline(always)]
    fn add(&mut self, x: f32) {
        let y = x - self.carry;
        let t = self.sum + y;
        self.carry = (t - self.sum) - y;
        self.sum = t;
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self.sum as f64 - self.carry as f64
    }
}

/// A block's [`OPTION_SUMS`] sums, folded over its threads by one `block::reduce` (one barrier
/// for the four, and a sync point `#[kernel]` sees, so that the CPU executor splits the kernel
/// there rather than running its blocks on coroutines).
#[derive(Clone, Copy)]
struct OptionTotals {
    call: f64,
    call_squares: f64,
    put: f64,
    put_squares: f64,
}

impl OptionTotals {
    const ZERO: OptionTotals = OptionTotals {
        call: 0.0,
        call_squares: 0.0,
        put: 0.0,
        put_squares: 0.0,
    };

    #[inline(always)]
    fn add(self, other: OptionTotals) -> OptionTotals {
        OptionTotals {
            call: self.call + other.call,
            call_squares: self.call_squares + other.call_squares,
            put: self.put + other.put,
            put_squares: self.put_squares + other.put_squares,
        }
    }
}

impl BlockValue for OptionTotals {
    #[inline(always)]
    fn shfl_down(self, mask: u32, delta: u32) -> Self {
        OptionTotals {
            call: warp::shfl_down_sync(mask, self.call, delta),
            call_squares: warp::shfl_down_sync(mask, self.call_squares, delta),
            put: warp::shfl_down_sync(mask, self.put, delta),
            put_squares: warp::shfl_down_sync(mask, self.put_squares, delta),
        }
    }
}

/// One [`OptionTotals`] per warp: sum `k` of warp `w` at `k·MAX_WARPS + w`.
#[derive(Clone, Copy)]
struct OptionScratch<'b>(Shared<'b, f64>);

impl BlockScratch<OptionTotals> for OptionScratch<'_> {
    #[inline(always)]
    fn store(&self, warp: usize, totals: OptionTotals) {
        self.0.set(warp, totals.call);
        self.0.set(MAX_WARPS + warp, totals.call_squares);
        self.0.set(2 * MAX_WARPS + warp, totals.put);
        self.0.set(3 * MAX_WARPS + warp, totals.put_squares);
    }
    #[inline(always)]
    fn load(&self, warp: usize) -> OptionTotals {
        OptionTotals {
            call: self.0.get(warp),
            call_squares: self.0.get(MAX_WARPS + warp),
            put: self.0.get(2 * MAX_WARPS + warp),
            put_squares: self.0.get(3 * MAX_WARPS + warp),
        }
    }
}

/// Payoff sums of `samples` simulated prices at expiry of a stock under geometric Brownian
/// motion: S_T = spot · exp(drift + vol_sqrt_t · Z), Z ~ N(0, 1), with drift = (r - σ²/2)·T and
/// vol_sqrt_t = σ·√T. For each sample: the call payoff max(S_T - strike, 0) and the put payoff
/// max(strike - S_T, 0), and their squares; each block writes its [`OPTION_SUMS`] sums (in f64)
/// to `partial[4·block ..]`, so `partial` needs 4 elements per block. The host averages them,
/// discounts by e^(-rT) and gets the standard error from the sum of squares.
///
/// Samples `4i .. 4i + 4` use the two Box-Muller pairs of Philox block `i` (stream
/// [`OPTION_STREAM`], key from `seed`). Grid-stride over the blocks; accurate math throughout.
#[kernel]
pub fn monte_carlo_option(
    samples: u64,
    seed: u64,
    spot: f32,
    strike: f32,
    drift: f32,
    vol_sqrt_t: f32,
    partial: Out<f64>,
) {
    let scratch = OptionScratch(shared!([f64; OPTION_SUMS * MAX_WARPS]));
    assert!(
        partial.len() >= OPTION_SUMS * thread::grid_dim().x as usize,
        "monte_carlo_option needs 4 partial sums per block"
    );
    let rng = Philox4x32::from_seed(seed);
    let (mut call_sum, mut call_squares) = (CompensatedSum::new(), CompensatedSum::new());
    let (mut put_sum, mut put_squares) = (CompensatedSum::new(), CompensatedSum::new());
    let mut add_sample = |z: f32| {
        let price = spot * math::exp(math::fma(vol_sqrt_t, z, drift));
        let call = (price - strike).max(0.0);
        let put = (strike - price).max(0.0);
        call_sum.add(call);
        call_squares.add(call * call);
        put_sum.add(put);
        put_squares.add(put * put);
    };
    for i in thread::grid_stride(samples.div_ceil(4) as usize) {
        let i = i as u64;
        let [a, b, c, d] = rng.block_at(i, OPTION_STREAM);
        let (z0, z1) = normal_pair(a, b);
        let (z2, z3) = normal_pair(c, d);
        // Written out (not a loop over an array) so the four stay in registers.
        let first = 4 * i;
        add_sample(z0);
        if first + 1 < samples {
            add_sample(z1);
        }
        if first + 2 < samples {
            add_sample(z2);
        }
        if first + 3 < samples {
            add_sample(z3);
        }
    }
    let sums = OptionTotals {
        call: call_sum.value(),
        call_squares: call_squares.value(),
        put: put_sum.value(),
        put_squares: put_squares.value(),
    };
    let totals = block::reduce(sums, OptionTotals::ZERO, scratch, OptionTotals::add);
    if thread::thread_idx().x == 0 {
        let block = thread::block_idx().x as usize;
        partial.set(OPTION_SUMS * block, totals.call);
        partial.set(OPTION_SUMS * block + 1, totals.call_squares);
        partial.set(OPTION_SUMS * block + 2, totals.put);
        partial.set(OPTION_SUMS * block + 3, totals.put_squares);
    }
}
