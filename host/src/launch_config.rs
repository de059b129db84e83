//! [`LaunchConfig`]: a launch's grid, block, stream and dynamic shared memory, and
//! [`LaunchDims`], the sizes it is built from. Plain data, below the backends, which take it.

use crate::error::{Error, Result};
use crate::stream::Stream;
use ferrocuda_std::Dim3;

/// Grid and block sizes of a launch, plus its optional stream and dynamic shared memory: Numba's
/// `kernel[blocks, threads, stream, shared_bytes]`. `Copy`: it holds the stream by reference, so
/// one config can serve several launches.
///
/// ```
/// use ferrocuda_host::{Dim3, LaunchConfig};
/// let config = LaunchConfig::new(4096, 256);
/// assert_eq!((config.grid, config.block), (Dim3::new(4096, 1, 1), Dim3::new(256, 1, 1)));
/// let tiles = LaunchConfig::new((64, 64), (16, 16)).with_shared_mem_bytes(2048);
/// assert_eq!(tiles.block.count(), 256);
/// let n: usize = 1000;
/// let from_usize = LaunchConfig::try_new(n.div_ceil(256), 256).unwrap();
/// assert_eq!(from_usize.grid, Dim3::new(4, 1, 1));
/// assert!(LaunchConfig::try_new(1usize << 40, 256).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'s> {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
    /// The stream to launch on; `None` is the device's default stream.
    pub stream: Option<&'s Stream>,
}

impl LaunchConfig<'static> {
    /// `grid` blocks of `block` threads, on the default stream, without dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
            stream: None,
        }
    }

    /// As [`new`](Self::new), from sizes of any integer type (`n.div_ceil(256)` is a `usize`) or
    /// tuples and arrays of them: what [`launch!`](crate::launch!) calls.
    ///
    /// # Errors
    /// [`Error::LaunchDimension`] for a size below 0 or above `u32::MAX`, which no CUDA launch
    /// can have (never truncated).
    pub fn try_new(grid: impl LaunchDims, block: impl LaunchDims) -> Result<Self> {
        Ok(LaunchConfig::new(
            grid.to_dim3("grid")?,
            block.to_dim3("block")?,
        ))
    }
}

impl<'s> LaunchConfig<'s> {
    /// The same launch on `stream`.
    pub fn on_stream<'t>(self, stream: &'t Stream) -> LaunchConfig<'t> {
        LaunchConfig {
            grid: self.grid,
            block: self.block,
            shared_mem_bytes: self.shared_mem_bytes,
            stream: Some(stream),
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem_bytes(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }
}

/// A grid or block size for [`LaunchConfig::try_new`] and [`launch!`](crate::launch!): a
/// [`Dim3`], an integer of any primitive type, or a tuple or array of one to three of them
/// (`(16, 16)`, `(cols.div_ceil(32), rows.div_ceil(32))`, `[8, 8, 4]`).
pub trait LaunchDims {
    /// The size as a `Dim3`; `what` ("grid" or "block") names it in the error.
    ///
    /// # Errors
    /// [`Error::LaunchDimension`] for a component outside `0..=u32::MAX`.
    fn to_dim3(self, what: &'static str) -> Result<Dim3>;
}

/// One component of a launch size: a primitive integer. Sealed: [`LaunchDims`] is implemented
/// for every type of it.
pub trait DimComponent: Copy + sealed::Sealed + core::fmt::Display {
    /// The value as a CUDA dimension, if it is one.
    fn to_u32(self) -> Option<u32>;
}

mod sealed {
    /// Keeps [`super::DimComponent`] to the primitive integers.
    pub trait Sealed {}
}

macro_rules! dim_component {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl DimComponent for $t {
            fn to_u32(self) -> Option<u32> {
                u32::try_from(self).ok()
            }
        }
    )*};
}
dim_component!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// `value` as dimension `axis` of `what`, or the error naming it.
fn component(what: &'static str, axis: char, value: impl DimComponent) -> Result<u32> {
    value.to_u32().ok_or_else(|| Error::LaunchDimension {
        what,
        axis,
        value: value.to_string(),
    })
}

impl LaunchDims for Dim3 {
    fn to_dim3(self, _what: &'static str) -> Result<Dim3> {
        Ok(self)
    }
}
impl<A: DimComponent> LaunchDims for A {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        Ok(Dim3::new(component(what, 'x', self)?, 1, 1))
    }
}
impl<A: DimComponent, B: DimComponent> LaunchDims for (A, B) {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        (self.0, self.1, 1u32).to_dim3(what)
    }
}
impl<A: DimComponent, B: DimComponent, C: DimComponent> LaunchDims for (A, B, C) {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        let (x, y, z) = self;
        Ok(Dim3::new(
            component(what, 'x', x)?,
            component(what, 'y', y)?,
            component(what, 'z', z)?,
        ))
    }
}
impl<A: DimComponent> LaunchDims for [A; 1] {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        self[0].to_dim3(what)
    }
}
impl<A: DimComponent> LaunchDims for [A; 2] {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        (self[0], self[1]).to_dim3(what)
    }
}
impl<A: DimComponent> LaunchDims for [A; 3] {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        (self[0], self[1], self[2]).to_dim3(what)
    }
}
