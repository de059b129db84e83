//! Count, mean, variance, min and max of f32 or f64 data in one read, numerically sound for data
//! far from zero (e.g. `1e4 + N(0, 1)`, where the textbook `Σx²/n − mean²` cancels to noise).
//!
//! Each thread sums the elements it visits (grid-stride) as differences from a shift that moves
//! to the running mean whenever the count doubles ([`ShiftedSums`]: no division per element);
//! each block adds up its threads' count and `Σx` ([`block::reduce`]: warp shuffles, then one
//! value per warp in shared memory), then their sums moved to the block's mean, and
//! [`statistics_partial`] writes one [`Moments`] state (count, mean, `M2`, min, max) per block;
//! [`statistics_merge`] with one block merges those with Chan et al.'s parallel combination.
//! Two launches rather than atomics keep the result deterministic for a given launch shape.
//! Both kernels are generic over the data's type: the `f32` instances keep the kernels' names as
//! their PTX entries, the `f64` ones are `statistics_partial_f64` and `statistics_merge_f64`.
//!
//! # Precision: f64 accumulators
//! Mean and `M2 = Σ(x − mean)²` are f64 (the count too: exact to 2⁵³). In f32 the running mean
//! carries an absolute error of about one ulp of the mean, and every Welford and Chan step
//! multiplies a difference from that mean: a host simulation of these kernels' f32 arithmetic on
//! 2²⁰ values `c + U(−1, 1)` gave variance errors of 1e-5 relative for `c = 1e4`, 2e-4 for 1e5 and
//! up to 4e-2 for 1e6; in f64, 1e-12 to 3e-11. The kernels read 4 bytes per element and do a
//! few flops on them (a subtraction, an add and a fused multiply-add in f64), so they stay bound
//! by memory bandwidth on GPUs with fast f64 (V100, A100, H100/H200: f64 at half the f32 rate).
//!
//! Why a thread's sums are sound although `Σx²/n − mean²` is not: they are sums of `d = x − K`,
//! and `M2 = Σd² − (Σd)²/n` cancels only as much as `Σd²` exceeds `M2`, which is by
//! `n·(mean − K)²` (with `K = 0`, by `n·mean²`: 10⁸ times for `1e4 + U(−1, 1)`). The shift
//! moves to the running mean whenever the count doubles, so it is the mean of at least half of
//! the values: if `a` are the values up to the last doubling and `b` the rest (`nᵦ ≤ nₐ`),
//! `mean − K = δ·nᵦ/n` with `δ` the difference of their means, while Chan's formula gives
//! `M2 ≥ δ²·nₐ·nᵦ/n`, so `n·(mean − K)² ≤ M2`: `Σd²` is at most twice `M2`, for any data, and
//! the subtraction loses at most a bit. A fixed shift (the first value) was not enough: with an
//! outlier first, `Σd²` reached `n·M2` and a thread of 2¹⁶ values lost 4e-8 of its variance.
//! The moves themselves are exact or cost an ulp of `Σd²`. Welford's update per element, used
//! before, needed an f64 division per element: latency-bound on the CPU and a slow-path
//! subroutine call on the GPU.
//!
//! A block's sums are moved to one centre, the block's mean `c` (its count and `Σx` first):
//! `Σ(x − c)² = M2 + N·(mean − c)²`, and `c` is the mean up to rounding, so this sum is within
//! rounding of `M2` too. The sums around `c` are scaled by `N` and `N²` so that only thread 0
//! divides (`ShiftedSums::centred`); for f64 data that limits `M2·N²` to f64's range (a spread
//! of about 1e140 in a block of 10⁹ values, where `M2` itself overflows at about 1e150).
//!
//! # NaN and infinities
//! A NaN element makes the mean, sum and variance NaN (it enters the shifted sums like any
//! value); min and max ignore NaN as [`f32::min`] does (`x < min` is false for NaN). An infinite
//! element makes the mean infinite (or NaN if both signs occur) and the variance NaN, as the
//! two-pass `Σx / n` and `Σ(x − mean)² / n` in f64 give them (`∞ − ∞` in the second sum).

