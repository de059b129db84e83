//! One warp's 16×8 product, [`mma`]: PTX `mma.sync` on the GPU ([`super::ptx`]), the CPU
//! runtime's warp exchange and product elsewhere (`cpu/mma.rs`).

use super::fragment::{FragA, FragB, FragC, MmaInput};
#[cfg(not(target_arch = "nvptx64"))]
use crate::cpu::mma::Operands;
#[cfg(not(target_arch = "nvptx64"))]
use core::marker::PhantomData;

/// `a·b + c` for the warp's 16×8 tile (PTX `mma.sync.aligned`): every lane of the warp must call
/// it (a warp collective), each with its own fragments; each gets its part of the result.
#[inline(always)]
#[track_caller]
pub fn mma<T: MmaInput>(a: &FragA<T>, b: &FragB<T>, c: &FragC<T::Acc>) -> FragC<T::Acc> {
    let c_bits: [u32; 4] = core::array::from_fn(|i| bytemuck::cast(c.values[i]));
    #[cfg(target_arch = "nvptx64")]
    let d = super::ptx::mma(T::KIND, a.regs, b.regs, c_bits);
    #[cfg(not(target_arch = "nvptx64"))]
    let d = crate::cpu::warp_mma::mma(T::KIND, a.regs, b.regs, c_bits);
    FragC {
        values: d.map(bytemuck::cast),
    }
}

/// What `#[kernel]`'s split path calls instead of [`mma`] in `let d = mma(..);` (or
/// `d = mma(..);`): this thread's operands, which the block's step multiplies with its warp's
/// (`split_steps::collective::MmaCollective`) without suspending any thread.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn __split_mma<T: MmaInput>(a: &FragA<T>, b: &FragB<T>, c: &FragC<T::Acc>) -> MmaParts<T> {
    MmaParts {
        operands: Operands {
            a: a.regs,
            b: b.regs,
            c: core::array::from_fn(|i| bytemuck::cast(c.values[i])),
        },
        _t: PhantomData,
    }
}

/// One thread's operands of an `mma` on the split path (what [`__split_mma`] returns, what the
/// block's step `split_steps::collective::MmaCollective` takes).
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub struct MmaParts<T> {
    pub(crate) operands: Operands,
    pub(crate) _t: PhantomData<T>,
}
