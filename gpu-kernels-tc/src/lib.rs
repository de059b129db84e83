//! ferrocuda's tensor-core kernels: the kernels whose PTX needs sm_80 (`mma.sync`, `ldmatrix`,
//! `cp.async`).
//!
//! They live apart from `ferrocuda-kernels` because a PTX module has one `.target`: the rest of
//! the library is built for sm_70 (so it runs on a V100), these for sm_80. `ferrocuda`'s build
//! script builds this small crate a second time, at sm_80, into its own module
//! (`ferrocuda::TENSOR_KERNELS`); a host loads it only when it calls a tensor-core op, and loading
//! it on an older GPU is `Error::GpuTooOld`. A crate of its own (rather than a feature of
//! `ferrocuda-kernels` built twice) keeps the second build to these few kernels.
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod matmul;
