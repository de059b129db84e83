//! Tests of the nested cargo's commands, environment, wrapper and outputs.

use super::*;

fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
}

#[test]
fn scrubs_host_build_env_and_keeps_the_rest() {
    let env = os(&[
        ("CARGO_CFG_TARGET_FEATURE", "fxsr,sse,sse2"),
        ("CARGO_CFG_TARGET_ARCH", "x86_64"),
        ("CARGO_FEATURE_STD", "1"),
        ("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-cpu=native"),
        ("CARGO_MAKEFLAGS", "-j --jobserver-fds=8,9"),
        ("PATH", "/usr/bin"),
        ("HOME", "/root"),
        ("CARGO_HOME", "/root/.cargo"),
        ("RUSTUP_TOOLCHAIN", "stable"),
        ("DEP_FERROCUDA_KERNELS_ROOT", "/k"),
        (
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
            "-Cdebuginfo=0",
        ),
    ]);
    let removed = env_to_remove(env.clone());
    for k in [
        "CARGO_CFG_TARGET_FEATURE",
        "CARGO_CFG_TARGET_ARCH",
        "CARGO_FEATURE_STD",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "CARGO_TARGET_DIR",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "TARGET",
        "HOST",
        "OUT_DIR",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
        "NUM_JOBS",
        "CARGO_PRIMARY_PACKAGE",
        "DEP_FERROCUDA_KERNELS_ROOT",
    ] {
        assert!(removed.iter().any(|r| r == k), "{k} not scrubbed");
    }
    for k in [
        "PATH",
        "HOME",
        "CARGO_HOME",
        "RUSTUP_TOOLCHAIN",
        "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
    ] {
        assert!(!removed.iter().any(|r| r == k), "{k} scrubbed");
    }

    let nested = Nested {
        cargo: "cargo".into(),
        rustc: "/usr/bin/rustc".into(),
        kernel_dir: "/k".into(),
        target_dir: "/t".into(),
        env_remove: env_to_remove(env),
        selection: Selection::default(),
    };
    let package = KernelPackage { name: "k".into() };
    let cmd = nested.ptx_command(Path::new("/t/wrappers/k/Cargo.toml"), &package, "sm_80");
    let envs: Vec<(&OsStr, Option<&OsStr>)> = cmd.get_envs().collect();
    let get = |k: &str| envs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    assert_eq!(get("RUSTC"), Some(Some(OsStr::new("/usr/bin/rustc"))));
    assert_eq!(get("RUSTC_BOOTSTRAP"), Some(Some(OsStr::new("1"))));
    assert_eq!(get("CARGO_CFG_TARGET_ARCH"), Some(None));
    assert_eq!(get("CARGO_ENCODED_RUSTFLAGS"), Some(None));
    assert_eq!(get("PATH"), None);
    assert_eq!(cmd.get_current_dir(), Some(Path::new("/k")));

    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let line = args.join(" ");
    assert!(line.starts_with("rustc --manifest-path /t/wrappers/k/Cargo.toml -p k --release --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type staticlib --target-dir /t --message-format=json"), "{line}");
    assert!(line.contains("--config profile.release.lto=true"), "{line}");
    assert!(
        line.contains("--config profile.release.panic=\"abort\""),
        "{line}"
    );
    assert!(
        line.ends_with("-- --emit=asm -C target-cpu=sm_80"),
        "{line}"
    );

    let check = nested.host_check_command(Path::new("/t/wrappers/k/Cargo.toml"), &package);
    let args: Vec<String> = check
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        args.join(" "),
        "check --manifest-path /t/wrappers/k/Cargo.toml -p k --target-dir /t --message-format=json"
    );
    assert_eq!(check.get_current_dir(), Some(Path::new("/k")));
}

#[test]
fn parses_cargo_dep_info() {
    let text = "/t/nvptx64-nvidia-cuda/release/libk.a: /k/src/lib.rs /k/src/my\\ dir/a.rs \\\n  /usr/lib/rustlib/src/rust/library/core/src/lib.rs\n\n/k/src/lib.rs:\n";
    assert_eq!(
        parse_dep_info(text),
        vec![
            PathBuf::from("/k/src/lib.rs"),
            PathBuf::from("/k/src/my dir/a.rs"),
            PathBuf::from("/usr/lib/rustlib/src/rust/library/core/src/lib.rs"),
        ]
    );
    assert_eq!(
        parse_dep_info("C:\\t\\libk.a: C:\\k\\src\\lib.rs\n"),
        vec![PathBuf::from("C:\\k\\src\\lib.rs")]
    );
    assert!(parse_dep_info("/t/libk.a:\n").is_empty());
    assert!(parse_dep_info("").is_empty());
}

