//! Constant memory on the host: a table lives in the module's memory (each module, each device,
//! its own), looked up by its name in the launch's tables (`cpu/constants.rs`). The same names
//! as `nvptx/constant.rs`, so `constant.rs` makes one call on either machine.

/// Where a table's elements are: the launch's copy of it, as `u64` words (8-byte aligned for
/// every element type), kept alive by the view.
pub(crate) type Elements = std::sync::Arc<[u64]>;

/// The elements of the table `name`, `bytes` long, in the running launch's tables.
#[inline(always)]
pub(crate) fn elements(name: &str, bytes: usize) -> Elements {
    crate::cpu::constant_table(name, bytes)
}

/// Element `index` of the table at `elements`.
///
/// # Safety
/// None on the host (a slice read, bounds-checked); the GPU's needs `index` inside the table.
#[inline(always)]
pub(crate) unsafe fn read<T: bytemuck::Pod>(elements: &Elements, index: usize) -> T {
    let bytes: &[u8] = bytemuck::cast_slice(elements);
    let at = index * core::mem::size_of::<T>();
    bytemuck::pod_read_unaligned(&bytes[at..at + core::mem::size_of::<T>()])
}

/// The element types a table holds; a bound of `ConstElement`, with nothing to do on the host
/// (its reads are plain copies). Not nameable outside the crate.
pub trait Load {}

impl Load for f32 {}
impl Load for f64 {}
impl Load for u32 {}
impl Load for i32 {}
impl Load for u64 {}
impl Load for i64 {}
