//! Generated kernels (tools/fuzz/gen_kernels.py) that tests/fuzz_split_path.rs runs on the CPU
//! executor's split path, its coroutine path and the PTX emulator, asserting the same bits
//! (issue 29: the split path and the coroutine path must never disagree). `src/corpus.rs` is a
//! fixed seed; `make fuzz SEED=n COUNT=m` compiles another corpus in its place.
#![no_std]
#![allow(
    unused_parens,
    unused_variables,
    unused_mut,
    unused_assignments,
    unused_comparisons
)]
#![allow(non_snake_case)]
#![allow(clippy::all)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[allow(unused_imports)]
use ferrocuda_std::half::{f16, f32_to_f16};
#[allow(unused_imports)]
use ferrocuda_std::mma::{self, mma, mma_tiles, AccTile, FragA, FragB, FragC};
#[allow(unused_imports)]
use ferrocuda_std::{kernel, shared, thread, warp, Out};

/// Every fuzz kernel's handle: `(x: &[u32], n: u32, out: Out<u32>)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type FuzzKernel = ferrocuda_std::abi::Kernel<(
    ferrocuda_std::abi::Slice<u32>,
    ferrocuda_std::abi::Scalar<u32>,
    ferrocuda_std::abi::Output<u32>,
)>;

include!(concat!(env!("OUT_DIR"), "/corpus.rs"));

mod found;
pub use found::*;
