//! The ported program of [`ferrocuda_ports::lud`]: the original's matrix, the kernels on
//! `Device::best()` (`FERROCUDA_DEVICE=cpu` for the CPU executor), the CPU reference, and exit
//! status 1 on a mismatch. `PORTS_SCALE=N` makes the matrix N times larger per side.
//!
//! `cargo run --release -p ferrocuda-ports --example rodinia_lud`

fn main() -> std::process::ExitCode {
    ferrocuda_ports::example_main::<ferrocuda_ports::lud::Lud>()
}
