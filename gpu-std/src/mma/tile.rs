//! [`SharedTile`]: a window of a shared array whose range is checked once, when it is made, so
//! that the fragment loads inside it check only their place in the window, which folds away
//! where that place is a constant (an unrolled k-step), and address the window in 32 bits.

use super::fragment::{FragA, FragB, MmaInput};
use crate::shared::Shared;
#[cfg(target_arch = "nvptx64")]
use core::marker::PhantomData;

/// A `rows × cols` row-major window of a shared array: element (row, column) of the window is
/// element `start + row·row_stride + column` of the array. [`SharedTile::new`] checks that the
/// whole window lies inside the array; [`frag_a`](SharedTile::frag_a) and
/// [`frag_b`](SharedTile::frag_b) then read fragments from it checking only that the fragment
/// lies inside the window (`row + 16 <= rows`, ...), which the compiler folds away when the
/// places are constants. That is the tile a warp multiplies per stage of a tiled matrix product:
///
/// ```ignore
/// // This warp's 32 × 32 rows × columns of the stage in `a_tiles` (rows `A_STRIDE` apart):
/// let a_tile = SharedTile::new(a_tiles, stage + wr * A_STRIDE, (32, 32), A_STRIDE);
/// let fa0 = a_tile.frag_a(0, 0);   // rows 0..16, columns 0..16: `ldmatrix.x4`, no check
/// let fa1 = a_tile.frag_a(16, 0);  // rows 16..32
/// ```
///
/// On the GPU, f16 and bf16 windows whose rows start 16-byte aligned (`start` and `row_stride`
/// multiples of 8, a fragment's column a multiple of 8) load each fragment with one `ldmatrix`,
/// at a 32-bit shared-window address; other types and places load element by element, each
/// element checked as [`Shared::get`] checks it (and, in CPU checked mode, recorded for the race
/// and uninitialized-read checks).
#[derive(Clone, Copy)]
pub struct SharedTile<'b, T> {
    shared: Shared<'b, T>,
    start: usize,
    rows: usize,
    cols: usize,
    row_stride: usize,
    /// Element (0, 0)'s shared-window address.
    #[cfg(target_arch = "nvptx64")]
    window: u32,
    #[cfg(target_arch = "nvptx64")]
    _t: PhantomData<T>,
}

impl<'b, T: MmaInput> SharedTile<'b, T> {
    /// The `rows × cols` window of `shared` whose element (0, 0) is `shared`'s element `start`,
    /// `row_stride` elements between rows.
    ///
    /// # Panics
    /// If the window reaches past the array: its last element, `start + (rows - 1)·row_stride +
    /// cols - 1`, is not below `shared.len()` (on the GPU: traps). An empty window (0 rows or
    /// columns) is never out of range, and no fragment fits in it.
    #[inline(always)]
    #[track_caller]
    pub fn new(
        shared: Shared<'b, T>,
        start: usize,
        (rows, cols): (usize, usize),
        row_stride: usize,
    ) -> Self {
        if rows != 0 && cols != 0 {
            let last = (rows - 1)
                .checked_mul(row_stride)
                .and_then(|r| r.checked_add(start))
                .and_then(|r| r.checked_add(cols - 1));
            match last {
                Some(last) if last < shared.len() => {}
                _ => crate::mem::out_of_bounds(
                    "a shared array (a SharedTile's last element)",
                    last.unwrap_or(usize::MAX),
                    shared.len(),
                ),
            }
        }
        SharedTile {
            shared,
            start,
            rows,
            cols,
            row_stride,
            #[cfg(target_arch = "nvptx64")]
            window: shared.window_at(start),
            #[cfg(target_arch = "nvptx64")]
            _t: PhantomData,
        }
    }

    /// Rows and columns of the window.
    #[inline(always)]
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Whether reads through the window are checked and recorded (CPU checked mode).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn checks_accesses(&self) -> bool {
        self.shared.checks_accesses()
    }

