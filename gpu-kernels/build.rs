//! Tells dependents where this package's source is (`DEP_FERROCUDA_KERNELS_ROOT`, via `links`),
//! so ferrocuda's build script builds this very copy of the kernels to PTX, wherever cargo put it
//! (the workspace, the registry cache, a `cargo package` directory).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::metadata=root={}", env!("CARGO_MANIFEST_DIR"));
}
