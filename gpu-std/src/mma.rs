//! Tensor cores: warp-level matrix multiply-accumulate, `D = A·B + C` on a 16×8 tile, with the
//! PTX `mma.sync.aligned` shapes (sm_80 and newer):
//!
//! | input `T` | shape (M×N×K) | [`FragA`] (16×K) | [`FragB`] (K×8) | [`FragC`] |
//! |---|---|---|---|---|
//! | [`f16`](struct@f16), [`bf16`] | m16n8k16 | 8 elements per lane | 4 | 4 × `f32` |
//! | `f32`, used as tf32 | m16n8k8 | 4 | 2 | 4 × `f32` |
//! | `i8`, `u8` | m16n8k32 | 16 | 8 | 4 × `i32` |
//!
//! A fragment is the part of a matrix one lane holds; the 32 lanes of a warp together hold the
//! whole matrix, in the PTX ISA's layout. With `g = lane / 4` and `t = lane % 4`, element `i`
//! of a lane's fragment is at (row, column):
//!
//! ```text
//! f16/bf16  A: (g + 8·(i/2 % 2), 2t + i%2 + 8·(i/4))   B: (2t + i%2 + 8·(i/2), g)
//! tf32      A: (g + 8·(i%2),     t + 4·(i/2))          B: (t + 4·i, g)
//! i8/u8     A: (g + 8·(i/4 % 2), 4t + i%4 + 16·(i/8))  B: (4t + i%4 + 16·(i/4), g)
//! all       C, D: (g + 8·(i/2), 2t + i%2)
//!
//! C/D (16×8), lane numbers:       A (f16, 16×16), lane holding each pair of columns:
//!      col 0,1  2,3  4,5  6,7           cols 0,1 2,3 4,5 6,7 | 8,9 … 14,15
//! row 0    0    1    2    3        row 0    0   1   2   3  |  0  …   3   (elements 4,5)
//! row 1    4    5    6    7        row 1    4   5   6   7  |  4  …   7
//!  …                                …
//! row 7   28   29   30   31        row 7   28  29  30  31  | 28  …  31
//! row 8    0    1    2    3        row 8    0   1   2   3  |  0  …   3   (elements 6,7)
//!  …                                …      (elements 2,3)
//! ```
//!
//! [`FragA::position`], [`FragB::position`] and [`FragC::position`] give the same; kernels rarely
//! need them: [`FragA::load`] and friends read a row-major tile, [`FragC::for_each`] hands out
//! each element with its place.
//!
//! From shared memory, [`SharedTile`] is the way to load many fragments: a window of a shared
//! array (a warp's part of one stage of a tiled product) checked once when it is made, whose
//! [`frag_a`](SharedTile::frag_a) and [`frag_b`](SharedTile::frag_b) check only their place in
//! the window (nothing left to check when the place is a constant) and address it in 32 bits.
//! A range check before each `ldmatrix`, as [`FragA::load_shared`] alone would make, costs
//! instructions in the k-step of a matrix product, and its branch in front of the warp-wide
//! instruction makes ptxas add reconvergence code (`BSSY`, `WARPSYNC`).
//!
//! [`mma`] is a warp collective: all 32 lanes of the warp must call it, with the same types (a
//! block's size must be a multiple of 32). On the CPU executor a lane that does not reach it is
//! reported as warp divergence, as for the other warp operations.
//!
//! # Arithmetic
//! The k-sum's order is left open by the PTX ISA. The CPU executor (and the PTX emulator) start
//! from `c` and add the products for `k = 0, 1, …` in order, each step one f32 fused
//! multiply-add (the product of two inputs is exact in f32): the result is within
//! `K · 2^-24 · (|c| + Σ|a·b|)` of the exact one, and so is a GPU's. tf32 uses the 19 high bits
//! of each `f32` (10 fraction bits: the low 13 are ignored; round first with your own code if
//! you want nearest). Integers: exact, wrapping at 32 bits.
//!
//! # Target
//! PTX with these instructions needs sm_80: build the kernel crate with
//! `ferrocuda_builder::PtxBuilder::arch("sm_80")` (or newer); loading that PTX on an older GPU
//! is `Error::GpuTooOld` on the host, before any launch.

use crate::half::{bf16, f16};
use crate::shared::Shared;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// The input element types of [`mma`]: [`f16`](struct@f16), [`bf16`], `f32` (as tf32), `i8`, `u8`.
pub trait MmaInput: bytemuck::Pod + sealed::Sealed {
    /// The accumulator type: `f32`, or `i32` for the integer inputs.
    type Acc: bytemuck::Pod + Default;
    /// The depth K of one `mma` (16, 8 or 32).
    const K: usize;
    #[doc(hidden)]
    const KIND: Kind;
    #[doc(hidden)]
    fn to_bits(self) -> u32;
}

