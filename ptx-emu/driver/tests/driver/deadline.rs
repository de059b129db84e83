//! The launch deadline: a kernel that loops for ever fails with a launch timeout.

use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;

use crate::common::{in_a_child, CHILD};
use crate::support::own_context;

const SPIN_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .entry spin_for_ever()\n{\n$L_top:\n\tbra.uni $L_top;\n}\n";

/// The emulator review's open item: a kernel that loops for ever hung its launch. The driver
/// gives every launch a deadline (FERROCUDA_EMU_DEADLINE_MS, here 300 ms); past it the kernel
/// fails as under a GPU's watchdog: CUDA_ERROR_LAUNCH_TIMEOUT, sticky, and the stderr line names
/// the kernel.
#[test]
fn an_endless_kernel_fails_with_launch_timeout_at_the_deadline() {
    if std::env::var_os(CHILD).is_none() {
        let name = "deadline::an_endless_kernel_fails_with_launch_timeout_at_the_deadline";
        let env = [("FERROCUDA_EMU_DEADLINE_MS", "300")];
        let text = in_a_child(name, &env, std::time::Duration::from_secs(120));
        assert!(
            text.contains("kernel spin_for_ever failed with CUDA_ERROR_LAUNCH_TIMEOUT")
                && text.contains("FERROCUDA_EMU_DEADLINE_MS"),
            "{text}"
        );
        return;
    }
    let ctx = own_context();
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(SPIN_PTX))
        .unwrap();
    let spin = module.load_function("spin_for_ever").unwrap();
    let stream = ctx.default_stream();
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let start = std::time::Instant::now();
    // SAFETY: the kernel takes no parameters and touches no memory.
    let launched = unsafe { stream.launch_builder(&spin).launch(config) };
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    // Asynchronous on a GPU: the launch succeeds, the fault shows at the next call, and stays.
    launched.unwrap();
    let timeout = DriverError(CUresult::CUDA_ERROR_LAUNCH_TIMEOUT);
    assert_eq!(stream.synchronize().unwrap_err(), timeout);
    assert_eq!(stream.alloc_zeros::<u8>(4).unwrap_err(), timeout);
    assert_eq!(
        timeout.error_string().unwrap().to_str().unwrap(),
        "the launch timed out and was terminated"
    );
}