use ferrocuda_std::block::{self, BlockScratch, BlockValue};
use ferrocuda_std::{kernel, shared, thread, warp, Number, Out, Shared};

/// Most warps a block can have (1024 threads).
const MAX_WARPS: usize = 32;

/// f64 values per state in the `partial` and `out` arrays: count, mean, M2, min, max (min and
/// max are values of the data's type, f32 or f64, exact in f64).
pub const STATE_LEN: usize = 5;

/// Statistics of a set of `T` values (f32 or f64): count, mean and `M2` (the state Chan's merge
/// combines) plus min and max.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments<T = f32> {
    /// Number of values (an integer; f64 so that the merge formulas need no conversion).
    pub count: f64,
    /// Their mean (0 for no values).
    pub mean: f64,
    /// `Σ(x − mean)²`: the population variance is `m2 / count`.
    pub m2: f64,
    /// The smallest non-NaN value; `+∞` if there is none.
    pub min: T,
    /// The largest non-NaN value; `−∞` if there is none.
    pub max: T,
}

impl<T: Number> Moments<T> {
    /// No values: the identity of [`merge`](Moments::merge).
    pub const EMPTY: Moments<T> = Moments {
        count: 0.0,
        mean: 0.0,
        m2: 0.0,
        min: T::GREATEST,
        max: T::LEAST,
    };

    /// The statistics of both sets (Chan, Golub and LeVeque's parallel combination:
    /// `M2 = M2ₐ + M2ᵦ + δ²·nₐ·nᵦ/n` with `δ` the difference of the means). Either may be empty.
    #[inline(always)]
    pub fn merge(self, other: Moments<T>) -> Moments<T> {
        if other.count == 0.0 {
            return self;
        }
        if self.count == 0.0 {
            return other;
        }
        let count = self.count + other.count;
        let delta = other.mean - self.mean;
        Moments {
            count,
            mean: moved_mean(self.mean, delta * (other.count / count), other.mean),
            m2: self.m2 + other.m2 + delta * delta * (self.count * (other.count / count)),
            min: lower(self.min, other.min),
            max: higher(self.max, other.max),
        }
    }

    /// The state stored at `state` (of [`STATE_LEN`] values) in `data`.
    #[inline(always)]
    fn load(data: &[f64], state: usize) -> Moments<T> {
        let at = state * STATE_LEN;
        Moments {
            count: data[at],
            mean: data[at + 1],
            m2: data[at + 2],
            min: T::from_f64(data[at + 3]),
            max: T::from_f64(data[at + 4]),
        }
    }

    /// Stores this state at `state` (of [`STATE_LEN`] values) in `out`.
    #[inline(always)]
    fn store(self, out: &Out<f64>, state: usize) {
        let at = state * STATE_LEN;
        out.set(at, self.count);
        out.set(at + 1, self.mean);
        out.set(at + 2, self.m2);
        out.set(at + 3, self.min.to_f64());
        out.set(at + 4, self.max.to_f64());
    }

    /// Lane `lane_id() + delta`'s state (see [`warp::shfl_down_sync`]).
    #[inline(always)]
    fn shfl_down(self, mask: u32, delta: u32) -> Moments<T> {
        Moments {
            count: warp::shfl_down_sync(mask, self.count, delta),
            mean: warp::shfl_down_sync(mask, self.mean, delta),
            m2: warp::shfl_down_sync(mask, self.m2, delta),
            min: warp::shfl_down_sync(mask, self.min, delta),
            max: warp::shfl_down_sync(mask, self.max, delta),
        }
    }
}

