//! The CPU executor's [`super::mma_tiles`] for a whole warp at once (the split path's step,
//! `split_steps::collective::MmaTilesCollective`): the A and B windows are read straight from shared
//! memory and converted once, the warp's accumulators gathered into one tile, and each 16×8
//! band multiplied with one k-chain per element over the whole depth. That is what the
//! fragment-by-fragment form computes (each element adds its products for k = 0, 1, … in order,
//! one f32 FMA each, the result of one `mma` being the next one's C), so the bits are the same,
//! without gathering each fragment from 32 lanes' registers once per `mma`.

use super::acc_tile::AccTile;
use super::fragment::MmaInput;
use crate::cpu::mma::{element, fma_tile, multiply, Matrix, Operands};
use crate::cpu::{Release, Wait, WarpOp, WARP};
use crate::tensor_core::{a_position, b_position, Kind};
use core::cell::RefCell;
use core::marker::PhantomData;
use core::panic::Location;
use half::slice::HalfFloatSliceExt;
use std::format;
use std::string::String;
use std::vec::Vec;

/// A shared window as a lane hands it to the split path's step: element (0, 0)'s address, the
/// shape and the distance between rows (elements). Made from a checked
/// [`SharedTile`](super::SharedTile) only; read only after [`Window::is_live`].
pub(crate) struct Window<T> {
    pub(crate) first: *const T,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) row_stride: usize,
}

// By hand: derived, they would ask `T` for `Clone`, `Copy` and `PartialEq` too.
impl<T> Clone for Window<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Window<T> {}

impl<T> PartialEq for Window<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.first, self.rows, self.cols, self.row_stride)
            == (other.first, other.rows, other.cols, other.row_stride)
    }
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            first: core::ptr::null(),
            rows: 0,
            cols: 0,
            row_stride: 0,
        }
    }
}

impl<T: MmaInput> Window<T> {
    /// Whether the whole window lies in shared memory this OS thread's blocks hold now: what
    /// makes reading it sound, whoever made the window and however long ago.
    fn is_live(&self) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        let elements = (self.rows - 1)
            .checked_mul(self.row_stride)
            .and_then(|e| e.checked_add(self.cols));
        elements
            .and_then(|e| e.checked_mul(core::mem::size_of::<T>()))
            .is_some_and(|bytes| crate::cpu::shared_holds(self.first.cast(), bytes))
    }

    /// Row `row` of the window.
    ///
    /// # Safety
    /// The window [`is_live`](Self::is_live) (and no one writes it while the slice lives), and
    /// `row < rows`.
    unsafe fn row(&self, row: usize) -> &[T] {
        // SAFETY: the caller's contract: the row's `cols` elements lie in live shared memory,
        // aligned for `T` (a `Shared<T>`'s), which nothing writes meanwhile (one OS thread runs
        // the block, and it is in the step).
        unsafe { core::slice::from_raw_parts(self.first.add(row * self.row_stride), self.cols) }
    }
}

/// One thread's operands of an `mma_tiles` on the split path (what `mma::__split_mma_tiles`
/// returns): its two windows and its accumulators.
#[doc(hidden)]
pub struct MmaTilesParts<T: MmaInput, const MT: usize, const NT: usize> {
    pub(crate) a: Window<T>,
    pub(crate) b: Window<T>,
    pub(crate) c: AccTile<T::Acc, MT, NT>,
    _t: PhantomData<T>,
}

// By hand: derived, they would ask `T` for `Clone`, `Copy` and `Default` too.
impl<T: MmaInput, const MT: usize, const NT: usize> Clone for MmaTilesParts<T, MT, NT> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: MmaInput, const MT: usize, const NT: usize> Copy for MmaTilesParts<T, MT, NT> {}

impl<T: MmaInput, const MT: usize, const NT: usize> Default for MmaTilesParts<T, MT, NT> {
    fn default() -> Self {
        MmaTilesParts::new(Window::default(), Window::default(), AccTile::zero())
    }
}

