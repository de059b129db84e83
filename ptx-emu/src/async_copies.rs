//! The state of a thread's `cp.async` copies: the ones in flight and the groups committed. A
//! [`Block`](crate::block::Block) holds one per thread; [`async_copy`](crate::async_copy) issues and
//! completes them.

/// One issued copy not yet completed.
#[derive(Debug, Clone)]
pub(crate) struct PendingCopy {
    /// The commit group it belongs to (`None` until a `cp.async.commit_group`).
    pub(crate) group: Option<u32>,
    pub shared: usize,
    /// The global allocation's index and offset; absent when `src_bytes` is 0.
    pub global: Option<(usize, u64)>,
    pub bytes: u8,
    /// Bytes read from the source; the rest of `bytes` is zero-filled.
    pub src_bytes: u8,
}

/// Per thread: the copies in flight and how many groups it has committed.
#[derive(Debug, Default)]
pub(crate) struct AsyncCopies {
    pub(crate) pending: Vec<PendingCopy>,
    pub(crate) committed: u32,
}

impl AsyncCopies {
    /// The copy issued last, if still pending (a profiled launch counts its bytes).
    pub fn last(&self) -> Option<&PendingCopy> {
        self.pending.last()
    }

    pub fn commit(&mut self) {
        let group = self.committed;
        for copy in self.pending.iter_mut().filter(|c| c.group.is_none()) {
            copy.group = Some(group);
        }
        self.committed += 1;
    }
}