/// One thread's values summed as differences from a shift `K`: the count, `Σ(x − K)`,
/// `Σ(x − K)²`, min and max. Per value a subtraction, an add and a fused multiply-add, with no
/// division (Welford's update divides by the count for every value); when the count reaches a
/// power of two the shift moves to the values' mean (`K + Σd/n`: a multiplication by `2⁻ᵏ`,
/// exact), so `K` is the first value after one value, the mean of the first two after two, and
/// so on. [`moments`](ShiftedSums::moments) turns the sums into a [`Moments`] state once. See
/// the module's precision notes for why this is sound far from zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShiftedSums<T = f32> {
    /// `K`.
    pub shift: f64,
    /// Number of values.
    pub count: usize,
    /// The count at which the shift moves next (the next power of two).
    pub next_move: usize,
    /// `1 / next_move`.
    pub next_inverse: f64,
    /// `Σ(x − K)`.
    pub sum: f64,
    /// `Σ(x − K)²`.
    pub squares: f64,
    /// The smallest non-NaN value; `+∞` if there is none.
    pub min: T,
    /// The largest non-NaN value; `−∞` if there is none.
    pub max: T,
}

impl<T: Number> ShiftedSums<T> {
    /// No values (shift 0).
    pub const EMPTY: ShiftedSums<T> = ShiftedSums {
        shift: 0.0,
        count: 0,
        next_move: 1,
        next_inverse: 1.0,
        sum: 0.0,
        squares: 0.0,
        min: T::GREATEST,
        max: T::LEAST,
    };

    /// Adds one value.
    #[inline(always)]
    pub fn push(mut self, x: T) -> Self {
        let d = x.to_f64() - self.shift;
        self.count += 1;
        self.sum += d;
        self.squares = d.mul_add(d, self.squares);
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
        if self.count == self.next_move {
            self.recentre();
        }
        self
    }

    /// Moves the shift to the mean, `K + Σd/n` with `n` a power of two (so `Σd/n` is exact),
    /// and the sums with it by `t`, what the shift moved by once rounded:
    /// `Σ(d − t) = Σd − n·t` and `Σ(d − t)² = Σd² − t·(2·Σd − n·t)`. Nothing moves once `Σd` is
    /// infinite or NaN (an infinite or NaN value): the sums give the two-pass f64 results then
    /// whatever the shift, and a shift of ±∞ would make every later difference NaN.
    #[inline(always)]
    fn recentre(&mut self) {
        let shift = self.shift + self.sum * self.next_inverse;
        if shift.is_finite() {
            let t = shift - self.shift;
            let n = self.count as f64;
            self.squares -= t * n.mul_add(-t, 2.0 * self.sum);
            self.sum = n.mul_add(-t, self.sum);
            self.shift = shift;
        }
        // No overflow: the count stays below 2⁶³ (a thread cannot visit more elements).
        self.next_move *= 2;
        self.next_inverse *= 0.5;
    }

    /// The [`Moments`] of the values: mean `K + Σd/n`, `M2 = Σd² − Σd·(Σd/n)` (never below 0: a
    /// rounding residue of equal values would be), both NaN or infinite as the two-pass f64
    /// formulas give them when a value is (an infinite `Σd` makes `M2` `∞ − ∞`).
    #[inline(always)]
    pub fn moments(self) -> Moments<T> {
        if self.count == 0 {
            return Moments::EMPTY;
        }
        let count = self.count as f64;
        let step = self.sum / count;
        let m2 = self.squares - self.sum * step;
        Moments {
            count,
            mean: self.shift + step,
            // `<`, not `max`: NaN stays NaN.
            m2: if m2 < 0.0 { 0.0 } else { m2 },
            min: self.min,
            max: self.max,
        }
    }
}

impl<T: Number> ShiftedSums<T> {
    /// The count and `n·K + Σd` (`Σx`, up to rounding): what [`statistics_partial`]'s first
    /// block reduction adds up for the block's mean.
    #[inline(always)]
    fn total(self) -> Total {
        let count = self.count as f64;
        Total {
            count,
            sum: count.mul_add(self.shift, self.sum),
        }
    }

