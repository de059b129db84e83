//! Tells dependents where this package's source is, and its ferrocuda-macros' (`links`
//! metadata: `DEP_FERROCUDA_STD_ROOT`, `DEP_FERROCUDA_STD_MACROS_ROOT`): a build script that
//! compiles kernels to PTX points its nested cargo at the same sources the outer build uses
//! (see ferrocuda-builder's `PtxBuilder::patch_crates_io`).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=DEP_FERROCUDA_MACROS_ROOT");
    println!("cargo::metadata=root={}", env!("CARGO_MANIFEST_DIR"));
    if let Ok(macros) = std::env::var("DEP_FERROCUDA_MACROS_ROOT") {
        println!("cargo::metadata=macros_root={macros}");
    }
}
