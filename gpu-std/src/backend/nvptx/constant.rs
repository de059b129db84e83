//! Constant memory on the GPU: a table is its `.const` symbol's address (which `constant!` gets
//! with `mov`), and its elements are read with `ld.const`, through the constant cache. The same
//! names as `cpu/constant.rs`, so `constant.rs` makes one call on either machine.

/// Where a table's elements are: its `.const` address.
pub(crate) type Elements = u64;

/// The elements of the table whose address `address` gives (the function `constant!` made for
/// the table's symbol).
#[inline(always)]
pub(crate) fn elements(address: fn() -> u64) -> Elements {
    address()
}

/// Element `index` of the table at `elements`.
///
/// # Safety
/// `index` is inside the table, whose elements are `T`s.
#[inline(always)]
pub(crate) unsafe fn read<T: Load>(elements: &Elements, index: usize) -> T {
    let address = *elements + (index * core::mem::size_of::<T>()) as u64;
    // SAFETY: the caller's contract: an aligned `.const` address inside a table.
    unsafe { T::load(address) }
}

/// An element type `ld.const` reads (each with its own PTX type); a bound of `ConstElement`,
/// not nameable outside the crate.
pub trait Load: Sized {
    /// The element at `address`.
    ///
    /// # Safety
    /// `address` is an aligned `.const` address of a `Self` inside a table.
    unsafe fn load(address: u64) -> Self;
}

macro_rules! load {
    ($($t:ty => $ptx:literal, $reg:ident);* $(;)?) => {$(
        impl Load for $t {
            #[inline(always)]
            unsafe fn load(address: u64) -> Self {
                let value: $t;
                // SAFETY: the caller passes an aligned `.const` address inside a table, which
                // nothing writes while a kernel runs (the host sets tables between launches).
                unsafe {
                    core::arch::asm!(
                        concat!("ld.const.", $ptx, " {v}, [{a}];"),
                        v = out($reg) value,
                        a = in(reg64) address,
                        options(pure, readonly, nostack),
                    );
                }
                value
            }
        }
    )*};
}
load! {
    f32 => "f32", reg32;
    f64 => "f64", reg64;
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    i64 => "s64", reg64;
}