    /// These sums moved to the block's mean `c = Σx / N` (`block` is the block's [`Total`])
    /// and scaled by `N` and `N²`, so that no thread divides: with `v = N·K − Σx = N·(K − c)`
    /// (one rounding), `N·Σ(x − c) = N·Σd + n·v` and `N²·Σ(x − c)² = N²·Σd² + v·(2·N·Σd + n·v)`,
    /// from `Σ(d + u) = Σd + n·u` and `Σ(d + u)² = Σd² + u·(2·Σd + n·u)` for `u = K − c`.
    #[inline(always)]
    fn centred(self, block: Total) -> CentredSums<T> {
        let n = self.count as f64;
        let scaled_sum = self.sum * block.count;
        let v = self.shift.mul_add(block.count, -block.sum);
        CentredSums {
            sum: n.mul_add(v, scaled_sum),
            squares: v.mul_add(
                n.mul_add(v, 2.0 * scaled_sum),
                self.squares * (block.count * block.count),
            ),
            min: self.min,
            max: self.max,
        }
    }
}

/// A count and a sum of values: the first of [`statistics_partial`]'s block reductions.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Total {
    count: f64,
    sum: f64,
}

impl Total {
    const ZERO: Total = Total {
        count: 0.0,
        sum: 0.0,
    };

    #[inline(always)]
    fn add(self, other: Total) -> Total {
        Total {
            count: self.count + other.count,
            sum: self.sum + other.sum,
        }
    }
}

/// `N·Σ(x − c)`, `N²·Σ(x − c)²`, min and max of a thread's values, for the block's mean `c`
/// and count `N` ([`ShiftedSums::centred`]): the block's are the sums of its threads' (the
/// second of [`statistics_partial`]'s block reductions).
#[derive(Clone, Copy, Debug, PartialEq)]
struct CentredSums<T> {
    sum: f64,
    squares: f64,
    min: T,
    max: T,
}

impl<T: Number> CentredSums<T> {
    const EMPTY: CentredSums<T> = CentredSums {
        sum: 0.0,
        squares: 0.0,
        min: T::GREATEST,
        max: T::LEAST,
    };

    #[inline(always)]
    fn add(self, other: CentredSums<T>) -> CentredSums<T> {
        CentredSums {
            sum: self.sum + other.sum,
            squares: self.squares + other.squares,
            min: lower(self.min, other.min),
            max: higher(self.max, other.max),
        }
    }

    /// The block's [`Moments`] from its [`Total`] and these (summed over the block): with
    /// `s = Σ(x − c)`, the mean `(Σx + s) / N` (`c + s/N`: the exact mean when every value is
    /// the same) and `M2 = Σ(x − c)² − s²/N`, never below 0 (a rounding residue of equal values
    /// would be). Where `Σx` is infinite or NaN (a value is) it is the mean, `Σx / N`, with a
    /// NaN `M2`, as the two-pass f64 formulas give them (`∞ − ∞` in the second sum).
    #[inline(always)]
    fn moments(self, block: Total) -> Moments<T> {
        let n = block.count;
        if n == 0.0 {
            return Moments::EMPTY;
        }
        let (mean, m2) = if block.sum.is_finite() {
            let s = self.sum / n;
            let m2 = (self.squares / n - s * s) / n;
            // `<`, not `max`: NaN stays NaN.
            ((block.sum + s) / n, if m2 < 0.0 { 0.0 } else { m2 })
        } else {
            (block.sum / n, f64::NAN)
        };
        Moments {
            count: n,
            mean,
            m2,
            min: self.min,
            max: self.max,
        }
    }
}

/// The smaller of a running minimum `min` and `x`: `x` only if it is below (so never NaN, as
/// [`f32::min`]).
#[inline(always)]
fn lower<T: Number>(min: T, x: T) -> T {
    if x < min {
        x
    } else {
        min
    }
}

/// The larger of a running maximum `max` and `x`: `x` only if it is above.
#[inline(always)]
fn higher<T: Number>(max: T, x: T) -> T {
    if x > max {
        x
    } else {
        max
    }
}