    /// The window as the split path's `mma_tiles` step takes it (element (0, 0)'s address,
    /// shape, stride): read there, after checking it is still live shared memory.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn window(&self) -> super::tile_product::Window<T> {
        super::tile_product::Window {
            first: self.shared.as_mut_ptr().wrapping_add(self.start),
            rows: self.rows,
            cols: self.cols,
            row_stride: self.row_stride,
        }
    }

    /// The fragment of the 16×K tile whose element (0, 0) is the window's (`row`, `col`), for
    /// [`mma`](super::mma) as A.
    ///
    /// # Panics
    /// If the 16×K tile reaches past the window (`row + 16 > rows` or `col + K > cols`; on the
    /// GPU: traps). In CPU checked mode, also on a race or a read of an element no thread has
    /// written.
    #[inline(always)]
    #[track_caller]
    pub fn frag_a(&self, row: usize, col: usize) -> FragA<T> {
        self.check_place((row, col), (16, T::K));
        #[cfg(target_arch = "nvptx64")]
        if self.ldmatrix(col) {
            // Lane l gives row l % 16 of columns 8·(l / 16): the four 8×8 quarters in the order
            // of A's registers (rows 0-7/8-15 of columns 0-7, then of columns 8-15).
            let lane = crate::warp::lane_id() as usize;
            let at = self.row_address((lane % 16, 8 * (lane / 16)), (row, col));
            return FragA {
                regs: super::ptx::ldmatrix_x4(at),
                _t: core::marker::PhantomData,
            };
        }
        #[cfg(target_arch = "nvptx64")]
        if Self::by_words() {
            let lane = crate::warp::lane_id();
            let first = FragA::<T>::position(lane, 0);
            let base = self.lane_base(first);
            return FragA {
                regs: core::array::from_fn(|i| {
                    self.word((base, first), FragA::<T>::position(lane, i), (row, col))
                }),
                _t: core::marker::PhantomData,
            };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        if !self.shared.checks_accesses() {
            // SAFETY: the fragment lies inside the window (`check_place`), the window inside
            // the array (`new`).
            return FragA::from_fn(|r, c| unsafe { self.get_unchecked(row + r, col + c) });
        }
        FragA::from_fn(|r, c| self.get(row + r, col + c))
    }

    /// The fragment of the K×8 tile whose element (0, 0) is the window's (`row`, `col`), for
    /// [`mma`](super::mma) as B (B row-major: K rows of the window, 8 columns).
    ///
    /// # Panics
    /// As [`frag_a`](SharedTile::frag_a), for `row + K > rows` or `col + 8 > cols`.
    #[inline(always)]
    #[track_caller]
    pub fn frag_b(&self, row: usize, col: usize) -> FragB<T> {
        self.check_place((row, col), (T::K, 8));
        #[cfg(target_arch = "nvptx64")]
        if self.ldmatrix(col) {
            // Lanes 0..16 give rows 0..16 (k) of the two 8×8 matrices (lanes 16..32 the same
            // rows, unused by `.x2`); `.trans` hands lane l the k-pairs of column l / 4, which
            // is B's layout.
            let lane = crate::warp::lane_id() as usize;
            let at = self.row_address((lane % 16, 0), (row, col));
            return FragB {
                regs: super::ptx::ldmatrix_x2_trans(at),
                _t: core::marker::PhantomData,
            };
        }
        #[cfg(target_arch = "nvptx64")]
        if Self::by_words() {
            let lane = crate::warp::lane_id();
            let first = FragB::<T>::position(lane, 0);
            let base = self.lane_base(first);
            return FragB {
                regs: core::array::from_fn(|i| {
                    self.word((base, first), FragB::<T>::position(lane, i), (row, col))
                }),
                _t: core::marker::PhantomData,
            };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        if !self.shared.checks_accesses() {
            // SAFETY: as in `frag_a`.
            return FragB::from_fn(|r, c| unsafe { self.get_unchecked(row + r, col + c) });
        }
        FragB::from_fn(|r, c| self.get(row + r, col + c))
    }

    /// Panics (traps) unless the `size.0 × size.1` tile at `place` lies inside the window. Both
    /// comparisons are against the window's own shape, never the array's: with constant places
    /// and a constant shape they fold away.
    #[inline(always)]
    #[track_caller]
    fn check_place(&self, (row, col): (usize, usize), (rows, cols): (usize, usize)) {
        if row > self.rows.saturating_sub(rows) || rows > self.rows {
            let last = row.saturating_add(rows - 1);
            crate::mem::out_of_bounds("a SharedTile's rows", last, self.rows);
        }
        if col > self.cols.saturating_sub(cols) || cols > self.cols {
            let last = col.saturating_add(cols - 1);
            crate::mem::out_of_bounds("a SharedTile's columns", last, self.cols);
        }
    }

    /// Element (`row`, `col`) of the window, through [`Shared::get`] (checked).
    #[inline(always)]
    #[track_caller]
    fn get(&self, row: usize, col: usize) -> T {
        self.shared.get(self.start + row * self.row_stride + col)
    }

    /// Element (`row`, `col`) of the window, read raw: on the CPU executor outside checked mode,
    /// where a fragment's place was checked against the window once (`check_place`), there is
    /// nothing left to check per element (a bounds check per element and lane was a sixth of
    /// the instructions of the library's `matmul_tc` there, by callgrind).
    ///
    /// # Safety
    /// (`row`, `col`) lies inside the window, and the handle does not check accesses (no access
    /// needs recording).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    unsafe fn get_unchecked(&self, row: usize, col: usize) -> T {
        let index = self.start + row * self.row_stride + col;
        // SAFETY: the caller's contract and `new`'s check: `index` is inside the array; shared
        // memory is read by plain loads on the host (one OS thread runs the block).
        unsafe { self.shared.as_mut_ptr().add(index).read_unaligned() }
    }

    /// Whether fragments at column `col` load by `ldmatrix`: 16-bit elements, rows 16-byte
    /// aligned. (In a kernel whose start and stride are multiples of 8 by construction, known
    /// to the compiler, this folds to `true`.)
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn ldmatrix(&self, col: usize) -> bool {
        T::KIND.bits() == 16 && (self.start | self.row_stride | col).is_multiple_of(8)
    }

    /// Whether fragments load a 32-bit element per register straight from the window (tf32):
    /// each a `ld.shared` at the lane's [`lane_base`](Self::lane_base) plus a constant.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn by_words() -> bool {
        T::KIND.bits() == 32
    }

    /// The shared-window address of the lane's element (`r0`, `c0`) of a fragment at the
    /// window's (0, 0) (its first element: every other element of the lane's fragments, at
    /// any place, is a constant number of rows and columns away), hidden from the compiler.
    ///
    /// Why hidden: the element index `(row + r)·row_stride + col + c` has the lane's part
    /// (`r0`, `c0`: `lane / 4`, `lane % 4`) in bits that the constant part leaves clear, so
    /// LLVM wrote each `+` of them as an `or`, a different register per element that ptxas
    /// cannot fold into the load's immediate offset (2-3 instructions an address: 17 of the
    /// tf32 k-step's 160 instructions on sm_80, 26 of 172 on sm_90, by tools/sass/tc_kstep.py).
    /// Through [`opaque`](super::ptx::opaque) each address is this base plus a constant, and
    /// every load is `ld.shared [base + constant]`, one base per tile and stage. (The pure
    /// `asm` still lets LLVM share one base between the fragments of a tile.)
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn lane_base(&self, (r0, c0): (usize, usize)) -> u32 {
        super::ptx::opaque(self.window_offset(r0, c0))
    }

    /// The shared-window address of the row this lane gives `ldmatrix` for the fragment at the
    /// window's (`row`, `col`): its own (`r0`, `c0`) of the fragment, as the lane's
    /// [`lane_base`](Self::lane_base) plus the constant bytes to the fragment's place (for the
    /// same reason: the second A fragment of a k-step was a fresh address computation instead
    /// of an offset from the first, 9 of the f16 k-step's 136 instructions on sm_90, by
    /// tools/sass/tc_kstep.py, once the k-step moved into `mma_tiles`). The caller checked that
    /// the fragment lies in the window.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn row_address(&self, (r0, c0): (usize, usize), (row, col): (usize, usize)) -> u32 {
        let delta = (row as u32)
            .wrapping_mul(self.row_stride as u32)
            .wrapping_add(col as u32);
        self.lane_base((r0, c0))
            .wrapping_add(delta.wrapping_mul(core::mem::size_of::<T>() as u32))
    }

    /// The 32-bit element at (`r`, `c`) of the fragment whose (0, 0) is the window's (`row`,
    /// `col`), read at `base` (the lane's [`lane_base`](Self::lane_base), its first element
    /// (`r0`, `c0`)) plus the bytes from there to (`row + r`, `col + c`): the address that
    /// [`window_offset`](Self::window_offset)`(row + r, col + c)` computes, as the 32-bit sums
    /// wrap alike. The caller checked that the fragment lies in the window (`check_place`), so
    /// the element lies in the array ([`new`](Self::new)), 4-byte aligned.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn word(
        &self,
        (base, (r0, c0)): (u32, (usize, usize)),
        (r, c): (usize, usize),
        (row, col): (usize, usize),
    ) -> u32 {
        // Constants where the places are (the lane's parts cancel): the load's offset.
        let rows = (row + r).wrapping_sub(r0) as u32;
        let cols = (col + c).wrapping_sub(c0) as u32;
        let delta = rows.wrapping_mul(self.row_stride as u32).wrapping_add(cols);
        super::ptx::ld_shared_b32(
            base.wrapping_add(delta.wrapping_mul(core::mem::size_of::<T>() as u32)),
        )
    }

    /// The shared-window address of the window's element (`row`, `col`), computed in 32 bits:
    /// the caller checked that the element lies inside the window, and [`new`](Self::new) that
    /// the window lies inside the array, whose bytes fit in the 32-bit window, so no step of it
    /// overflows.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn window_offset(&self, row: usize, col: usize) -> u32 {
        let index = (row as u32)
            .wrapping_mul(self.row_stride as u32)
            .wrapping_add(col as u32);
        self.window
            .wrapping_add(index.wrapping_mul(core::mem::size_of::<T>() as u32))
    }
}

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
