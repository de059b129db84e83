//! What several test files use: a one-store kernel and its launch, a buffer's address, and
//! running one test again in a child process.

use cudarc::driver::{CudaContext, DriverError, PushKernelArg};
use std::sync::Arc;

pub(crate) const STORE_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .entry store_seven(.param .u64 p)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\n\
    \tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

/// Loads STORE_PTX into `ctx` and launches `store_seven` on one thread with `address`.
pub(crate) fn store_seven_at(ctx: &Arc<CudaContext>, address: u64) -> Result<(), DriverError> {
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(STORE_PTX))?;
    let store = module.load_function("store_seven")?;
    let stream = ctx.default_stream();
    let mut builder = stream.launch_builder(&store);
    builder.arg(&address);
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes one u64 and stores 4 bytes there; the emulator checks the
    // address (a bad one is what some tests want).
    unsafe { builder.launch(config) }.map(|_| ())
}

/// `slice`'s device address.
pub(crate) fn address_of(slice: &cudarc::driver::CudaSlice<u32>, ctx: &Arc<CudaContext>) -> u64 {
    cudarc::driver::DevicePtr::device_ptr(slice, &ctx.default_stream()).0
}

/// Set in the child processes of [`in_a_child`].
pub(crate) const CHILD: &str = "FERROCUDA_EMU_DRIVER_TEST_CHILD";

/// Runs the test `name` of this binary again in a child process with `env` set, and fails if
/// it fails or runs past `limit` (then it is killed): for what a process reads once (the
/// emulator's environment variables) and what must not hang the tests.
pub(crate) fn in_a_child(name: &str, env: &[(&str, &str)], limit: std::time::Duration) -> String {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let start = std::time::Instant::now();
    let finished = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(finished, "{name} hung (killed after {limit:?}):\n{text}");
    assert!(
        output.status.success(),
        "{name}: {}:\n{text}",
        output.status
    );
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
    text
}
