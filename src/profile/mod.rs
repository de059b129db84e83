//! How kernels would run on a GPU, without one: the PTX emulator's counters per launch (Nsight
//! Compute's definitions, counted exactly from every lane's addresses), theoretical occupancy on
//! a named GPU from ptxas's resources and published tables, and an *estimated* time from a
//! roofline model. `ferrocuda profile` prints them for the main job's workloads; docs/profile.md
//! explains every number and the model's assumptions.
//!
//! Your own program: run it on the emulator with [`PROFILE_ENV`] naming a file,
//!
//! ```sh
//! FERROCUDA_LIBCUDA=$PWD/target/debug/libferrocuda_emu_cuda.so \
//! FERROCUDA_EMU_PROFILE=launches.jsonl cargo run --release
//! ferrocuda profile --from launches.jsonl --gpu h100
//! ```
//!
//! and each launch appends one JSON line ([`LaunchRecord`]); [`read`] and [`rows`] give the same
//! table in a program.

mod estimate;
mod gpus;
mod records;
mod rows;
mod table;

pub use estimate::{estimate, Estimate};
pub use gpus::{gpu, occupancy, Gpu, Limiter, Occupancy, GPUS};
pub use records::{
    read, read_from, Counters, GlobalTraffic, LaunchRecord, SharedTraffic, PROFILE_ENV,
};
pub use rows::{ptxas_resources, rows, KernelRow};
pub use table::table;