#[test]
fn reads_cargo_artifact_messages() {
    let stdout = concat!(
        r#"{"reason":"compiler-artifact","package_id":"path+file:///usr/lib/rustlib/src/rust/library/core#0.0.0","manifest_path":"/usr/lib/rustlib/src/rust/library/core/Cargo.toml","filenames":["/t/nvptx64-nvidia-cuda/release/deps/libcore-1.rlib","/t/x.rmeta"],"fresh":true}"#,
        "\n",
        r#"{"reason":"compiler-artifact","package_id":"path+file:///k#tiny-kernels@0.1.0","manifest_path":"/k/Cargo.toml","target":{"kind":["staticlib"],"name":"tiny_kernels"},"filenames":["/t/nvptx64-nvidia-cuda/release/libtiny_kernels.a"],"executable":null,"fresh":false}"#,
        "\n",
        r#"{"reason":"build-finished","success":true}"#,
        "\n"
    );
    assert_eq!(
        find_artifact(stdout).unwrap(),
        PathBuf::from("/t/nvptx64-nvidia-cuda/release/libtiny_kernels.a")
    );
    assert!(find_artifact("").is_err());
}

#[test]
fn finds_the_asm_of_the_uplifted_archive_not_the_newest() {
    let root = std::env::temp_dir().join(format!("gpu-builder-find-asm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let deps = root.join("deps");
    std::fs::create_dir_all(&deps).unwrap();
    std::fs::write(deps.join("libk-aaaa.a"), "archive for sm_70").unwrap();
    std::fs::write(deps.join("k-aaaa.s"), ".target sm_70\n").unwrap();
    std::fs::write(deps.join("libk-bbbb.a"), "archive for sm_90").unwrap();
    std::fs::write(deps.join("k-bbbb.s"), ".target sm_90\n").unwrap();
    // Cargo uplifted the sm_70 unit (a fresh build, so older than the sm_90 files).
    let uplifted = root.join("libk.a");
    std::fs::copy(deps.join("libk-aaaa.a"), &uplifted).unwrap();
    assert_eq!(
        find_asm(&uplifted, "k", "sm_70").unwrap(),
        deps.join("k-aaaa.s")
    );

    // No archive matches: the newest .s for the arch.
    std::fs::write(&uplifted, "something else").unwrap();
    assert_eq!(
        find_asm(&uplifted, "k", "sm_90").unwrap(),
        deps.join("k-bbbb.s")
    );
    assert!(find_asm(&uplifted, "k", "sm_80").is_err());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn reads_the_package_name_from_the_manifest() {
    let manifest = "[workspace]\nname = \"no\"\n\n[package] # the kernels\nversion.workspace = true\nname = \"my-kernels\" # comment\n";
    assert_eq!(package_name(manifest).as_deref(), Some("my-kernels"));
    assert_eq!(package_name("[package]\nname='k'\n").as_deref(), Some("k"));
    assert_eq!(
        package_name("package.name = \"dotted\"\n").as_deref(),
        Some("dotted")
    );
    assert_eq!(
        package_name("[package]\nversion = \"0.1.0\"\n[dependencies]\nname = \"x\"\n"),
        None
    );
    assert_eq!(package_name("[package]\nnamespace = \"x\"\n"), None);
}

#[test]
fn the_wrapper_depends_on_the_kernel_crate_and_patches_crates_io() {
    let package = KernelPackage {
        name: "my-kernels".into(),
    };
    let mut patch = toml::Table::new();
    let mut crates_io = toml::Table::new();
    let mut entry = toml::Table::new();
    entry.insert("path".into(), "/reg/ferrocuda-std-0.1.0".into());
    crates_io.insert("ferrocuda-std".into(), entry.into());
    patch.insert("crates-io".into(), crates_io.into());
    let text = wrapper_manifest(
        Path::new("/ws/a \"b\"/k"),
        &package,
        patch,
        &Selection::default(),
    )
    .unwrap();
    let parsed: toml::Table = text.parse().expect("the wrapper manifest is TOML");
    let kernels = &parsed["dependencies"]["kernels"];
    assert_eq!(kernels["package"].as_str(), Some("my-kernels"), "{text}");
    assert_eq!(kernels["path"].as_str(), Some("/ws/a \"b\"/k"), "{text}");
    assert!(parsed["workspace"].is_table(), "{text}");
    assert_eq!(
        parsed["patch"]["crates-io"]["ferrocuda-std"]["path"].as_str(),
        Some("/reg/ferrocuda-std-0.1.0"),
        "{text}"
    );
    assert!(!wrapper_manifest(
        Path::new("/k"),
        &package,
        toml::Table::new(),
        &Selection::default()
    )
    .unwrap()
    .contains("[patch"));
}

#[test]
fn the_outer_workspaces_patches_reach_the_wrapper_with_absolute_paths() {
    let root = std::env::temp_dir().join(format!("gpu-builder-patches-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(
        workspace.join("Cargo.toml"),
        "[workspace]\nmembers = [\"app\"]\n\n[patch.crates-io]\n\
         ferrocuda-std = { path = \"../ferrocuda/gpu-std\" }\n\
         bytemuck = { git = \"https://example.com/bytemuck\" }\n\
         ferrocuda-host = { path = \"/abs/host\" }\n",
    )
    .unwrap();
    let lock = workspace.join("Cargo.lock");
    std::fs::write(&lock, "[[package]]\nname = \"my-kernels\"\n").unwrap();
    let package = KernelPackage {
        name: "my-kernels".into(),
    };
    // An explicit patch wins over the workspace's entry of the same name.
    let explicit = [(
        "ferrocuda-host".to_string(),
        PathBuf::from("/explicit/host"),
    )];
    let target = root.join("target");
    let manifest = write_wrapper(
        &target,
        &workspace,
        &package,
        &explicit,
        Some(&lock),
        &Selection::default(),
    )
    .unwrap();
    let text = std::fs::read_to_string(&manifest).unwrap();
    let parsed: toml::Table = text.parse().unwrap();
    let crates_io = &parsed["patch"]["crates-io"];
    assert_eq!(
        crates_io["ferrocuda-std"]["path"].as_str(),
        Some(workspace.join("../ferrocuda/gpu-std").to_str().unwrap()),
        "{text}"
    );
    assert_eq!(
        crates_io["bytemuck"]["git"].as_str(),
        Some("https://example.com/bytemuck"),
        "{text}"
    );
    assert_eq!(
        crates_io["ferrocuda-host"]["path"].as_str(),
        Some("/explicit/host"),
        "{text}"
    );
    // The outer lockfile is copied beside the wrapper manifest.
    assert_eq!(
        std::fs::read_to_string(manifest.with_file_name("Cargo.lock")).unwrap(),
        "[[package]]\nname = \"my-kernels\"\n"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn finds_the_outer_lockfile_that_lists_the_kernel_crate() {
    let root = std::env::temp_dir().join(format!("gpu-builder-lockfile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let kernel = root.join("registry/my-kernels-0.1.0");
    let out_dir = root.join("app/target/debug/build/app-1/out");
    std::fs::create_dir_all(&kernel).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    let starts = [out_dir.clone(), kernel.clone()];
    // An unrelated lockfile (above both) is skipped.
    std::fs::write(
        root.join("Cargo.lock"),
        "[[package]]\nname = \"unrelated\"\n",
    )
    .unwrap();
    assert_eq!(find_lockfile(&starts, "my-kernels"), None);
    // The kernel crate's own packaged lockfile is the last resort...
    let own = kernel.join("Cargo.lock");
    std::fs::write(&own, "[[package]]\nname = \"my-kernels\"\n").unwrap();
    assert_eq!(find_lockfile(&starts, "my-kernels"), Some(own));
    // ...after the outer workspace's, above OUT_DIR.
    let outer = root.join("app/Cargo.lock");
    std::fs::write(
        &outer,
        "[[package]]\nname = \"app\"\n\n[[package]]\nname = \"my-kernels\"\n",
    )
    .unwrap();
    assert_eq!(find_lockfile(&starts, "my-kernels"), Some(outer));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn features_go_into_the_wrapper_and_cfgs_become_rustc_arguments() {
    let selection = Selection {
        features: vec!["a".into(), "b".into()],
        no_default_features: true,
        cfgs: vec!["fast".into(), "tile=\"64\"".into()],
    };
    let dependency = toml::Value::Table(selection.dependency("k", "/k".into())).to_string();
    assert!(
        dependency.contains("features = [\"a\", \"b\"]"),
        "{dependency}"
    );
    assert!(
        dependency.contains("default-features = false"),
        "{dependency}"
    );
    assert!(dependency.contains("package = \"k\""), "{dependency}");
    let plain = toml::Value::Table(Selection::default().dependency("k", "/k".into())).to_string();
    assert!(!plain.contains("features"), "{plain}");
    assert_eq!(
        selection.rustc_args(),
        [
            "--cfg",
            "fast",
            "--check-cfg",
            "cfg(fast)",
            "--cfg",
            "tile=\"64\"",
            "--check-cfg",
            "cfg(tile, values(\"64\"))"
        ]
    );
}
