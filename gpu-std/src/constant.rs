//! Constant memory: read-only tables (up to 64 KiB) in PTX `.const`, set from the host before a
//! launch, CUDA's `__constant__`.
//!
//! rustc's NVPTX backend puts every Rust `static` in `.global` (Rust has no address-space
//! attribute), so [`constant!`](crate::constant!) declares the table itself, with `global_asm!`
//! (`.visible .const .align A .b8 NAME[BYTES];`, what nvcc emits for `__constant__`), and reads it
//! with inline `ld.const`: loads through the constant cache, which broadcasts one address to a
//! whole warp in one transaction. The host sets it with `Module::set_constant(&NAME, &data)`
//! (`cuModuleGetGlobal` and a copy on a GPU). On the CPU executor the table lives in the
//! module's memory, set the same way: each module (each device) has its own.
//!
//! A table nobody set reads as zeros, on the GPU (the driver zeroes `.const`) and on the CPU.

use crate::backend::constant as machine;
use crate::index::ElementIndex;

pub use crate::machine::CONSTANT_MEMORY_BYTES;

/// A table of `N` `T`s in constant memory, declared with [`constant!`](crate::constant!): read it in
/// kernels with [`get`](ConstTable::get) or [`view`](ConstTable::view), set it from the host
/// with `Module::set_constant`.
pub struct ConstTable<T, const N: usize> {
    name: &'static str,
    /// The table's `.const` address (GPU: `mov.u64 r, NAME`). Only the GPU has one: `constant!`
    /// declares the symbol there, and the host finds the table by `name`.
    #[cfg(target_arch = "nvptx64")]
    address: fn() -> u64,
    _element: core::marker::PhantomData<fn() -> T>,
}

impl<T, const N: usize> Clone for ConstTable<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for ConstTable<T, N> {}

impl<T, const N: usize> core::fmt::Debug for ConstTable<T, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "ConstTable({}: [{}; {N}])",
            self.name,
            core::any::type_name::<T>()
        )
    }
}

/// An element type of a constant table: a number that one `ld.const` loads (the machine's
/// read of each is `backend/{nvptx,cpu}/constant.rs`'s `Load`).
pub trait ConstElement: bytemuck::Pod + sealed::Sealed + machine::Load {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! const_element {
    ($($t:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl ConstElement for $t {}
    )*};
}
const_element!(f32, f64, u32, i32, u64, i64);

impl<T: ConstElement, const N: usize> ConstTable<T, N> {
    /// Used by [`constant!`](crate::constant!).
    ///
    /// # Safety
    /// On the GPU, `address` must return the address of a `.const` declaration of
    /// `size_of::<[T; N]>()` bytes aligned for `T`, named `name`.
    #[doc(hidden)]
    pub const unsafe fn new(
        name: &'static str,
        #[cfg(target_arch = "nvptx64")] address: fn() -> u64,
    ) -> Self {
        ConstTable {
            name,
            #[cfg(target_arch = "nvptx64")]
            address,
            _element: core::marker::PhantomData,
        }
    }

    /// The table's symbol in the PTX (its name in the source).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The number of elements.
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether the table has no elements.
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The table as the running launch sees it. On the CPU executor this finds the module's copy
    /// (and holds it, so it stays valid however long the view is kept), so a kernel that reads
    /// many elements should take the view once and read through it.
    #[inline(always)]
    pub fn view(&self) -> ConstView<T, N> {
        // The GPU finds a table by the address of the symbol `constant!` declared (there only),
        // the host by its name.
        #[cfg(target_arch = "nvptx64")]
        let elements = machine::elements(self.address);
        #[cfg(not(target_arch = "nvptx64"))]
        let elements = machine::elements(self.name, core::mem::size_of::<[T; N]>());
        ConstView {
            elements,
            _table: core::marker::PhantomData,
        }
    }

