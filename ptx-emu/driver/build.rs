//! Gives the cdylib the soname `libcuda.so`: after a program has loaded it by its path, the
//! system's loader answers `dlopen("libcuda.so")` (what cudarc asks for) with it.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so");
    }
}
