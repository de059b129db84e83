//! The ported program of [`ferrocuda_ports::hotspot`]: seeded input, the kernels on `Device::best()`
//! (`FERROCUDA_DEVICE=cpu` for the CPU executor), the CPU reference, and exit status 1 on a
//! mismatch. `PORTS_SCALE=N` makes the input N times larger per side; `PORTS_SEED` changes it.
//!
//! `cargo run --release -p ferrocuda-ports --example rodinia_hotspot`

fn main() -> std::process::ExitCode {
    ferrocuda_ports::example_main::<ferrocuda_ports::hotspot::Hotspot>()
}
