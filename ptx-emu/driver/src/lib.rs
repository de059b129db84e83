//! `libcuda.so` for tests: the CUDA driver API functions ferrocuda's host (through cudarc) calls,
//! over the PTX emulator (`ferrocuda-ptx-emu`). One virtual GPU, "ferrocuda PTX emulator (sm_90)",
//! whose kernels run on the calling thread; copies and launches finish before the call returns,
//! so streams and events only keep order and time (with `FERROCUDA_EMU_DEFER=1`, asynchronous
//! work waits in its stream until something needs it: `deferred.rs`). A kernel fault makes the context sticky-faulted,
//! as on hardware. Functions it does not implement return `CUDA_ERROR_NOT_SUPPORTED`.
//!
//! Load it by its path (`FERROCUDA_LIBCUDA=.../libferrocuda_emu_cuda.so`: ferrocuda-host opens it
//! before cudarc looks for `libcuda.so`, which is its soname), or from a directory on
//! `LD_LIBRARY_PATH` under the name `libcuda.so`. See docs/emulator.md.
//!
//! Every export is `unsafe extern "C"` with the driver API's contract: pointers the caller passes
//! are valid for what the CUDA documentation says the call reads or writes. Enum arguments arrive
//! as raw integers and are compared, never transmuted, so an unknown value is an error, not UB.

#![allow(non_snake_case, clippy::missing_safety_doc)]

mod context;
mod cudadevrt;
mod deferred;
mod deferred_run;
mod device;
mod errors;
mod ffi;
mod host_memory;
mod launch;
mod link;
mod memory;
mod module;
mod occupancy;
mod peer;
mod proc_address;
mod profile;
mod ptds;
mod ptx_header;
mod ptx_link;
mod ptx_opcodes;
mod state;
mod stream;
mod unsupported;
