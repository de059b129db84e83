//! Tells dependents where this package's source is (`DEP_FERROCUDA_MACROS_ROOT`, via `links`):
//! a build script that compiles kernels to PTX points its nested cargo at the same source the
//! outer build uses (see ferrocuda-builder's `PtxBuilder::patch_crates_io`).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::metadata=root={}", env!("CARGO_MANIFEST_DIR"));
}
