//! The CPU backend, beside the CUDA backend in `cuda/`: [`launch`] runs a kernel's CPU build on
//! rayon's pool. (Its options stay public at `crate::cpu_options`.)

mod launch;

pub(crate) use launch::{launch, CpuLaunch};
