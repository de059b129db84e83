//! The kernels of seven CUDA programs nobody here wrote, ported kernel for kernel (issue 30):
//! Rodinia's hotspot, nw, bfs, srad v2, kmeans and lud, PolyBench/GPU's fdtd-2d. Each module keeps the
//! original's kernel names (as PTX entry names where Rust's naming differs), block sizes and index
//! arithmetic, so it reads side by side with the `.cu` file it names. The host programs and their
//! CPU references are `examples/ports/src`; docs/ports.md compares them with the originals.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod bfs;
pub mod fdtd2d;
pub mod hotspot;
pub mod kmeans;
pub mod lud;
pub mod nw;
pub mod srad;

/// `IN_RANGE(x, min, max)` of hotspot.cu and pathfinder.cu.
#[inline(always)]
pub fn in_range(x: i32, min: i32, max: i32) -> bool {
    x >= min && x <= max
}
