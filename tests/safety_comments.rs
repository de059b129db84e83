//! Every `unsafe` block and `unsafe impl` in the repository's Rust sources says, in a
//! `// SAFETY:` comment, what it relies on (docs/safety.md lists them by what they rely on).
//! A comment right above (within 8 lines) counts; so does a grouped one, `// SAFETY (every
//! method): ...` or `// SAFETY (all four): ...`, within 60 lines above.

use std::path::{Path, PathBuf};

/// The source trees: every crate of the workspace, the examples, the tests and benches.
const ROOTS: &[&str] = &[
    "src",
    "build.rs",
    "benches",
    "examples",
    "tests",
    "gpu-std",
    "gpu-macros",
    "gpu-kernels",
    "gpu-builder",
    "host",
    "test-kernels",
    "ptx-emu",
];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Build output, and code written to show what must not compile.
    if name == "target" || name == "compile_fail" || name.starts_with('.') {
        return;
    }
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap().flatten() {
            rust_files(&entry.path(), out);
        }
    } else if name.ends_with(".rs") {
        out.push(path.to_path_buf());
    }
}

/// The code of a line, without its `//` comment (a `//` inside a string ends the code early,
/// which only hides code from the check, never flags a comment).
fn code_of(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// Whether the code opens an `unsafe` block or implements an `unsafe` trait (the patterns are
/// assembled so that this file does not match itself).
fn needs_comment(code: &str) -> bool {
    let keyword = "unsafe";
    [" {", "{", " impl"]
        .iter()
        .any(|rest| code.contains(&format!("{keyword}{rest}")))
}

fn has_comment(lines: &[&str], at: usize) -> bool {
    let near = &lines[at.saturating_sub(8)..=at];
    let grouped = &lines[at.saturating_sub(60)..=at];
    near.iter().any(|l| l.contains("SAFETY")) || grouped.iter().any(|l| l.contains("SAFETY ("))
}

#[test]
fn every_unsafe_block_says_what_it_relies_on() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for root in ROOTS {
        rust_files(&repo.join(root), &mut files);
    }
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut missing = Vec::new();
    let mut blocks = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if needs_comment(code_of(line)) {
                blocks += 1;
                if !has_comment(&lines, i) {
                    let path = file.strip_prefix(repo).unwrap_or(file).display();
                    missing.push(format!("{path}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        blocks > 100,
        "found only {blocks} unsafe blocks: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "unsafe without a `// SAFETY:` comment saying what it relies on:\n{}",
        missing.join("\n")
    );
}
