//! Builds the fixture kernel crate (tests/fixtures/tiny-kernels) to PTX with the real kernel
//! toolchain, and checks it with ptxas for sm_70, sm_80 and sm_90.
//!
//! Without a kernel toolchain or ptxas the checks print "skipped: ..." (they fail when `CI` is
//! set). The first run compiles `core` for NVPTX (about 20 s); later runs reuse it.

mod common;

use std::path::{Path, PathBuf};

use ferrocuda_builder::{
    assemble, find_kernel_toolchain, find_ptxas, BuildError, PtxBuilder, PtxasMode,
};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-kernels")
}

/// One target dir for every build in these tests, so `core` is compiled for NVPTX once. Tests
/// running in parallel must build crates of different names: the `.ptx` name is per crate.
fn kernel_target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-target")
}

#[test]
fn builds_tiny_kernels_and_assembles_for_sm_70_80_90() {
    let toolchain = match find_kernel_toolchain() {
        Ok(t) => t,
        Err(e) => return common::skip(&format!("no kernel toolchain:\n{e}")),
    };
    let built = PtxBuilder::new(fixture())
        .arch("sm_70")
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Auto)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));

    assert_eq!(built.toolchain, toolchain);
    assert_eq!(built.crate_name, "tiny_kernels");
    assert_eq!(built.ptx_path, kernel_target_dir().join("tiny_kernels.ptx"));
    assert_eq!(std::fs::read_to_string(&built.ptx_path).unwrap(), built.ptx);
    assert!(built.ptx.contains(".target sm_70"), "{}", built.ptx);
    assert!(built.ptx.contains(".entry add_one("), "{}", built.ptx);
    assert_eq!(built.entry_names(), vec!["add_one"]);
    assert_eq!(built.arch, "sm_70");

    let lib_rs = fixture().join("src/lib.rs").canonicalize().unwrap();
    assert!(
        built
            .sources
            .iter()
            .any(|s| s.canonicalize().ok().as_ref() == Some(&lib_rs)),
        "{:?}",
        built.sources
    );
    let rustlib = toolchain.sysroot.join("lib/rustlib");
    assert!(
        built.sources.iter().all(|s| !s.starts_with(&rustlib)),
        "{:?}",
        built.sources
    );
    let lines = built.rerun_if_changed_lines();
    assert!(
        lines.iter().any(|l| l.ends_with("tiny-kernels/Cargo.toml")),
        "{lines:?}"
    );

    let report_file = kernel_target_dir().join("tiny_kernels.ptxas.txt");
    assert!(report_file.is_file());
    match (&built.ptxas, &built.report) {
        (Some(p), Some(report)) => {
            println!("{report}\nby {p}");
            assert!(report.kernel("add_one").is_some(), "{report}");
            assert!(std::fs::read_to_string(&report_file)
                .unwrap()
                .contains("add_one"));
        }
        _ => common::skip("ptxas not found for sm_70 (builder ran without the check)"),
    }

    // The same sm_70 PTX must assemble for newer GPUs too (what the driver's JIT will do).
    for arch in ["sm_70", "sm_80", "sm_90"] {
        let Some(ptxas) = find_ptxas(arch) else {
            common::skip(&format!(
                "ptxas not found for {arch} (FERROCUDA_PTXAS, PATH, CUDA_HOME, pip nvidia-cuda-nvcc-cu12 / nvidia-cuda-nvcc)"
            ));
            continue;
        };
        let report = assemble(&ptxas, &built.ptx_path, arch).unwrap_or_else(|e| panic!("{e}"));
        println!("{report}\nby {ptxas}");
        assert_eq!(report.arch, arch);
        let k = report
            .kernel("add_one")
            .unwrap_or_else(|| panic!("no add_one in\n{report}"));
        assert!(k.registers > 0, "{report}");
        assert_eq!(k.spill_store_bytes, 0, "{report}");
    }

    // Building for sm_90 directly (same target dir: `core` is reused, the stable `.ptx` name is
    // overwritten, which is why this runs after the checks above and not in a parallel test).
    if find_ptxas("sm_90").is_none() {
        return common::skip("ptxas not found for sm_90");
    }
    let built = PtxBuilder::new(fixture())
        .arch("sm_90")
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Require)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(built.ptx.contains(".target sm_90"), "{}", built.ptx);
    let report = built.report.as_ref().expect("Require ran ptxas");
    assert_eq!(report.arch, "sm_90");
    assert!(report.kernel("add_one").is_some(), "{report}");

    // Back to sm_70: cargo finds that unit fresh and does not rewrite its (older) `.s`; the
    // builder must still pick it, not the newer sm_90 one.
    let again = PtxBuilder::new(fixture())
        .arch("sm_70")
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Skip)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(again.ptx.contains(".target sm_70"), "{}", again.ptx);
}