#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    F16,
    Bf16,
    Tf32,
    S8,
    U8,
}

impl Kind {
    /// Bits per element in a register.
    const fn bits(self) -> usize {
        match self {
            Kind::F16 | Kind::Bf16 => 16,
            Kind::Tf32 => 32,
            Kind::S8 | Kind::U8 => 8,
        }
    }
}

macro_rules! mma_input {
    ($($t:ty => $acc:ty, $k:literal, $kind:ident, |$v:ident| $bits:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl MmaInput for $t {
            type Acc = $acc;
            const K: usize = $k;
            const KIND: Kind = Kind::$kind;
            #[inline(always)]
            fn to_bits(self) -> u32 {
                let $v = self;
                $bits
            }
        }
    )*};
}
mma_input! {
    f16 => f32, 16, F16, |v| v.to_bits() as u32;
    bf16 => f32, 16, Bf16, |v| v.to_bits() as u32;
    f32 => f32, 8, Tf32, |v| v.to_bits();
    i8 => i32, 32, S8, |v| v as u8 as u32;
    u8 => i32, 32, U8, |v| v as u32;
}

/// This lane's part of the 16×K matrix A (row-major), for [`mma`].
#[derive(Clone, Copy)]
pub struct FragA<T> {
    pub(crate) regs: [u32; 4],
    _t: PhantomData<T>,
}

/// This lane's part of the K×8 matrix B, for [`mma`].
#[derive(Clone, Copy)]
pub struct FragB<T> {
    pub(crate) regs: [u32; 2],
    _t: PhantomData<T>,
}

/// This lane's 4 elements of the 16×8 accumulator C (or result D) of [`mma`].
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct FragC<A> {
    /// The elements, `i` at [`FragC::position`]`(lane, i)`.
    pub values: [A; 4],
}

/// This lane's `n` fragment elements packed into registers: element `i` is
/// `element(position(kind, lane, i))`.
#[inline(always)]
fn pack<T: MmaInput, const R: usize>(
    n: usize,
    position: fn(Kind, usize, usize) -> (usize, usize),
    mut element: impl FnMut(usize, usize) -> T,
) -> [u32; R] {
    let lane = crate::warp::lane_id() as usize;
    let bits = T::KIND.bits();
    let per = 32 / bits;
    let mut regs = [0u32; R];
    for i in 0..n {
        let (r, c) = position(T::KIND, lane, i);
        regs[i / per] |= element(r, c).to_bits() << (bits * (i % per));
    }
    regs
}

/// What [`FragA`] and [`FragB`] have in common: their layout functions, `from_fn` and `load`
/// from a slice.
macro_rules! fragment {
    ($frag:ident, $matrix:literal, $tile:literal, $regs:literal, $position:ident,
     elements: $elements:expr) => {
        impl<T: MmaInput> $frag<T> {
            /// Elements per lane.
            pub const ELEMENTS: usize = $elements;

            #[doc = concat!("Where element `i` of `lane`'s fragment sits in ", $matrix, ": (row, column).")]
            #[inline(always)]
            pub fn position(lane: u32, i: usize) -> (usize, usize) {
                $position(T::KIND, lane as usize, i)
            }

            /// The fragment of the matrix whose element (row, column) is `element(row, column)`:
            /// called for this lane's elements only.
            #[inline(always)]
            pub fn from_fn(element: impl FnMut(usize, usize) -> T) -> Self {
                $frag {
                    regs: pack::<T, $regs>(Self::ELEMENTS, $position, element),
                    _t: PhantomData,
                }
            }

            #[doc = concat!("The fragment of the row-major ", $tile, " tile at `tile[0]`, `row_stride` elements between rows.")]
            ///
            /// # Panics
            /// If the tile reaches past the slice (on the GPU: traps).
            #[inline(always)]
            #[track_caller]
            pub fn load(tile: &[T], row_stride: usize) -> Self {
                Self::from_fn(|r, c| tile[r * row_stride + c])
            }
        }
    };
}

fragment!(FragA, "A", "16×K", 4, a_position, elements: 16 * T::K / 32);
fragment!(FragB, "B", "K×8", 2, b_position, elements: T::K * 8 / 32);

impl<T: MmaInput> FragA<T> {
    /// The fragment of the row-major 16×K tile at element `start` of a shared array: the
    /// [`SharedTile`] of that one tile, checked, and its [`frag_a`](SharedTile::frag_a). On the
    /// GPU, f16 and bf16 tiles whose rows start 16-byte aligned (`start` and `row_stride`
    /// multiples of 8) load with one `ldmatrix.x4`. A kernel that loads many fragments from one
    /// stage makes the stage's `SharedTile` once instead (one range check for all of them).
    ///
    /// # Panics
    /// If the tile reaches past the array (on the GPU: traps). In CPU checked mode, also on a
    /// race or a read of an element no thread has written.
    #[inline(always)]
    #[track_caller]
    pub fn load_shared(tile: &Shared<T>, start: usize, row_stride: usize) -> Self {
        SharedTile::new(*tile, start, (16, T::K), row_stride).frag_a(0, 0)
    }
}

