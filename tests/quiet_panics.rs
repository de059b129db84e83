//! A kernel panic on the CPU executor is returned as `Error::KernelPanicked`, with the message and
//! where it happened, and is not also printed by the default panic hook. Checked in a child
//! process (this test binary, re-run on one test with `--nocapture`), whose stderr is the real
//! one.

mod support;

use ferrocuda::{launch, Device};
use std::process::Command;

/// Set in the child: run the panicking launch and print its error.
const CHILD: &str = "FERROCUDA_QUIET_PANIC_CHILD";

/// The child's side: does nothing unless run by `a_kernel_panic_prints_nothing_on_stderr`.
#[test]
fn child_launches_a_panicking_kernel() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let module = Device::cpu().load(support::test_kernels()).unwrap();
    let mut x = vec![1.0f32; 64];
    x[37] = -1.0; // block 1, thread 5 of 32-thread blocks
    let mut out = vec![0.0f32; 64];
    let error =
        launch!(module, test_kernels::assert_non_negative[2, 32](&x, &mut out)).unwrap_err();
    println!("ERROR: {error}");
    // A panic outside a kernel still goes to the default hook.
    let outside = std::panic::catch_unwind(|| panic!("outside any kernel"));
    assert!(outside.is_err());
}

#[test]
fn a_kernel_panic_prints_nothing_on_stderr() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_launches_a_panicking_kernel",
            "--nocapture",
        ])
        .args(["--test-threads", "1"])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let error = stdout
        .lines()
        .find_map(|l| l.split_once("ERROR: ").map(|(_, error)| error))
        .unwrap_or_else(|| panic!("the child printed no error:\n{stdout}\n{stderr}"));
    for part in [
        "kernel `assert_non_negative` panicked on the CPU in block (1, 0, 0), thread (5, 0, 0)",
        "negative input (at test-kernels/src/lib.rs:",
    ] {
        assert!(error.contains(part), "{part:?} not in {error}");
    }
    // The default hook would print "thread '…' panicked at test-kernels/src/lib.rs:…" and,
    // with RUST_BACKTRACE=1, a backtrace: only the panic outside the kernel may show up.
    assert!(!stderr.contains("negative input"), "stderr:\n{stderr}");
    assert_eq!(
        stderr.matches("panicked at").count(),
        1,
        "stderr:\n{stderr}"
    );
    assert_eq!(
        stderr.matches("stack backtrace").count(),
        1,
        "stderr:\n{stderr}"
    );
    assert!(stderr.contains("outside any kernel"), "stderr:\n{stderr}");
}
