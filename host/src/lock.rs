//! [`lock`]: the one way the host locks its mutexes.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, also after a panic elsewhere poisoned it: every critical section in this
/// crate leaves its data whole (it swaps, inserts or replaces whole values), so a panic while
/// it was held leaves nothing half-written to refuse.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