/// Copies the fixture under a new name with `lib.rs` replaced, for builds that must fail.
fn variant(name: &str, lib_rs: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = std::fs::read_to_string(fixture().join("Cargo.toml"))
        .unwrap()
        .replace("name = \"tiny-kernels\"", &format!("name = \"{name}\""));
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib_rs).unwrap();
    dir
}

#[test]
fn rustc_errors_and_kernel_less_crates_are_reported() {
    if let Err(e) = find_kernel_toolchain() {
        return common::skip(&format!("no kernel toolchain:\n{e}"));
    }
    let good = std::fs::read_to_string(fixture().join("src/lib.rs")).unwrap();

    // An error the host build of the kernel crate reports too: cargo prints it there, so the
    // PTX build's message counts it and says where to see it, without repeating it.
    let broken = variant(
        "broken-kernels",
        &format!("{good}\npub fn oops() -> u32 {{ \"not a number\" }}\n"),
    );
    let err = PtxBuilder::new(&broken)
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Skip)
        .build()
        .unwrap_err();
    let BuildError::CargoFailed(failure) = &err else {
        panic!("expected CargoFailed, got {err:?}")
    };
    let command = &failure.command;
    assert!(
        command.contains("-Zbuild-std=core") && command.contains("RUSTC="),
        "{command}"
    );
    assert!(failure.stderr.contains("mismatched types"), "{failure:?}");
    assert!(failure.gpu_only_errors.is_empty(), "{failure:?}");
    assert_eq!(failure.also_on_host, 1);
    let message = err.to_string();
    println!("{message}");
    assert!(!message.contains("mismatched types"), "{message}");
    assert!(!message.contains("-Zbuild-std"), "{message}");
    assert!(
        message.contains("cargo check -p broken-kernels"),
        "{message}"
    );
    let log = std::fs::read_to_string(&failure.log_path).unwrap();
    assert!(
        log.contains("-Zbuild-std=core") && log.contains("mismatched types"),
        "{log}"
    );

    let empty = variant(
        "no-kernels",
        &good
            .replace(
                "pub unsafe extern \"ptx-kernel\" fn add_one",
                "unsafe extern \"ptx-kernel\" fn add_one",
            )
            .replace("#[unsafe(no_mangle)]\n", "#[allow(dead_code)]\n"),
    );
    let err = PtxBuilder::new(&empty)
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Skip)
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, BuildError::InvalidPtx { reason, .. } if reason.contains("no kernels")),
        "{err:?}"
    );
}

#[test]
fn bad_arguments_fail_before_building() {
    let err = PtxBuilder::new(fixture()).arch("sm70").build().unwrap_err();
    assert!(matches!(err, BuildError::InvalidArch { .. }), "{err:?}");
    let err = PtxBuilder::new(fixture().join("missing"))
        .build()
        .unwrap_err();
    assert!(
        matches!(err, BuildError::ManifestNotFound { .. }),
        "{err:?}"
    );
}

#[test]
fn errors_only_the_gpu_build_sees_are_shown_once_with_a_ferrocuda_std_hint() {
    if let Err(e) = find_kernel_toolchain() {
        return common::skip(&format!("no kernel toolchain:\n{e}"));
    }
    let good = std::fs::read_to_string(fixture().join("src/lib.rs")).unwrap();
    // `f32::exp` exists on the host (std) but not on the GPU (core only); the type error is
    // reported by both builds.
    let crate_dir = variant(
        "gpu-only-error-kernels",
        &format!(
            "{good}\n#[cfg(not(target_arch = \"nvptx64\"))]\nextern crate std;\n\
             pub fn growth(x: f32) -> f32 {{ x.exp() }}\n\
             pub fn oops() -> u32 {{ \"not a number\" }}\n"
        ),
    );
    let err = PtxBuilder::new(&crate_dir)
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Skip)
        .build()
        .unwrap_err();
    let message = err.to_string();
    println!("{message}");
    let BuildError::CargoFailed(failure) = &err else {
        panic!("expected CargoFailed, got {err:?}")
    };
    assert_eq!(failure.gpu_only_errors.len(), 1, "{failure:?}");
    assert_eq!(failure.also_on_host, 1);
    assert!(
        message.contains("only the GPU build (nvptx64-nvidia-cuda) reports these errors:"),
        "{message}"
    );
    assert_eq!(
        message.matches("no method named `exp`").count(),
        1,
        "{message}"
    );
    assert!(message.contains("ferrocuda_std::math::exp(x)"), "{message}");
    assert!(!message.contains("compiler_builtins"), "{message}");
    assert!(!message.contains("mismatched types"), "{message}");
    assert!(message.contains("1 more error(s)"), "{message}");
    assert!(!message.contains("-Zbuild-std"), "{message}");
}