impl<T: MmaInput, const MT: usize, const NT: usize> MmaTilesParts<T, MT, NT> {
    pub(crate) fn new(a: Window<T>, b: Window<T>, c: AccTile<T::Acc, MT, NT>) -> Self {
        MmaTilesParts {
            a,
            b,
            c,
            _t: PhantomData,
        }
    }
}

/// Why a warp's `mma_tiles` cannot be done: its lanes give different windows (the GPU's lanes
/// would do different numbers of `mma`s, or `ldmatrix` would give a lane rows another lane
/// addressed), or a window is not live shared memory.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Refused {
    Windows { lane: usize },
    NotShared { lane: usize },
}

impl Refused {
    /// The lane it is about, and what is wrong, for a report of the call `name` at `site` by
    /// warp `warp`.
    pub(crate) fn describe(self, warp: usize, site: &Location<'_>) -> (usize, String) {
        match self {
            Refused::Windows { lane } => (
                lane,
                format!(
                    "lane {lane} of warp {warp} calls mma::mma_tiles at {site} with other windows \
                     than lane 0: a warp's lanes must multiply the same windows (on the GPU its \
                     lanes would do different numbers of mma, or ldmatrix would hand a lane \
                     rows another lane addressed)"
                ),
            ),
            Refused::NotShared { lane } => (
                lane,
                format!(
                    "lane {lane} of warp {warp} calls mma::mma_tiles at {site} with a window \
                     that is not this block's shared memory"
                ),
            ),
        }
    }
}

/// The buffers of a warp's step, kept from step to step.
#[derive(Default)]
pub(crate) struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

/// The warp's `mma_tiles`: `out[l]` is lane `l`'s D from every lane's `lanes[l]`, which must
/// all give the same windows. The windows are checked ([`Window::is_live`]) before anything is
/// read.
pub(crate) fn warp_product<T: MmaInput, const MT: usize, const NT: usize>(
    lanes: &[MmaTilesParts<T, MT, NT>; WARP],
    out: &mut [AccTile<T::Acc, MT, NT>; WARP],
    scratch: &mut Scratch,
) -> Result<(), Refused> {
    let (a, b) = (lanes[0].a, lanes[0].b);
    if let Some(lane) = lanes.iter().position(|l| l.a != a || l.b != b) {
        return Err(Refused::Windows { lane });
    }
    if !a.is_live() || !b.is_live() {
        return Err(Refused::NotShared { lane: 0 });
    }
    match T::KIND {
        Kind::F16 | Kind::Bf16 | Kind::Tf32 => {
            #[cfg(all(
                target_arch = "x86_64",
                not(all(target_feature = "avx2", target_feature = "fma"))
            ))]
            if crate::cpu::has_avx2_and_fma() {
                // SAFETY: the CPU has AVX2 and FMA, all `float_tiles_wide` enables; the windows
                // are live (above).
                unsafe { float_tiles_wide(lanes, out, scratch) };
                return Ok(());
            }
            // SAFETY: the windows are live (above).
            unsafe { float_tiles(lanes, out, scratch) };
        }
        // SAFETY: every lane's windows are live (above).
        _ => unsafe { lane_by_lane(lanes, out) },
    }
    Ok(())
}

/// [`float_tiles`] compiled for AVX2 and FMA (see `cpu::mma::multiply_wide`).
///
/// # Safety
/// The CPU has AVX2 and FMA; as [`float_tiles`].
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
#[target_feature(enable = "avx2,fma")]
unsafe fn float_tiles_wide<T: MmaInput, const MT: usize, const NT: usize>(
    lanes: &[MmaTilesParts<T, MT, NT>; WARP],
    out: &mut [AccTile<T::Acc, MT, NT>; WARP],
    scratch: &mut Scratch,
) {
    // SAFETY: the caller's contract.
    unsafe { float_tiles(lanes, out, scratch) }
}

