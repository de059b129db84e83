//! The warp's matrix fragments ([`FragA`], [`FragB`], [`FragC`]), the input types they hold
//! ([`MmaInput`]); where each lane's elements sit is [`crate::tensor_core`]'s.

use crate::half::{bf16, f16};
pub use crate::tensor_core::Kind;
use crate::tensor_core::{a_position, b_position, c_position};
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// The input element types of [`mma`](super::mma()): [`f16`](struct@f16), [`bf16`], `f32` (as tf32), `i8`, `u8`.
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

/// This lane's part of the 16×K matrix A (row-major), for [`mma`](super::mma()).
#[derive(Clone, Copy)]
pub struct FragA<T> {
    pub(crate) regs: [u32; 4],
    pub(super) _t: PhantomData<T>,
}

/// This lane's part of the K×8 matrix B, for [`mma`](super::mma()).
#[derive(Clone, Copy)]
pub struct FragB<T> {
    pub(crate) regs: [u32; 2],
    pub(super) _t: PhantomData<T>,
}

/// This lane's 4 elements of the 16×8 accumulator C (or result D) of [`mma`](super::mma()).
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
