//! Facts about the machine that the kernel language and the CPU runtime both need: the shape of
//! a launch ([`Dim3`]), the width of a warp and its full lane mask and the size of constant memory.
//!
//! This is the crate's lowest layer: it imports nothing from the crate, so the CPU runtime
//! (`cpu/`) can name these without importing the language modules above it. The language
//! modules re-export them where users know them (`thread::Dim3`, `warp::WARP_SIZE`, `warp::FULL_MASK`,
//! `constant::CONSTANT_MEMORY_BYTES`, `atomic::Scope`).

/// Threads per warp.
pub const WARP_SIZE: u32 = 32;

/// The mask naming all 32 lanes.
pub const FULL_MASK: u32 = u32::MAX;

/// The most bytes of `.const` a table may have: what every CUDA GPU has for constant memory.
pub const CONSTANT_MEMORY_BYTES: usize = 64 * 1024;

/// A size or position in up to three dimensions, as CUDA's `dim3`.
///
/// Converts from `u32`, `(u32, u32)`, `(u32, u32, u32)` and `[u32; N]`, so a launch can say
/// `[blocks, threads]` with plain numbers:
///
/// ```
/// use ferrocuda_std::Dim3;
/// assert_eq!(Dim3::from(256), Dim3::new(256, 1, 1));
/// assert_eq!(Dim3::from((16, 8)).count(), 128);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Dim3 {
    /// Fastest-varying dimension.
    pub x: u32,
    /// Second dimension.
    pub y: u32,
    /// Slowest-varying dimension.
    pub z: u32,
}

impl Dim3 {
    /// A `Dim3` from its three components.
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }

    /// The number of points it spans: `x * y * z`, saturating at `u64::MAX` (three `u32`s can
    /// overflow a `u64`; no launch is that large, and the launch checks refuse it).
    ///
    /// ```
    /// # use ferrocuda_std::Dim3;
    /// assert_eq!(Dim3::new(u32::MAX, u32::MAX, u32::MAX).count(), u64::MAX);
    /// ```
    pub const fn count(self) -> u64 {
        (self.x as u64 * self.y as u64).saturating_mul(self.z as u64)
    }
}

impl core::fmt::Display for Dim3 {
    /// `(x, y, z)`, as error messages name blocks and threads.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

impl Default for Dim3 {
    /// `(1, 1, 1)`: a dimension left out of a launch has size one.
    fn default() -> Self {
        Dim3::new(1, 1, 1)
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3::new(x, 1, 1)
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3::new(x, y, 1)
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3::new(x, y, z)
    }
}
impl From<[u32; 1]> for Dim3 {
    fn from([x]: [u32; 1]) -> Self {
        Dim3::new(x, 1, 1)
    }
}
impl From<[u32; 2]> for Dim3 {
    fn from([x, y]: [u32; 2]) -> Self {
        Dim3::new(x, y, 1)
    }
}
impl From<[u32; 3]> for Dim3 {
    fn from([x, y, z]: [u32; 3]) -> Self {
        Dim3::new(x, y, z)
    }
}

/// How far the ordering of a fence (or the effect of an atomic) reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The threads of this block (`.cta`).
    Block,
    /// Every thread of the device (`.gpu`).
    Device,
    /// The device and the host (`.sys`).
    System,
}
