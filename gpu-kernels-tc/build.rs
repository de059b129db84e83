//! Tells dependents where this package's source is (`DEP_FERROCUDA_KERNELS_TC_ROOT`, via
//! `links`), so ferrocuda's build script builds this very copy of the kernels to PTX at sm_80.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::metadata=root={}", env!("CARGO_MANIFEST_DIR"));
}