/// The warp's D for f16, bf16 and tf32: A (16·MT × depth) and B (depth × 8·NT) converted to f32 once, C
/// gathered from the lanes, one [`fma_tile`] over the depth, D scattered back.
///
/// # Safety
/// Lane 0's windows are live ([`Window::is_live`]), and every lane's equal them.
#[inline(always)]
unsafe fn float_tiles<T: MmaInput, const MT: usize, const NT: usize>(
    lanes: &[MmaTilesParts<T, MT, NT>; WARP],
    out: &mut [AccTile<T::Acc, MT, NT>; WARP],
    scratch: &mut Scratch,
) {
    let (a, b) = (lanes[0].a, lanes[0].b);
    let depth = a.cols;
    let width = 8 * NT;
    scratch.a.resize(a.rows * depth, 0.0);
    scratch.b.resize(depth * width, 0.0);
    for (r, to) in scratch.a.chunks_exact_mut(depth.max(1)).enumerate() {
        // SAFETY: the caller's contract; `r < rows`.
        convert::<T>(unsafe { a.row(r) }, to);
    }
    for (k, to) in scratch.b.chunks_exact_mut(width).enumerate().take(depth) {
        // SAFETY: as above, `k < depth = b.rows`.
        convert::<T>(unsafe { b.row(k) }, to);
    }
    // C, 16·MT × 8·NT row-major: lane (g, t)'s accumulator (i, j) holds the pairs at row
    // 16i + g and 16i + g + 8, columns 8j + 2t and the next (`c_position`).
    scratch.c.resize(a.rows * width, 0.0);
    let pair = |lane: usize, i: usize, j: usize, half: usize| {
        let (g, t) = (lane / 4, 2 * (lane % 4));
        (16 * i + g + 8 * half) * width + 8 * j + t
    };
    for (lane, theirs) in lanes.iter().enumerate() {
        for (i, band) in theirs.c.frags.iter().enumerate() {
            for (j, frag) in band.iter().enumerate() {
                let v: [f32; 4] = bytemuck::cast(frag.values);
                for half in 0..2 {
                    let at = pair(lane, i, j, half);
                    scratch.c[at..at + 2].copy_from_slice(&v[2 * half..2 * half + 2]);
                }
            }
        }
    }
    let shape = Matrix {
        rows: a.rows,
        cols: width,
        stride: width,
    };
    fma_tile(
        &scratch.a,
        depth,
        &scratch.b,
        width,
        &mut scratch.c,
        shape,
        depth,
    );
    for (lane, theirs) in out.iter_mut().enumerate() {
        for (i, band) in theirs.frags.iter_mut().enumerate() {
            for (j, frag) in band.iter_mut().enumerate() {
                let mut v = [0f32; 4];
                for half in 0..2 {
                    let at = pair(lane, i, j, half);
                    v[2 * half..2 * half + 2].copy_from_slice(&scratch.c[at..at + 2]);
                }
                frag.values = bytemuck::cast(v);
            }
        }
    }
}

/// `from` (f16, bf16 or tf32 elements) as f32 values into `to` (as `cpu::mma::element`: tf32 keeps
/// the 19 high bits).
#[inline(always)]
fn convert<T: MmaInput>(from: &[T], to: &mut [f32]) {
    match T::KIND {
        Kind::F16 => {
            let halves: &[half::f16] = bytemuck::cast_slice(from);
            halves.convert_to_f32_slice(to);
        }
        _ => {
            for (to, &x) in to.iter_mut().zip(from) {
                *to = element(T::KIND, x.to_bits());
            }
        }
    }
}