impl<T: MmaInput> FragB<T> {
    /// The fragment of the row-major K×8 tile at element `start` of a shared array (its
    /// [`SharedTile`]'s [`frag_b`](SharedTile::frag_b)). On the GPU, f16 and bf16 tiles with
    /// 16-byte aligned rows load with one `ldmatrix.x2.trans`.
    ///
    /// # Panics
    /// As [`FragA::load_shared`].
    #[inline(always)]
    #[track_caller]
    pub fn load_shared(tile: &Shared<T>, start: usize, row_stride: usize) -> Self {
        SharedTile::new(*tile, start, (T::K, 8), row_stride).frag_b(0, 0)
    }
}

impl<A: bytemuck::Pod + Default> FragC<A> {
    /// All zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        FragC {
            values: [A::default(); 4],
        }
    }

    /// Where element `i` of `lane`'s fragment sits in the 16×8 tile: (row, column).
    #[inline(always)]
    pub fn position(lane: u32, i: usize) -> (usize, usize) {
        c_position(lane as usize, i)
    }

    /// The fragment of the tile whose element (row, column) is `element(row, column)`.
    #[inline(always)]
    pub fn from_fn(mut element: impl FnMut(usize, usize) -> A) -> Self {
        let lane = crate::warp::lane_id();
        FragC {
            values: core::array::from_fn(|i| {
                let (r, c) = Self::position(lane, i);
                element(r, c)
            }),
        }
    }

    /// Calls `f(row, column, value)` for each of this lane's elements.
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize, usize, A)) {
        let lane = crate::warp::lane_id();
        for (i, &v) in self.values.iter().enumerate() {
            let (r, c) = Self::position(lane, i);
            f(r, c, v);
        }
    }
}

#[inline(always)]
fn a_position(kind: Kind, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match kind {
        Kind::F16 | Kind::Bf16 => (g + 8 * (i / 2 % 2), 2 * t + i % 2 + 8 * (i / 4)),
        Kind::Tf32 => (g + 8 * (i % 2), t + 4 * (i / 2)),
        Kind::S8 | Kind::U8 => (g + 8 * (i / 4 % 2), 4 * t + i % 4 + 16 * (i / 8)),
    }
}

#[inline(always)]
fn b_position(kind: Kind, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match kind {
        Kind::F16 | Kind::Bf16 => (2 * t + i % 2 + 8 * (i / 2), g),
        Kind::Tf32 => (t + 4 * i, g),
        Kind::S8 | Kind::U8 => (4 * t + i % 4 + 16 * (i / 4), g),
    }
}

#[inline(always)]
fn c_position(lane: usize, i: usize) -> (usize, usize) {
    (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
}

/// `a·b + c` for the warp's 16×8 tile (PTX `mma.sync.aligned`): every lane of the warp must call
/// it (a warp collective), each with its own fragments; each gets its part of the result.
#[inline(always)]
#[track_caller]
pub fn mma<T: MmaInput>(a: &FragA<T>, b: &FragB<T>, c: &FragC<T::Acc>) -> FragC<T::Acc> {
    let c_bits: [u32; 4] = core::array::from_fn(|i| bytemuck::cast(c.values[i]));
    #[cfg(target_arch = "nvptx64")]
    let d = ptx::mma(T::KIND, a.regs, b.regs, c_bits);
    #[cfg(not(target_arch = "nvptx64"))]
    let d = host::mma(T::KIND, a.regs, b.regs, c_bits);
    FragC {
        values: d.map(bytemuck::cast),
    }
}

/// What `#[kernel]`'s split path calls instead of [`mma`] in `let d = mma(..);` (or
/// `d = mma(..);`): this thread's operands, which the block's step multiplies with its warp's
/// (`cpu::collective::MmaCollective`) without suspending any thread.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn __split_mma<T: MmaInput>(
    a: &FragA<T>,
    b: &FragB<T>,
    c: &FragC<T::Acc>,
) -> crate::cpu::collective::MmaParts<T> {
    crate::cpu::collective::MmaParts {
        operands: host::Operands {
            a: a.regs,
            b: b.regs,
            c: core::array::from_fn(|i| bytemuck::cast(c.values[i])),
        },
        _t: PhantomData,
    }
}

#[cfg(target_arch = "nvptx64")]
mod ptx;
mod tile;
mod warp_tile;
pub use tile::SharedTile;
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub use warp_tile::__split_mma_tiles;
pub use warp_tile::{mma_tiles, AccTile};

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod tile_product;
