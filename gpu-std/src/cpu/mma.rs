//! The CPU executor's tensor-core product: [`release`] completes a warp's `mma` rendezvous
//! (`warp_mma.rs`; the scheduler calls it when all 32 lanes have arrived): it gathers the
//! matrices, multiplies them in the documented order and writes each lane's result back, before
//! any lane runs on. Below the scheduler; also the split path's and `mma_tiles`' product.
//!
//! Here: a lane's rendezvous state ([`Lane`]), the release, the product by kind and a warp's
//! recent tiles ([`Tiles`]). In [`fragments`]: the lanes' registers and the gathers by the
//! fragment layouts. In [`fma`]: the f32 tile product all of them end in.

mod fma;
mod fragments;
#[cfg(test)]
mod tests;

pub(crate) use fma::{fma_tile, Matrix};
pub(crate) use fragments::{element, Operands};
use fragments::{gather, gather_a_halves, gather_b_halves, gather_c};

use super::waits::WARP;
use crate::tensor_core::Kind;
use half::slice::HalfFloatSliceExt;

/// One lane's operands and, after the release, its result: what a lane waiting in
/// [`super::warp_mma::mma`] points to.
pub(crate) struct Lane {
    pub(crate) operands: Operands,
    pub(crate) d: [u32; 4],
}

/// Completes the warp's `mma`: `lanes[l]` is lane `l`'s [`Lane`] pointer.
///
/// # Safety
/// Every pointer is a live `Lane` of a lane waiting in [`super::warp_mma::mma`], not otherwise accessed until it
/// is released (the scheduler calls this before it readies any of them).
pub(crate) unsafe fn release(kind: Kind, lanes: &[u64; WARP]) {
    // SAFETY: the caller's contract: live `Lane`s, read only here.
    let operands = lanes.map(|pointer| unsafe { (*(pointer as *const Lane)).operands });
    // The warp's product is the executor's work: off the simulated thread's stack.
    let d = super::stack_guard::on_step_stack(|| multiply(kind, &operands, None));
    for (&pointer, d) in lanes.iter().zip(d) {
        // SAFETY: as above; this is the only reference to it now.
        unsafe { (*(pointer as *mut Lane)).d = d };
    }
}

/// The warp's `mma`: each lane's part of D from every lane's operands. With `tiles` (the
/// warp's recent tiles, see [`Tiles`]), an f16 or bf16 A or B tile whose registers equal a
/// recent one's is taken from there instead of gathered and converted again.
pub(crate) fn multiply(
    kind: Kind,
    lanes: &[Operands; WARP],
    tiles: Option<&mut Tiles>,
) -> [[u32; 4]; WARP] {
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    if super::features::has_avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, all `multiply_wide` enables.
        return unsafe { multiply_wide(kind, lanes, tiles) };
    }
    multiply_in_order(kind, lanes, tiles)
}

/// One warp's recently converted f16 and bf16 A and B tiles, by the registers they came from.
/// A kernel that keeps a tile of C per warp in several accumulators multiplies each A fragment
/// by several B fragments and each B by several A (the library's `matmul_tc`: each A four
/// times, each B twice per k-step), each a separate `mma`; the split path does each call site's
/// `mma` for every warp in turn, so a warp's next `mma` often has registers equal to a recent
/// one's, and the tile is then already gathered and converted (about a third of a product's
/// instructions, callgrind, issue 32). Looked up by the registers themselves (and the kind),
/// never by where they came from, so a hit is the same tile by construction and the bits of D
/// are those of a fresh gather.
#[derive(Default)]
pub(crate) struct Tiles {
    a: Recent<[[u32; 4]; WARP], [[f32; 16]; 16], 2>,
    b: Recent<[[u32; 2]; WARP], [[f32; 8]; 16], 4>,
}

/// The last `N` values made, by key, the oldest replaced first.
struct Recent<K, V, const N: usize> {
    entries: [Option<(Kind, K, V)>; N],
    next: usize,
}

impl<K, V, const N: usize> Default for Recent<K, V, N> {
    fn default() -> Self {
        Recent {
            entries: core::array::from_fn(|_| None),
            next: 0,
        }
    }
}

impl<K: PartialEq, V, const N: usize> Recent<K, V, N> {
    /// The value for `(kind, key)`: a recent one, or `make()`'s, kept in place of the oldest.
    #[inline(always)]
    fn get(&mut self, kind: Kind, key: K, make: impl FnOnce() -> V) -> &V {
        let found = self
            .entries
            .iter()
            .position(|e| matches!(e, Some((k, held, _)) if *k == kind && *held == key));
        let i = match found {
            Some(i) => i,
            None => {
                let i = self.next;
                self.next = (i + 1) % N;
                self.entries[i] = Some((kind, key, make()));
                i
            }
        };
        match &self.entries[i] {
            Some((_, _, value)) => value,
            None => unreachable!("entry {i} was just found or filled"),
        }
    }
}

/// [`multiply_in_order`] compiled for AVX2 and FMA: each step of the k-sum is then one vector
/// FMA over a row of D instead of eight calls of libm's `fmaf` (for crates built without
/// ferrocuda's `x86-64-v3`).
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
#[target_feature(enable = "avx2,fma")]
unsafe fn multiply_wide(
    kind: Kind,
    lanes: &[Operands; WARP],
    tiles: Option<&mut Tiles>,
) -> [[u32; 4]; WARP] {
    multiply_in_order(kind, lanes, tiles)
}

