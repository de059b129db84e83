//! Tensor cores: warp-level matrix multiply-accumulate, `D = A·B + C` on a 16×8 tile, with the
//! PTX `mma.sync.aligned` shapes (sm_80 and newer):
//!
//! | input `T` | shape (M×N×K) | [`FragA`] (16×K) | [`FragB`] (K×8) | [`FragC`] |
//! |---|---|---|---|---|
//! | [`f16`](struct@crate::half::f16), [`bf16`](struct@crate::half::bf16) | m16n8k16 | 8 elements per lane | 4 | 4 × `f32` |
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

mod acc_tile;
mod fragment;
pub(crate) mod product;
pub use fragment::{FragA, FragB, FragC, Kind, MmaInput};
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub use product::__split_mma;
pub use product::mma;

#[cfg(target_arch = "nvptx64")]
mod ptx;
mod tile;
mod warp_tile;
pub use acc_tile::AccTile;
pub use tile::SharedTile;
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub use warp_tile::__split_mma_tiles;
pub use warp_tile::mma_tiles;

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod tile_product;
