//! The corpus the crate compiles: `src/corpus.rs` (committed, a fixed seed), or the file
//! `FERROCUDA_FUZZ_CORPUS` names (`make fuzz` generates one per seed).
fn main() {
    println!("cargo:rerun-if-env-changed=FERROCUDA_FUZZ_CORPUS");
    let source = match std::env::var_os("FERROCUDA_FUZZ_CORPUS") {
        Some(path) if !path.is_empty() => std::path::PathBuf::from(path),
        _ => std::path::PathBuf::from("src/corpus.rs"),
    };
    println!("cargo:rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("the fuzz corpus {}: {e}", source.display()));
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("corpus.rs"), text).expect("writing the corpus to OUT_DIR");
}
