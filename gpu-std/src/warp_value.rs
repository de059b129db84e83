//! The values a warp can exchange ([`WarpValue`], re-exported as `warp::WarpValue`) and which lane
//! a shuffle reads from ([`Shuffle`]): the types both the kernel language ([`warp`](crate::warp))
//! and the backends that implement its exchanges (`backend`) name, so they sit below both.

mod sealed {
    pub trait Sealed {}
}

/// Values a warp can shuffle: 32-bit ones in one `shfl`, 64-bit ones in two.
pub trait WarpValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn to_bits64(self) -> u64;
    #[doc(hidden)]
    fn from_bits64(bits: u64) -> Self;
    #[doc(hidden)]
    const WIDE: bool;
}

macro_rules! warp_value {
    ($($t:ty => $wide:literal, |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpValue for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                let $v = self;
                $to
            }
            #[inline(always)]
            fn from_bits64($b: u64) -> Self {
                $from
            }
            const WIDE: bool = $wide;
        }
    )*};
}
warp_value! {
    u32 => false, |v| v as u64, |b| b as u32;
    i32 => false, |v| v as u32 as u64, |b| b as u32 as i32;
    f32 => false, |v| v.to_bits() as u64, |b| f32::from_bits(b as u32);
    u64 => true, |v| v, |b| b;
    i64 => true, |v| v as u64, |b| b as i64;
    f64 => true, |v| v.to_bits(), |b| f64::from_bits(b);
}

/// Which lane a shuffle reads from.
#[derive(Clone, Copy)]
pub(crate) enum Shuffle {
    Idx,
    Up,
    Down,
    Xor,
}
