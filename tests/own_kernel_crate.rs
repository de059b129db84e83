//! The third way to use ferrocuda: a user's own kernel crate, built to PTX by the user's build.rs
//! with ferrocuda-builder and launched through ferrocuda-host. Builds and tests examples/own-kernels, a
//! workspace of its own, in a target directory of its own.

mod support;

#[test]
fn a_users_own_kernel_crate_builds_to_ptx_and_runs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("examples/own-kernels/Cargo.toml");
    let stdout = support::stdout_of(&mut support::cargo_for_user_crates(&[
        "test",
        "--manifest-path",
        manifest.to_str().unwrap(),
    ]));
    for test in [
        "scaled_square_matches_an_f64_loop_on_the_cpu",
        // shared memory and barriers in a user's crate: its own `.shared` symbols, checked mode
        "block_max_matches_a_loop_in_checked_mode",
        // a generic kernel: one PTX entry per instance, picked by the arguments or a turbofish
        "each_instance_of_the_generic_block_max_runs",
    ] {
        assert!(stdout.contains(&format!("test {test} ... ok")), "{stdout}");
    }
}
