//! The driver layer through cudarc, as ferrocuda-host uses it: device identity, memory round
//! trips, memset, out of memory, events, module loading with the JIT's logs, and a faulting
//! kernel that leaves its context sticky-faulted while a new context works.
//!
//! Every test opens the emulator's library by its path first (`support::load_emulator`). One test
//! binary, one file per subject.

mod common;
mod contexts;
mod deadline;
mod deferred;
mod device;
mod memory;
mod modules;
#[path = "../support/mod.rs"]
mod support;
