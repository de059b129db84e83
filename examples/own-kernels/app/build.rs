fn main() {
    let built = ferrocuda_builder::PtxBuilder::new("../my-kernels")
        .build()
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
    built.emit_rerun_if_changed(); // rebuild when the kernels' sources change
    println!(
        "cargo:rustc-env=MY_KERNELS_PTX={}",
        built.ptx_path.display()
    );
}
