//! Hints to the compiler for kernels' machine code.

/// `x` unchanged, through an empty `asm!` that LLVM cannot see into (ptxas drops the `mov` it
/// leaves; on the host, plain `x`).
///
/// For a value derived from a loop's index that LLVM's loop strength reduction would otherwise
/// turn into induction variables of its own: each is one more register, and an add per
/// iteration (64-bit ones two). `grid_stride_elements` passes its 32-bit index through it, so the
/// address stays one wide multiply-add; `monte_carlo_pi` its sample index, so the Philox
/// counter's words do not become three induction variables beside it.
#[inline(always)]
pub fn opaque<T: Opaque>(x: T) -> T {
    x.opaque()
}

/// Integers [`opaque`] takes: one PTX register each.
pub trait Opaque: Copy + sealed::Sealed {
    /// See [`opaque`].
    fn opaque(self) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

macro_rules! opaque_register {
    ($t:ty, $mov:literal, $class:ident) => {
        impl Opaque for $t {
            #[inline(always)]
            fn opaque(self) -> $t {
                // An optimisation barrier for the GPU's code (ptxas) only: the host's compiler
                // needs none, so the value passes through.
                #[cfg(target_arch = "nvptx64")]
                {
                    let y: $t;
                    // SAFETY: a register move; touches no memory.
                    unsafe {
                        core::arch::asm!(
                            concat!($mov, " {0}, {1};"),
                            out($class) y,
                            in($class) self,
                            options(pure, nomem, nostack, preserves_flags)
                        );
                    }
                    y
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    self
                }
            }
        }
    };
}

opaque_register!(u32, "mov.u32", reg32);
opaque_register!(u64, "mov.u64", reg64);
