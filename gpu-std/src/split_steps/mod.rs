//! The block-level steps `#[kernel]`'s split path calls on the CPU executor (host builds only):
//! at a block collective ([`crate::block::reduce`]) or a warp's `mma`/`mma_tiles` the macro ends
//! the region, each thread hands its part to the call site's state (`put`), and one step per
//! block (`fold`) does what the GPU's warps do, without suspending any thread. Above the language
//! (they use its scratch and tile types) and the CPU runtime (`crate::cpu`, whose regions they
//! step); generated code names them, kernel authors never do.

pub mod collective;
mod mma_collective;