/// The mean after `mean` moves by `step` toward `toward` (a value or another set's mean).
///
/// Once the mean is infinite the step is `±∞ − ±∞` or `finite − ∞`, which would make it NaN (the
/// mean of `[∞, 1]` came out NaN); `mean + toward` is what `Σx / n` gives then: `∞` for `∞` and
/// any finite value or `∞` again, NaN for `−∞` or NaN.
#[inline(always)]
fn moved_mean(mean: f64, step: f64, toward: f64) -> f64 {
    if mean.is_infinite() {
        mean + toward
    } else {
        mean + step
    }
}

/// One [`Moments`] per warp of a block, in shared memory (struct of arrays); `'b` is the block's.
#[derive(Clone, Copy)]
pub struct MomentsScratch<'b, T = f32> {
    count: Shared<'b, f64>,
    mean: Shared<'b, f64>,
    m2: Shared<'b, f64>,
    min: Shared<'b, T>,
    max: Shared<'b, T>,
}

impl<T: Number> BlockValue for Moments<T> {
    #[inline(always)]
    fn shfl_down(self, mask: u32, delta: u32) -> Self {
        Moments::shfl_down(self, mask, delta)
    }
}

impl<T: Number> BlockScratch<Moments<T>> for MomentsScratch<'_, T> {
    #[inline(always)]
    fn store(&self, warp: usize, state: Moments<T>) {
        self.count.set(warp, state.count);
        self.mean.set(warp, state.mean);
        self.m2.set(warp, state.m2);
        self.min.set(warp, state.min);
        self.max.set(warp, state.max);
    }
    #[inline(always)]
    fn load(&self, warp: usize) -> Moments<T> {
        Moments {
            count: self.count.get(warp),
            mean: self.mean.get(warp),
            m2: self.m2.get(warp),
            min: self.min.get(warp),
            max: self.max.get(warp),
        }
    }
}

/// One [`CentredSums`] per warp of a block, in shared memory; its first two arrays also hold
/// the warps' [`Total`]s, in the block reduction before.
#[derive(Clone, Copy)]
struct CentredScratch<'b, T> {
    sum: Shared<'b, f64>,
    squares: Shared<'b, f64>,
    min: Shared<'b, T>,
    max: Shared<'b, T>,
}

impl BlockValue for Total {
    #[inline(always)]
    fn shfl_down(self, mask: u32, delta: u32) -> Self {
        Total {
            count: warp::shfl_down_sync(mask, self.count, delta),
            sum: warp::shfl_down_sync(mask, self.sum, delta),
        }
    }
}

impl<T: Number> BlockScratch<Total> for CentredScratch<'_, T> {
    #[inline(always)]
    fn store(&self, warp: usize, total: Total) {
        self.sum.set(warp, total.count);
        self.squares.set(warp, total.sum);
    }
    #[inline(always)]
    fn load(&self, warp: usize) -> Total {
        Total {
            count: self.sum.get(warp),
            sum: self.squares.get(warp),
        }
    }
}

impl<T: Number> BlockValue for CentredSums<T> {
    #[inline(always)]
    fn shfl_down(self, mask: u32, delta: u32) -> Self {
        CentredSums {
            sum: warp::shfl_down_sync(mask, self.sum, delta),
            squares: warp::shfl_down_sync(mask, self.squares, delta),
            min: warp::shfl_down_sync(mask, self.min, delta),
            max: warp::shfl_down_sync(mask, self.max, delta),
        }
    }
}

impl<T: Number> BlockScratch<CentredSums<T>> for CentredScratch<'_, T> {
    #[inline(always)]
    fn store(&self, warp: usize, sums: CentredSums<T>) {
        self.sum.set(warp, sums.sum);
        self.squares.set(warp, sums.squares);
        self.min.set(warp, sums.min);
        self.max.set(warp, sums.max);
    }
    #[inline(always)]
    fn load(&self, warp: usize) -> CentredSums<T> {
        CentredSums {
            sum: self.sum.get(warp),
            squares: self.squares.get(warp),
            min: self.min.get(warp),
            max: self.max.get(warp),
        }
    }
}

