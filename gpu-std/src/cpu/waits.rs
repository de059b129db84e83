//! What a suspended simulated thread waits for ([`Wait`]): a block barrier or a warp operation
//! ([`WarpOp`]), and the warp's width. The vocabulary the cooperative scheduler (`block.rs`)
//! matches and the layers above it pass; below all of them, so that the shared-memory checks and
//! the `mma` release can name it without importing the scheduler.

use core::panic::Location;

/// Lanes per warp.
pub(crate) const WARP: usize = 32;

/// What the scheduler calls to complete a warp's [`rendezvous`]: `lanes[l]` is lane `l`'s
/// pointer to its [`Lane`], of the type the function was made for.
pub(crate) type Release = unsafe fn(&[u64; WARP]);

/// A warp operation, as the scheduler matches and computes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarpOp {
    ShflIdx,
    ShflUp,
    ShflDown,
    ShflXor,
    All,
    Any,
    Ballot,
    Sync,
    /// Every lane gets every lane's value (see [`super::block::gathered`]): a whole warp reduction in one
    /// suspension instead of six shuffles.
    Gather,
    /// A tensor-core `mma` of the whole warp (`crate::mma`): each lane's value points to its
    /// operands, which the release multiplies.
    Mma(crate::tensor_core::Kind),
    /// A warp's `mma_tiles` (`crate::mma::mma_tiles`): each lane's value points to its
    /// windows and accumulators, behind the release function (its address, which also tells
    /// one call's types from another's: lanes join only the same).
    MmaTiles(usize),
}

impl WarpOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            WarpOp::ShflIdx => "shfl_sync",
            WarpOp::ShflUp => "shfl_up_sync",
            WarpOp::ShflDown => "shfl_down_sync",
            WarpOp::ShflXor => "shfl_xor_sync",
            WarpOp::All => "all_sync",
            WarpOp::Any => "any_sync",
            WarpOp::Ballot => "ballot_sync",
            WarpOp::Sync => "sync_warp",
            WarpOp::Gather => "warp::reduce",
            WarpOp::Mma(_) => "mma::mma",
            WarpOp::MmaTiles(_) => "mma::mma_tiles",
        }
    }
}

/// Where a suspended thread waits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    Barrier {
        site: &'static Location<'static>,
        /// The thread's predicate, for `sync_threads_count/and/or`.
        predicate: bool,
    },
    Warp {
        op: WarpOp,
        mask: u32,
        /// The lane's value (shuffles) or predicate (votes).
        value: u64,
        /// Source lane, delta or xor mask (shuffles).
        arg: u32,
        site: &'static Location<'static>,
    },
}