/// The warp's D `mma` by `mma` as the GPU does them: each lane's fragments read where the
/// windows say (`a_position`, `b_position`), each `mma` one [`multiply`] (exact, for the integer
/// inputs).
///
/// # Safety
/// Every lane's windows are live ([`Window::is_live`]) and as deep as each other.
unsafe fn lane_by_lane<T: MmaInput, const MT: usize, const NT: usize>(
    lanes: &[MmaTilesParts<T, MT, NT>; WARP],
    out: &mut [AccTile<T::Acc, MT, NT>; WARP],
) {
    let per = 32 / T::KIND.bits();
    // This lane's fragment registers of the 16×K (or K×8) tile at (`row`, `col`) of `window`.
    let registers =
        |lane: usize, window: &Window<T>, (row, col): (usize, usize), a: bool, regs: &mut [u32]| {
            regs.fill(0);
            let elements = if a { 16 * T::K / 32 } else { T::K * 8 / 32 };
            for i in 0..elements {
                let (r, c) = if a {
                    a_position(T::KIND, lane, i)
                } else {
                    b_position(T::KIND, lane, i)
                };
                // SAFETY: the caller's contract (a live window); the fragment lies inside it, as
                // `check_shapes` checked the shapes against the tile's where the lane called.
                let value: T = unsafe { window.row(row + r) }[col + c];
                regs[i / per] |= value.to_bits() << (T::KIND.bits() * (i % per));
            }
        };
    for (o, l) in out.iter_mut().zip(lanes) {
        *o = l.c;
    }
    for step in 0..lanes[0].a.cols / T::K {
        let k = step * T::K;
        for i in 0..MT {
            for j in 0..NT {
                let operands: [Operands; WARP] = core::array::from_fn(|lane| {
                    let mut ops = Operands::default();
                    registers(lane, &lanes[lane].a, (16 * i, k), true, &mut ops.a);
                    registers(lane, &lanes[lane].b, (k, 8 * j), false, &mut ops.b);
                    ops.c = out[lane].frags[i][j].values.map(bytemuck::cast);
                    ops
                });
                for (o, d) in out.iter_mut().zip(multiply(T::KIND, &operands, None)) {
                    o.frags[i][j].values = d.map(bytemuck::cast);
                }
            }
        }
    }
}

/// One lane of a [`rendezvous`]: its operands, and after the release, its D or why there is
/// none. `release` first (`repr(C)`): the lanes join by its address ([`WarpOp::MmaTiles`]).
#[repr(C)]
struct Lane<T: MmaInput, const MT: usize, const NT: usize> {
    release: Release,
    parts: MmaTilesParts<T, MT, NT>,
    d: AccTile<T::Acc, MT, NT>,
    refused: Option<Refused>,
}

std::thread_local! {
    /// The buffers of this OS thread's rendezvous.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// `mma_tiles` on the coroutine path (and where `#[kernel]` does not see the call): one warp
/// rendezvous, whose release does the warp's product as the split path's step does
/// ([`warp_product`]), so both give the same bits and the same reports.
#[track_caller]
pub(crate) fn rendezvous<T: MmaInput, const MT: usize, const NT: usize>(
    parts: MmaTilesParts<T, MT, NT>,
) -> AccTile<T::Acc, MT, NT> {
    let release: Release = release::<T, MT, NT>;
    let op = WarpOp::MmaTiles(release as usize);
    crate::cpu::check_warp_mask(op, crate::warp::FULL_MASK);
    let mut lane = Lane {
        release,
        parts,
        d: AccTile::zero(),
        refused: None,
    };
    crate::cpu::wait(Wait::Warp {
        op,
        mask: crate::warp::FULL_MASK,
        value: core::ptr::from_mut(&mut lane) as u64,
        arg: 0,
        site: Location::caller(),
    });
    if let Some(refused) = lane.refused {
        let warp = crate::warp::warp_id() as usize;
        crate::cpu::warp_divergence(refused.describe(warp, Location::caller()).1);
    }
    lane.d
}

/// Completes a warp's [`rendezvous`].
///
/// # Safety
/// Every pointer is a live `Lane<T, MT, NT>` of a lane waiting in [`rendezvous`], not otherwise
/// accessed until it is released (the scheduler calls this before it readies any of them).
unsafe fn release<T: MmaInput, const MT: usize, const NT: usize>(lanes: &[u64; WARP]) {
    let lane = |pointer: u64| pointer as *mut Lane<T, MT, NT>;
    // SAFETY: the caller's contract: live lanes, read only here.
    let parts = lanes.map(|pointer| unsafe { (*lane(pointer)).parts });
    let mut out = [AccTile::zero(); WARP];
    // The warp's product is the executor's work: off the simulated thread's stack.
    let result = crate::cpu::on_step_stack(|| {
        SCRATCH.with_borrow_mut(|scratch| warp_product(&parts, &mut out, scratch))
    });
    for (&pointer, d) in lanes.iter().zip(out) {
        // SAFETY: as above; this is the only reference to it now.
        unsafe {
            (*lane(pointer)).d = d;
            (*lane(pointer)).refused = result.err();
        }
    }
}
