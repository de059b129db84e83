//! A thread's save stack for recursive calls ([`Saved`]): the state a
//! [`Block`](crate::block::Block) holds per thread; [`recursion`](crate::recursion) pushes and pops it.

/// A thread's saved activations of recursive functions, innermost last.
#[derive(Debug, Default)]
pub(crate) struct Saved {
    /// Each saved activation's registers, then the stack bytes in use before it began.
    pub(crate) registers: Vec<u64>,
    /// Each saved activation's call-parameter bytes (its `Frame::params`, in order).
    pub(crate) params: Vec<u8>,
    /// Bytes of the stack in use (past `Program::stack_base`).
    pub(crate) used: u32,
    /// Return values in transit from a callee to its caller (reused).
    pub(crate) returning: Vec<u8>,
}