/// The warp's `mma` as a whole 16×8 tile, k outermost: element (r, c) starts at C's and adds
/// `a[r][k]·b[k][c]` for k = 0, 1, … in order, one f32 FMA each. That is the documented order
/// element by element (the bits of a dot product per element), while each step is a row of
/// eight independent FMAs (one vector instruction) instead of one long chain of dependent ones.
///
/// The gather is by kind, each arm with its layout known when compiled (for f16 and bf16,
/// [`gather_a_halves`] and [`gather_b_halves`]). Looked up per element at run time (the kind, each position), the gather took about 70% of
/// a matrix product's time on the CPU executor (perf, issue 32).
#[inline(always)]
fn multiply_in_order(
    kind: Kind,
    lanes: &[Operands; WARP],
    tiles: Option<&mut Tiles>,
) -> [[u32; 4]; WARP] {
    let c = gather_c(lanes);
    let d = match kind {
        Kind::F16 => halves_product(kind, lanes, c, tiles, |bits, out| {
            let halves: &[half::f16] = bytemuck::cast_slice(bits);
            halves.convert_to_f32_slice(out);
        }),
        Kind::Bf16 => halves_product(kind, lanes, c, tiles, |bits, out| {
            for (out, &bits) in out.iter_mut().zip(bits) {
                *out = half::bf16::from_bits(bits).to_f32();
            }
        }),
        Kind::Tf32 => {
            let (a, b) = gather::<8>(Kind::Tf32, lanes);
            float_product(&a, &b, c)
        }
        Kind::S8 => {
            let (a, b) = gather::<32>(Kind::S8, lanes);
            integer_product(&a, &b, c)
        }
        Kind::U8 => {
            let (a, b) = gather::<32>(Kind::U8, lanes);
            integer_product(&a, &b, c)
        }
    };
    core::array::from_fn(|lane| {
        let (g, t) = (lane / 4, lane % 4);
        [
            d[g][2 * t],
            d[g][2 * t + 1],
            d[g + 8][2 * t],
            d[g + 8][2 * t + 1],
        ]
    })
}

/// The f16 or bf16 product `a·b + c`, A and B gathered by [`gather_a_halves`] and
/// [`gather_b_halves`] with `convert`, or taken from `tiles` where recent.
#[inline(always)]
fn halves_product(
    kind: Kind,
    lanes: &[Operands; WARP],
    c: [[u32; 8]; 16],
    tiles: Option<&mut Tiles>,
    convert: impl Fn(&[u16], &mut [f32]),
) -> [[u32; 8]; 16] {
    match tiles {
        Some(tiles) => {
            let a = tiles.a.get(kind, lanes.map(|l| l.a), || {
                gather_a_halves(lanes, &convert)
            });
            let b = tiles.b.get(kind, lanes.map(|l| l.b), || {
                gather_b_halves(lanes, &convert)
            });
            float_product(a, b, c)
        }
        None => float_product(
            &gather_a_halves(lanes, &convert),
            &gather_b_halves(lanes, &convert),
            c,
        ),
    }
}

/// `a·b + c` in f32, k outermost, one FMA per product (see [`multiply_in_order`]): one
/// [`fma_tile`].
#[inline(always)]
fn float_product<const K: usize>(
    a: &[[f32; K]; 16],
    b: &[[f32; 8]; K],
    c: [[u32; 8]; 16],
) -> [[u32; 8]; 16] {
    let mut sum = c.map(|row| row.map(f32::from_bits));
    let c = Matrix {
        rows: 16,
        cols: 8,
        stride: 8,
    };
    fma_tile(
        a.as_flattened(),
        K,
        b.as_flattened(),
        8,
        sum.as_flattened_mut(),
        c,
        K,
    );
    sum.map(|row| row.map(f32::to_bits))
}

/// `a·b + c` for integers: the products are exact in f32 (|a·b| <= 2^14), the sum in i64,
/// wrapped to 32 bits.
#[inline(always)]
fn integer_product<const K: usize>(
    a: &[[f32; K]; 16],
    b: &[[f32; 8]; K],
    c: [[u32; 8]; 16],
) -> [[u32; 8]; 16] {
    let sum = k_outermost(
        a,
        b,
        c.map(|row| row.map(|v| i64::from(v as i32))),
        |s, x, y| s + (x * y) as i64,
    );
    sum.map(|row| row.map(|v| v as i32 as u32))
}

/// `sum` with `a[r][k]·b[k][c]` added to element (r, c) by `add(sum, a, b)` for k = 0, 1, … in
/// order (the documented order of the k-sum).
#[inline(always)]
fn k_outermost<S: Copy, const K: usize>(
    a: &[[f32; K]; 16],
    b: &[[f32; 8]; K],
    mut sum: [[S; 8]; 16],
    add: impl Fn(S, f32, f32) -> S,
) -> [[S; 8]; 16] {
    for (depth, b_row) in b.iter().enumerate() {
        for (s, a_row) in sum.iter_mut().zip(a) {
            let x = a_row[depth];
            for (s, &y) in s.iter_mut().zip(b_row) {
                *s = add(*s, x, y);
            }
        }
    }
    sum
}