    /// Element `index` (a shorthand for `view().get(index)`).
    ///
    /// # Panics
    /// If `index` is negative or `>= N` (on the GPU: traps).
    #[inline(always)]
    #[track_caller]
    pub fn get<I: ElementIndex>(&self, index: I) -> T {
        self.view().get(index)
    }
}

/// A [`ConstTable`] as one launch sees it; see [`ConstTable::view`].
#[derive(Clone)]
pub struct ConstView<T, const N: usize> {
    /// The table's elements: on the GPU its `.const` address, on the host the module's bytes (at
    /// least `size_of::<[T; N]>()`, aligned to 8).
    elements: machine::Elements,
    _table: core::marker::PhantomData<fn() -> [T; N]>,
}

impl<T: ConstElement, const N: usize> ConstView<T, N> {
    /// Element `index` (a `usize`, or any [`ElementIndex`]: `u32`, `i32`, ...).
    ///
    /// # Panics
    /// If `index` is negative or `>= N` (on the GPU: traps).
    #[inline(always)]
    #[track_caller]
    pub fn get<I: ElementIndex>(&self, index: I) -> T {
        let index = crate::index::checked_index(index, N, "a constant table");
        // SAFETY: `index < N`, checked just above.
        unsafe { self.get_unchecked(index) }
    }

    /// Element `index` without the bounds check.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, index: usize) -> T {
        // SAFETY: `index < N` (caller) inside the table `ConstTable::new` was promised.
        unsafe { machine::read(&self.elements, index) }
    }

    /// The number of elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether the table has no elements.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

/// Declares a table in constant memory (CUDA's `__constant__ float WEIGHTS[25];`):
///
/// ```ignore
/// ferrocuda_std::constant! {
///     /// The filter's weights, set by the host before each launch.
///     pub static WEIGHTS: [f32; 25];
/// }
///
/// #[kernel]
/// pub fn weigh(x: &[f32], out: Out<f32>) {
///     let i = thread::index_1d();
///     if i < x.len() && i < out.len() {
///         out.set(i, x[i] * WEIGHTS.get(i % 25));
///     }
/// }
/// ```
///
/// and on the host `module.set_constant(&WEIGHTS, &weights)?`. The PTX symbol is the table's name,
/// so it must be unique in the kernel crate (and its dependencies); elements are `f32`, `f64`,
/// `u32`, `i32`, `u64` or `i64`, and the table is at most 64 KiB:
///
/// ```compile_fail
/// ferrocuda_std::constant! {
///     static TOO_BIG: [f64; 8193];
/// }
/// let _ = TOO_BIG.len();
/// ```
#[macro_export]
macro_rules! constant {
    ($(#[$attr:meta])* $vis:vis static $name:ident: [$t:ty; $n:expr];) => {
        $(#[$attr])*
        #[allow(non_upper_case_globals)]
        $vis const $name: $crate::constant::ConstTable<$t, { $n }> = {
            const _: () = ::core::assert!(
                ::core::mem::size_of::<[$t; $n]>() <= $crate::constant::CONSTANT_MEMORY_BYTES,
                "a constant table holds at most 64 KiB (CUDA's constant memory)"
            );
            // On the GPU the table is a `.const` symbol of the kernel crate's module, declared and
            // addressed here, where the table's name is (a backend function could not name it);
            // the host finds the table by its name and needs neither.
            // `global_asm!` is an item: in a module of its own, which sees the caller's names.
            #[cfg(target_arch = "nvptx64")]
            mod declaration {
                #[allow(unused_imports)]
                use super::*;
                ::core::arch::global_asm!(
                    ::core::concat!(".visible .const .align {align} .b8 ", ::core::stringify!($name), "[{size}];"),
                    align = const ::core::mem::align_of::<$t>(),
                    size = const ::core::mem::size_of::<[$t; $n]>(),
                );
            }
            #[cfg(target_arch = "nvptx64")]
            const TABLE: $crate::constant::ConstTable<$t, { $n }> = {
                #[inline(always)]
                fn address() -> u64 {
                    let address: u64;
                    // SAFETY: `mov` of a symbol's address; no memory is touched.
                    unsafe {
                        ::core::arch::asm!(
                            ::core::concat!("mov.u64 {0}, ", ::core::stringify!($name), ";"),
                            out(reg64) address,
                            options(pure, nomem, nostack),
                        );
                    }
                    address
                }
                // SAFETY: `address` is the `.const` declaration above, of the table's size and
                // alignment, under the table's name.
                unsafe { $crate::constant::ConstTable::new(::core::stringify!($name), address) }
            };
            // SAFETY: on the host the table is looked up by its name in the launch's tables.
            #[cfg(not(target_arch = "nvptx64"))]
            const TABLE: $crate::constant::ConstTable<$t, { $n }> =
                unsafe { $crate::constant::ConstTable::new(::core::stringify!($name)) };
            TABLE
        };
    };
}