/// Whether this is thread 0 of its block (linear index 0), where [`block::reduce`]'s result is.
#[inline(always)]
fn first_thread() -> bool {
    warp::warp_id() == 0 && warp::lane_id() == 0
}

/// Writes at `partial[STATE_LEN·block ..][.. STATE_LEN]` the [`Moments`] (count, mean, M2, min,
/// max) of the elements of `x` this block's threads visit (grid-stride); `partial` needs
/// [`STATE_LEN`] elements per block. [`statistics_merge`] combines them.
///
/// The threads' [`ShiftedSums`] have shifts of their own, so the block does not add them up as
/// they are; nor does it merge them with Chan's formula, whose division per merge put
/// `div.rn.f64`'s slow path above the warp tree's live values (48 registers on sm_90, against
/// CUDA C's 40). Two block reductions of plain sums instead: the count `N` and `Σx`, which
/// thread 0 shares; then every thread moves its sums to the block's mean `c = Σx / N`
/// ([`ShiftedSums::centred`]: scaled by `N`, so that no thread divides, and
/// `Σ(x − c)² = M2 + N·(mean − c)²` is within rounding of `M2`, whatever the data: `c` is the
/// mean, not a value that could be an outlier), and thread 0 turns their sums into the state
/// ([`CentredSums::moments`]: three divisions, only there).
#[kernel(instances(f32 as statistics_partial, f64))]
pub fn statistics_partial<T: Number>(x: &[T], partial: Out<f64>) {
    let scratch = CentredScratch {
        sum: shared!([f64; MAX_WARPS]),
        squares: shared!([f64; MAX_WARPS]),
        min: shared!([T; MAX_WARPS]),
        max: shared!([T; MAX_WARPS]),
    };
    let shared_total = shared!([f64; 2]);
    let sums = thread::grid_stride_elements(x).fold(ShiftedSums::EMPTY, |sums, &v| sums.push(v));
    let total = block::reduce(sums.total(), Total::ZERO, scratch, Total::add);
    if first_thread() {
        shared_total.set(0, total.count);
        shared_total.set(1, total.sum);
    }
    // Also what lets the second reduction write `scratch` again (warp 0 has read it).
    thread::sync_threads();
    let total = Total {
        count: shared_total.get(0),
        sum: shared_total.get(1),
    };
    let centred = block::reduce(
        sums.centred(total),
        CentredSums::EMPTY,
        scratch,
        CentredSums::add,
    );
    if first_thread() {
        let state = centred.moments(total);
        state.store(&partial, thread::block_idx().x as usize);
    }
}

/// Merges the [`Moments`] in `partial` ([`STATE_LEN`] f64 each) that this block's threads visit
/// (grid-stride over states) and writes the result at `out[STATE_LEN·block ..]`. With one block,
/// `out[..STATE_LEN]` is the merge of all of them: the second pass after [`statistics_partial`].
/// `T` is the data's type (the states' min and max are `T` values); only the turbofish names it
/// (`statistics_merge::<f64>`).
#[kernel(instances(f32 as statistics_merge, f64))]
pub fn statistics_merge<T: Number>(partial: &[f64], out: Out<f64>) {
    let scratch = MomentsScratch {
        count: shared!([f64; MAX_WARPS]),
        mean: shared!([f64; MAX_WARPS]),
        m2: shared!([f64; MAX_WARPS]),
        min: shared!([T; MAX_WARPS]),
        max: shared!([T; MAX_WARPS]),
    };
    let states = partial.len() / STATE_LEN;
    let mut state = Moments::<T>::EMPTY;
    for i in thread::grid_stride(states) {
        state = state.merge(Moments::load(partial, i));
    }
    let total = block::reduce(state, Moments::EMPTY, scratch, Moments::merge);
    if thread::thread_idx().x == 0 {
        total.store(&out, thread::block_idx().x as usize);
    }
}