/// Copies the fixture kernel crate to a fresh directory without its Cargo.lock, as cargo
/// unpacks a crate from a registry or `cargo package` does.
fn unpacked_copy(name: &str, manifest: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("unpacked")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(fixture().join("src/lib.rs"), dir.join("src/lib.rs")).unwrap();
    dir
}

#[test]
fn a_kernel_crate_outside_any_workspace_is_built_without_writing_into_it() {
    if let Err(e) = find_kernel_toolchain() {
        return common::skip(&format!("no kernel toolchain:\n{e}"));
    }
    // A crate.io-style dependency that crates.io does not have: only the patch can provide it,
    // as in `cargo package`'s verification, where ferrocuda-std is in cargo's temporary registry.
    let dep = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("unpacked/fcb-fixture-dep");
    std::fs::create_dir_all(dep.join("src")).unwrap();
    std::fs::write(
        dep.join("Cargo.toml"),
        "[package]\nname = \"ferrocuda-builder-fixture-dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        dep.join("src/lib.rs"),
        "#![no_std]\n/// One.\npub const ONE: f32 = 1.0;\n",
    )
    .unwrap();
    // The manifest as `cargo package` writes it: no `[workspace]`, dependencies by version.
    let crate_dir = unpacked_copy(
        "unpacked-kernels",
        "[package]\nname = \"unpacked-kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nferrocuda-builder-fixture-dep = \"0.1.0\"\n",
    );
    let lib_rs = crate_dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib_rs).unwrap();
    std::fs::write(
        &lib_rs,
        source.replace("+= 1.0", "+= ferrocuda_builder_fixture_dep::ONE"),
    )
    .unwrap();

    let built = PtxBuilder::new(&crate_dir)
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Skip)
        .patch_crates_io("ferrocuda-builder-fixture-dep", &dep)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(built.entry_names(), vec!["add_one"]);
    assert_eq!(built.crate_name, "unpacked_kernels");
    let mut written: Vec<String> = std::fs::read_dir(&crate_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        ["Cargo.toml", "src"],
        "the build wrote into the kernel crate"
    );
    let wrapper = kernel_target_dir().join("wrappers/unpacked-kernels");
    assert!(wrapper.join("Cargo.lock").is_file());
}

#[test]
fn the_outer_lockfile_pins_the_nested_builds_versions() {
    if let Err(e) = find_kernel_toolchain() {
        return common::skip(&format!("no kernel toolchain:\n{e}"));
    }
    let crate_dir = unpacked_copy(
        "locked-kernels",
        "[package]\nname = \"locked-kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    // A lockfile next to it that lists it, as the outer workspace's would.
    let lock = "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\n\
                version = 4\n\n[[package]]\nname = \"locked-kernels\"\nversion = \"0.1.0\"\n";
    std::fs::write(crate_dir.join("Cargo.lock"), lock).unwrap();
    let built = PtxBuilder::new(&crate_dir)
        .target_dir(kernel_target_dir())
        .ptxas(PtxasMode::Skip)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        built.lockfile.as_deref(),
        Some(
            crate_dir
                .join("Cargo.lock")
                .canonicalize()
                .unwrap()
                .as_path()
        )
    );
    assert!(built
        .rerun_if_changed_lines()
        .iter()
        .any(|l| l.ends_with("locked-kernels/Cargo.lock")));
    assert_eq!(
        std::fs::read_to_string(crate_dir.join("Cargo.lock")).unwrap(),
        lock
    );
}

/// Issue 30, point 9: a kernel crate's features and cfgs reach the PTX build, and a build
/// without them does not have their kernels. Its own target directory: the same crate is built
/// twice, in order.
#[test]
fn features_and_cfgs_reach_the_ptx_build() {
    if let Err(e) = find_kernel_toolchain() {
        return common::skip(&format!("no kernel toolchain:\n{e}"));
    }
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-target-selection");
    let plain = PtxBuilder::new(fixture())
        .target_dir(&target)
        .ptxas(PtxasMode::Skip)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plain.entry_names(), vec!["add_one"]);
    let selected = PtxBuilder::new(fixture())
        .target_dir(&target)
        .ptxas(PtxasMode::Skip)
        .features(["extra"])
        .cfg("tile = \"64\"")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut names = selected.entry_names();
    names.sort();
    assert_eq!(names, vec!["add_one", "with_extra_feature", "with_tile_64"]);
    assert!(
        !selected.cargo_log.contains("unexpected `cfg`"),
        "the cfg is declared to rustc's lint:\n{}",
        selected.cargo_log
    );
}
