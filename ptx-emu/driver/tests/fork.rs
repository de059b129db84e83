//! A child process forked after `cuInit` cannot use the driver: every call there answers
//! `CUDA_ERROR_NOT_INITIALIZED`, `cuInit` included, as on a GPU (CUDA's state does not survive
//! `fork`; Numba's test_multiprocessing relies on the code to report "CUDA initialized before
//! forking"). The parent goes on as before.
//!
//! A test binary of its own, with one test: the fork copies only the forking thread, so no other
//! test may hold the driver's locks then.

use cudarc::driver::sys::{self, CUresult};

mod support;

/// What the child's calls answer, in the order the child makes them.
const CALLS: [&str; 4] = ["cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuCtxCreate"];

/// Each driver call of [`CALLS`], with the result codes it gives in this process.
fn call_each() -> Vec<CUresult> {
    let mut count = 0;
    let mut device = 0;
    let mut context = std::ptr::null_mut();
    // SAFETY: each out-pointer is a local valid for one write; the emulator is loaded.
    unsafe {
        vec![
            sys::cuInit(0),
            sys::cuDeviceGetCount(&mut count),
            sys::cuDeviceGet(&mut device, 0),
            sys::cuCtxCreate_v2(&mut context, 0, 0),
        ]
    }
}

#[test]
fn a_child_forked_after_cuinit_gets_not_initialized_from_every_call_and_the_parent_goes_on() {
    support::load_emulator(|| {});
    let before = call_each();
    assert_eq!(
        before,
        vec![CUresult::CUDA_SUCCESS; CALLS.len()],
        "{CALLS:?}"
    );

    // SAFETY: the child makes only the driver calls below and leaves by _exit, running no
    // destructors or atexit handlers of the parent's; this binary's one test runs alone, so no
    // other thread holds a lock the child needs.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        // The child's exit status: 0 when every call answered NOT_INITIALIZED, else 1 + the
        // index of the first that did not.
        let status = call_each()
            .iter()
            .position(|&r| r != CUresult::CUDA_ERROR_NOT_INITIALIZED)
            .map_or(0, |i| 1 + i as i32);
        // SAFETY: ends the child at once, as fork's contract asks of a child that does not exec.
        unsafe { libc::_exit(status) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked; `status` is a local valid for one write.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "waitpid: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status),
        "the child did not exit: {status:#x}"
    );
    let code = libc::WEXITSTATUS(status);
    assert!(
        code == 0,
        "in the forked child, {} did not answer CUDA_ERROR_NOT_INITIALIZED",
        CALLS[code as usize - 1]
    );

    // The parent's driver is untouched by its child's calls.
    assert_eq!(call_each(), vec![CUresult::CUDA_SUCCESS; CALLS.len()]);
}
