//! Kernel arguments: the views of memory a launch lends a kernel, and how values passed to a
//! launch become them.
//!
//! Soundness rests here: a kernel trusts each (pointer, length) pair it receives. So the views
//! ([`InputArg`], [`OutputArg`]) are opaque and made only by ferrocuda, from a typed slice or a
//! [`DeviceBuffer`], whose length always matches its memory; an output can only come from memory
//! borrowed mutably; and [`KernelArg`] / [`KernelArgs`] are sealed. A user's own type takes part
//! by implementing [`InputData`] or [`OutputData`], whose only required method hands back one of
//! those views (see [`InputData`]'s example).

mod arg;
mod check;
mod kernel_arg;
mod views;

pub use arg::Arg;
pub(crate) use arg::ParamSlot;
pub(crate) use check::check_args;
pub(crate) use kernel_arg::{into_launch_args, into_ptx_args};
pub use kernel_arg::{KernelArg, KernelArgs, LaunchArg};
pub use views::{InputArg, InputData, OutputArg, OutputData};
