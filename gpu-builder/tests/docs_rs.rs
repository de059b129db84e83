//! With `DOCS_RS` set (docs.rs, which has no network and no rust-src) the builder compiles
//! nothing and returns placeholder PTX. A test binary of its own: it sets the variable for its
//! whole process.

use std::path::{Path, PathBuf};

use ferrocuda_builder::{PtxBuilder, ToolchainSource};

#[test]
fn docs_rs_builds_get_a_placeholder_without_a_toolchain() {
    std::env::set_var("DOCS_RS", "1");
    // A rustc that cannot exist: the placeholder must not look for a toolchain at all.
    std::env::set_var("FERROCUDA_KERNEL_RUSTC", "/nonexistent/rustc");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("docs-rs-target");
    let built =
        PtxBuilder::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-kernels"))
            .target_dir(&target)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(built.placeholder);
    assert_eq!(built.crate_name, "tiny_kernels");
    assert_eq!(built.ptx_path, target.join("tiny_kernels.ptx"));
    assert_eq!(std::fs::read_to_string(&built.ptx_path).unwrap(), built.ptx);
    assert!(built.ptx.contains("DOCS_RS"), "{}", built.ptx);
    assert!(built.entry_names().is_empty());
    assert_eq!(built.toolchain.source, ToolchainSource::NotBuilt);
    assert!(std::fs::read_to_string(&built.report_path)
        .unwrap()
        .contains("DOCS_RS"));
}
