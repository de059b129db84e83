//! The expansion, checked on its tokens (the end-to-end checks are the workspace's tests), one
//! file per subject.

mod generics;
mod options;
mod regions;
mod shared;
mod signature;
mod support;
