//! Linking CUDA's device runtime library (`libcudadevrt.a`, as Numba does for grid groups): the
//! emulator links its own PTX of `cudaCGGetIntrinsicHandle` and `cudaCGSynchronize` in the
//! library's place, and a cooperative launch's blocks then wait for one another at each
//! `grid.sync()`, again and again, launch after launch.

use cudarc::driver::sys::{self, CUresult};
use std::ffi::{c_void, CString};

mod support;
use support::own_context;

/// A grid sync through the device runtime's entry points (`%rd8` holds the grid's handle).
const SYNC: &str = " { .param .b64 h; .param .b32 f; .param .b32 s; st.param.b64 [h], %rd8;\n\
   st.param.b32 [f], 0; call.uni (s), cudaCGSynchronize, (h, f); }\n";

/// Thread 0 of a block (`%p0` false) sums the `%r2` slots at `%rd1` into `[out]`.
fn sum_into(out: &str, label: &str) -> String {
    format!(
        " @%p0 bra $skip_{label};\n mov.u32 %r5, 0;\n mov.u32 %r6, 0;\n\
         $loop_{label}:\n setp.ge.u32 %p1, %r6, %r2;\n @%p1 bra $end_{label};\n\
         mul.wide.u32 %rd9, %r6, 4;\n add.s64 %rd10, %rd1, %rd9;\n\
         ld.volatile.global.u32 %r7, [%rd10];\n add.u32 %r5, %r5, %r7;\n add.u32 %r6, %r6, 1;\n\
         bra $loop_{label};\n$end_{label}:\n st.global.u32 [{out}], %r5;\n$skip_{label}:\n"
    )
}

/// Each block's thread 0: writes b + 1 to `slots[b]`; grid sync; sums every slot into
/// `sums[b]`; grid sync; clears its slot; grid sync; sums again into `after[b]` (0 if the
/// third barrier held). Without a barrier a block reads slots the others have not written.
fn kernel() -> String {
    format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .extern .func (.param .b64 h) cudaCGGetIntrinsicHandle(.param .b32 scope);\n\
         .extern .func (.param .b32 s) cudaCGSynchronize(.param .b64 h, .param .b32 flags);\n\
         .visible .entry grid_sums(.param .u64 slots, .param .u64 sums, .param .u64 after)\n{{\n\
         .reg .pred %p<3>;\n .reg .b32 %r<12>;\n .reg .b64 %rd<16>;\n\
         ld.param.u64 %rd1, [slots];\n ld.param.u64 %rd2, [sums];\n ld.param.u64 %rd3, [after];\n\
         mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %nctaid.x;\n mov.u32 %r3, %tid.x;\n\
         setp.ne.u32 %p0, %r3, 0;\n mul.wide.u32 %rd4, %r1, 4;\n\
         add.s64 %rd5, %rd1, %rd4;\n add.s64 %rd6, %rd2, %rd4;\n add.s64 %rd7, %rd3, %rd4;\n\
         add.u32 %r4, %r1, 1;\n @!%p0 st.volatile.global.u32 [%rd5], %r4;\n\
         {{ .param .b32 scope; .param .b64 h; st.param.b32 [scope], 1;\n\
         call.uni (h), cudaCGGetIntrinsicHandle, (scope); ld.param.b64 %rd8, [h]; }}\n\
         {SYNC}{first}{SYNC} @!%p0 st.volatile.global.u32 [%rd5], 0;\n{SYNC}{second} ret;\n}}\n",
        first = sum_into("%rd6", "a"),
        second = sum_into("%rd7", "b"),
    )
}

fn link_with_cudadevrt() -> Vec<u8> {
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: no options; one out-pointer.
    unsafe { sys::cuLinkCreate_v2(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut state) }
        .result()
        .unwrap();
    let kernel = kernel();
    // SAFETY: the text with its length; a NUL-terminated name; no options.
    unsafe {
        sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            kernel.as_ptr().cast_mut().cast(),
            kernel.len(),
            c"grid_sums.ptx".as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .unwrap();
    // The archive's bytes are never run (machine code): any file of that name stands for it.
    let dir = std::env::temp_dir().join(format!("ferrocuda-cudadevrt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let archive = dir.join("libcudadevrt.a");
    std::fs::write(&archive, b"!<arch>\n").unwrap();
    let path = CString::new(archive.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; no options.
    let added = unsafe {
        sys::cuLinkAddFile_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_LIBRARY,
            path.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(added, CUresult::CUDA_SUCCESS);
    // Another library is still machine code the emulator cannot run.
    let other = CString::new(dir.join("libother.a").to_str().unwrap()).unwrap();
    std::fs::write(dir.join("libother.a"), b"!<arch>\n").unwrap();
    // SAFETY: as above.
    let refused = unsafe {
        sys::cuLinkAddFile_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_LIBRARY,
            other.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(refused, CUresult::CUDA_ERROR_NOT_SUPPORTED);
    let (mut image, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
    // SAFETY: two out-pointers; the image is copied before the link is destroyed.
    let text = unsafe {
        sys::cuLinkComplete(state, &mut image, &mut size)
            .result()
            .unwrap();
        let text = std::slice::from_raw_parts(image.cast::<u8>(), size).to_vec();
        sys::cuLinkDestroy(state).result().unwrap();
        text
    };
    std::fs::remove_dir_all(&dir).ok();
    text
}

#[test]
fn grid_sync_through_the_linked_device_runtime_holds_every_block_at_each_barrier() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let image = link_with_cudadevrt();
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: the linker's NUL-terminated text.
    unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr().cast()) }
        .result()
        .unwrap();
    let mut function: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: a loaded module and a NUL-terminated name.
    unsafe { sys::cuModuleGetFunction(&mut function, module, c"grid_sums".as_ptr()) }
        .result()
        .unwrap();
    let blocks = 8u32;
    let want_sum = blocks * (blocks + 1) / 2;
    let stream = ctx.default_stream();
    // Twice: the barrier's count is back to zero after a launch.
    for _ in 0..2 {
        let zeros = vec![0u32; blocks as usize];
        let (slots, sums, after) = (
            stream.clone_htod(&zeros).unwrap(),
            stream.clone_htod(&zeros).unwrap(),
            stream.clone_htod(&zeros).unwrap(),
        );
        let address = |s: &cudarc::driver::CudaSlice<u32>| {
            let (a, _record) = cudarc::driver::DevicePtr::device_ptr(s, &stream);
            a
        };
        let mut args = [address(&slots), address(&sums), address(&after)];
        let mut params: Vec<*mut c_void> = args
            .iter_mut()
            .map(|a| (a as *mut u64).cast::<c_void>())
            .collect();
        // SAFETY: three u64 parameters passed by pointer; `blocks` blocks of 32 threads.
        unsafe {
            sys::cuLaunchCooperativeKernel(
                function,
                blocks,
                1,
                1,
                32,
                1,
                1,
                0,
                stream.cu_stream(),
                params.as_mut_ptr(),
            )
        }
        .result()
        .unwrap();
        let sums = stream.clone_dtoh(&sums).unwrap();
        let after = stream.clone_dtoh(&after).unwrap();
        assert_eq!(sums, vec![want_sum; blocks as usize]);
        assert_eq!(after, vec![0; blocks as usize]);
    }
    // SAFETY: the module loaded above, unloaded once.
    unsafe { sys::cuModuleUnload(module) }.result().unwrap();
}
