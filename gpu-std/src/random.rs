//! Counter-based random numbers for kernels: Philox4x32-10 (Salmon, Moraes, Dror and Shaw,
//! "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the Random123 library), and turning
//! its 32-bit words into uniform and normal f32.
//!
//! A counter-based generator has no state to carry or split: the random words for sample `j` are
//! a pure function of `(key, counter)`, with the key from the seed and the counter from `j`. Any
//! thread can compute any sample, so a kernel's result does not depend on how the samples are
//! spread over blocks and threads, and the GPU and the CPU executor produce the same numbers
//! (only 32-bit integer multiplies, xors and adds; the conversions below are exact or use the
//! accurate [`math`] functions, which give the same bits on both).
//!
//! ```
//! use ferrocuda_std::random::{normal_pair, uniform_open_closed, Philox4x32};
//! let rng = Philox4x32::from_seed(42);
//! let [a, b, c, d] = rng.block([7, 0, 0, 0]); // the words of sample 7
//! let u = uniform_open_closed(a); // in (0, 1]
//! let (z0, z1) = normal_pair(b, c); // two independent N(0, 1)
//! # let _ = (u, z0, z1, d);
//! ```

use crate::math;

/// Philox4x32's multipliers and key increments (Random123's `PHILOX_M4x32_0/1`,
/// `PHILOX_W32_0/1`: the golden ratio and √3 - 1 in 32-bit fixed point).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Rounds of the standard Philox4x32-10.
pub const ROUNDS: usize = 10;

/// The Philox4x32-10 bijection for one key: [`block`](Self::block) maps a 128-bit counter to 128
/// random bits. It passes BigCrush (Salmon et al. 2011) and has period 2^128 per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Philox4x32 {
    key: [u32; 2],
}

/// The high and low 32 bits of `a · b`.
///
/// On the GPU one `mul.wide.u32` (SASS `IMAD.WIDE.U32`) split into its halves in one `asm!`:
/// written as a `u64` product, LLVM kept the whole Philox state in 64-bit registers (its xors
/// and masks too), and ptxas made each multiply of two zero-extended values three instructions.
#[inline(always)]
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    // The same value on both: the GPU's `asm!` is only the code ptxas should see.
    #[cfg(target_arch = "nvptx64")]
    {
        let (hi, lo): (u32, u32);
        // SAFETY: register arithmetic; touches no memory.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 %wide; mul.wide.u32 %wide, {a}, {b}; mov.b64 {{{lo}, {hi}}}, %wide; }}",
                a = in(reg32) a,
                b = in(reg32) b,
                lo = out(reg32) lo,
                hi = out(reg32) hi,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        (hi, lo)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let product = a as u64 * b as u64;
        ((product >> 32) as u32, product as u32)
    }
}

impl Philox4x32 {
    /// The generator for a 64-bit key, given as two words (Random123's `key[0]`, `key[1]`).
    #[inline(always)]
    pub const fn new(key: [u32; 2]) -> Self {
        Philox4x32 { key }
    }

    /// The generator for a 64-bit seed: key `[low 32 bits, high 32 bits]`.
    #[inline(always)]
    pub const fn from_seed(seed: u64) -> Self {
        Self::new([seed as u32, (seed >> 32) as u32])
    }

    /// The key.
    #[inline(always)]
    pub const fn key(&self) -> [u32; 2] {
        self.key
    }

    /// The four random words for `counter`: ten Philox rounds, the key bumped by the Weyl
    /// increments between them. Equal to Random123's `philox4x32(counter, key)`.
    #[inline(always)]
    pub fn block(&self, counter: [u32; 4]) -> [u32; 4] {
        let mut c = counter;
        let mut k = self.key;
        let mut round = 0;
        while round < ROUNDS {
            if round > 0 {
                k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
            }
            let (hi0, lo0) = mul_hi_lo(M0, c[0]);
            let (hi1, lo1) = mul_hi_lo(M1, c[2]);
            c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
            round += 1;
        }
        c
    }

    /// The words for a 64-bit sample index and a 64-bit stream (which separates independent
    /// uses of one seed): counter `[index low, index high, stream low, stream high]`.
    #[inline(always)]
    pub fn block_at(&self, index: u64, stream: u64) -> [u32; 4] {
        self.block([
            index as u32,
            (index >> 32) as u32,
            stream as u32,
            (stream >> 32) as u32,
        ])
    }
}

/// 2^-24: the spacing of the uniform grids below.
const TWO_POW_M24: f32 = 5.960_464_5e-8;

/// A uniform f32 in (0, 1] from a random word: one of the 2^24 values k·2^-24, k = 1..=2^24,
/// each equally likely (from the top 24 bits), exactly. Never 0, so `ln` of it is finite.
#[inline(always)]
pub fn uniform_open_closed(word: u32) -> f32 {
    ((word >> 8) + 1) as f32 * TWO_POW_M24
}

/// A uniform f32 in [0, 1) from a random word: one of the 2^24 values k·2^-24, k = 0..2^24,
/// each equally likely (from the top 24 bits), exactly. Never 1.
#[inline(always)]
pub fn uniform_closed_open(word: u32) -> f32 {
    (word >> 8) as f32 * TWO_POW_M24
}

/// Two independent standard normal f32 from two random words (Box-Muller):
/// r = √(-2 ln v), θ = 2πw, `(r cos θ, r sin θ)`.
///
/// v = word0·2^-32 + 2^-33 (word0 rounded to 24 bits, the sum rounded once) is in [2^-33, 1],
/// with the full 32 bits' resolution near 0, so |z| reaches 6.77 (the normal distribution has
/// 1.3·10^-11 beyond); w = the top 24 bits of word1 times 2^-24, and 2πw goes exactly into
/// [`math::sincospi`]. Built from the accurate math: the same bits on the GPU and the CPU.
#[inline(always)]
pub fn normal_pair(word0: u32, word1: u32) -> (f32, f32) {
    const TWO_POW_M32: f32 = 2.328_306_4e-10;
    const TWO_POW_M33: f32 = 1.164_153_2e-10;
    let v = math::fma(word0 as f32, TWO_POW_M32, TWO_POW_M33);
    let r = math::sqrt(-2.0 * math::ln(v));
    // 2w = (word1 >> 8)·2^-23, in [0, 2).
    let (sin, cos) = math::sincospi((word1 >> 8) as f32 * (2.0 * TWO_POW_M24));
    (r * cos, r * sin)
}
