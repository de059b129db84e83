//! The README's quick start, verbatim: every code block marked `file=PATH` is written to PATH in a
//! fresh directory outside this workspace, which then builds the kernel crate to PTX and runs the
//! app. Its `ferrocuda-*` dependencies are crates.io versions; a `[patch.crates-io]` in the
//! directory's own workspace points them at this repository, as publishing would.
//!
//! A README edit that breaks the quick start fails here.

mod support;

use std::path::{Path, PathBuf};

/// The code blocks of `markdown` whose info string has `file=PATH`: (PATH, contents).
fn file_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in markdown.lines() {
        match &mut current {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    if let Some(path) = info
                        .split_whitespace()
                        .find_map(|w| w.strip_prefix("file="))
                    {
                        current = Some((path.to_string(), String::new()));
                    }
                }
            }
            Some((_, body)) if line.trim_end() != "```" => {
                body.push_str(line);
                body.push('\n');
            }
            Some(_) => blocks.push(current.take().expect("inside a block")),
        }
    }
    assert!(current.is_none(), "a `file=` code block is not closed");
    blocks
}

/// This repository's crates, as `[patch.crates-io]` entries.
fn patch_section(root: &Path) -> String {
    let mut patch = String::from("[patch.crates-io]\n");
    for (name, dir) in [
        ("ferrocuda-std", "gpu-std"),
        ("ferrocuda-macros", "gpu-macros"),
        ("ferrocuda-host", "host"),
        ("ferrocuda-builder", "gpu-builder"),
    ] {
        let path = root.join(dir);
        patch.push_str(&format!(
            "{name} = {{ path = {:?} }}\n",
            path.display().to_string()
        ));
    }
    patch
}

#[test]
fn the_blocks_are_found_with_their_paths() {
    let markdown = "text\n```toml file=a/Cargo.toml\n[package]\n```\n```rust\nnot a file\n```\n\
                    ```rust file=a/src/lib.rs\nfn f() {}\n\nfn g() {}\n```\n";
    assert_eq!(
        file_blocks(markdown),
        [
            ("a/Cargo.toml".to_string(), "[package]\n".to_string()),
            (
                "a/src/lib.rs".to_string(),
                "fn f() {}\n\nfn g() {}\n".to_string()
            ),
        ]
    );
}

#[test]
fn the_readme_quick_start_builds_and_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = file_blocks(&readme);
    let paths: Vec<&str> = blocks.iter().map(|(p, _)| p.as_str()).collect();
    for expected in [
        "my-kernels/Cargo.toml",
        "my-kernels/src/lib.rs",
        "my-app/Cargo.toml",
        "my-app/build.rs",
        "my-app/src/main.rs",
    ] {
        assert!(
            paths.contains(&expected),
            "README's quick start lacks {expected}: {paths:?}"
        );
    }

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-quick-start");
    let _ = std::fs::remove_dir_all(&dir);
    for (path, body) in &blocks {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().expect("a file has a folder")).expect("mkdir");
        std::fs::write(&file, body).expect("write a quick-start file");
    }
    // The user's two crates are one workspace of their own here (so the patch applies to both),
    // pinned to this repository's lock file so no newer dependency sneaks in.
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[workspace]\nmembers = [\"my-kernels\", \"my-app\"]\nresolver = \"2\"\n\n{}",
            patch_section(root)
        ),
    )
    .expect("write the workspace manifest");
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");

    // Debug, unlike the README's `--release`: it shares tests/own_kernel_crate.rs's build.
    let stdout = support::stdout_of(
        support::cargo_for_user_crates(&["run", "--quiet"])
            .current_dir(dir.join("my-app"))
            .env("FERROCUDA_DEVICE", "cpu"),
    );
    assert!(
        stdout.contains("1000000 sums on ") && stdout.contains("out[41] = 42"),
        "unexpected output of the quick start:\n{stdout}"
    );
}
