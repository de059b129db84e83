//! Modules: the JIT's refusals and logs, module variables, the linker, deep nesting and DWARF
//! sections.

use cudarc::driver::sys::{self, CUjit_option, CUresult};
use cudarc::driver::{DriverError, PushKernelArg};
use std::ffi::c_void;

use crate::common::STORE_PTX;
use crate::support::{load_with_log, own_context};

#[test]
fn a_module_the_jit_refuses_comes_with_the_reason_in_the_error_log() {
    let ctx = own_context();
    let broken = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
                  .visible .entry broken()\n{\n\tnot_an_instruction.u32 %r1;\n\tret;\n}\n";
    let (code, log) = load_with_log(&ctx, broken);
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_PTX, "{log}");
    assert!(
        log.contains("error") && log.contains("not_an_instruction"),
        "{log}"
    );
    assert!(log.contains("line 7"), "the parser's line in: {log}");
    let (code, log) = load_with_log(&ctx, &STORE_PTX.replace(".version 6.0", ".version 9.9"));
    assert_eq!(code, CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "{log}");
    assert!(log.contains("Unsupported .version 9.9"), "{log}");
    let (code, log) = load_with_log(&ctx, &STORE_PTX.replace("sm_70", "sm_100"));
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_PTX, "{log}");
    // The error names come from the emulator too.
    let error = DriverError(CUresult::CUDA_ERROR_INVALID_PTX);
    assert_eq!(
        error.error_string().unwrap().to_str().unwrap(),
        "a PTX JIT compilation failed"
    );
}

/// A `.const` table, read with `ld.const` through its address (`mov.u64 r, TABLE`), and a
/// `.global` counter: `out[i] = TABLE[i] + 1` for `i < 4`.
const CONST_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .const .align 4 .b8 TABLE[16];\n\
    .visible .global .align 4 .u32 COUNTER[1] = {5};\n\n\
    .visible .entry read_table(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<6>;\n\n\
    \tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\
    \tmov.u64 %rd3, TABLE;\n\tadd.s64 %rd4, %rd3, %rd2;\n\tld.const.u32 %r2, [%rd4];\n\
    \tadd.s32 %r3, %r2, 1;\n\tadd.s64 %rd5, %rd1, %rd2;\n\tst.global.u32 [%rd5], %r3;\n\tret;\n}\n";

#[test]
fn a_module_variable_is_found_by_name_set_by_a_copy_and_read_by_kernels() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(CONST_PTX))
        .unwrap();
    let mut table = module.get_global("TABLE", &stream).unwrap();
    assert_eq!(table.len(), 16);
    // Zeroed until set, as the driver leaves `.const`; initialised `.global`s keep their values.
    let counter = module.get_global("COUNTER", &stream).unwrap();
    let mut start = [0u8; 4];
    stream.memcpy_dtoh(&counter, &mut start).unwrap();
    assert_eq!(u32::from_le_bytes(start), 5);
    let values: Vec<u8> = [10u32, 20, 30, 40]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    stream.memcpy_htod(&values, &mut table).unwrap();

    let read = module.load_function("read_table").unwrap();
    let out = stream.alloc_zeros::<u32>(4).unwrap();
    let mut builder = stream.launch_builder(&read);
    builder.arg(&out);
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (4, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes one pointer to 4 u32 and writes them.
    unsafe { builder.launch(config) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [11, 21, 31, 41]);

    // A name the module lacks; a copy past the variable's end.
    assert_eq!(
        module.get_global("NOT_THERE", &stream).unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_NOT_FOUND)
    );
    let again = module.get_global("TABLE", &stream).unwrap();
    let address = cudarc::driver::DevicePtr::device_ptr(&again, &stream).0;
    let past = [0u8; 20];
    // SAFETY: reads 20 bytes of `past`; the device range is checked (and refused).
    let code = unsafe { sys::cuMemcpyHtoD_v2(address, past.as_ptr().cast(), 20) };
    assert_ne!(code, CUresult::CUDA_SUCCESS);
    // The module's variable cannot be freed like an allocation.
    // SAFETY: frees nothing (refused).
    assert_ne!(
        unsafe { sys::cuMemFree_v2(address) },
        CUresult::CUDA_SUCCESS
    );
}

/// The JIT linker (issue 35: Numba links every kernel): a kernel calling an `.extern` function
/// that a second PTX input defines, both with an internal `$str` of their own, links into one
/// module that loads and runs; machine-code inputs are refused with a log line; a destroyed
/// link state is an invalid handle.
#[test]
fn the_linker_joins_ptx_inputs_into_a_module_that_runs() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let kernel = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .extern .func (.param .b32 out) add_seven(.param .b32 x);\n\
        .global .align 1 .b8 $str[2] = {65, 0};\n\
        .visible .entry call_helper(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n\
        \tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tld.global.u32 %r1, [%rd2];\n\
        \t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n\
        \tcall.uni (r), add_seven, (a);\n\tld.param.b32 %r2, [r];\n\t}\n\
        \tst.global.u32 [%rd2], %r2;\n\tret;\n}\n\0";
    let helper = ".version 8.0\n.target sm_70\n.address_size 64\n\
        .global .align 1 .b8 $str[2] = {66, 0};\n\
        .visible .func (.param .b32 out) add_seven(.param .b32 x)\n{\n\t.reg .b32 %r<3>;\n\
        \tld.param.b32 %r1, [x];\n\tadd.s32 %r2, %r1, 7;\n\tst.param.b32 [out], %r2;\n\tret;\n}\n\0";
    let mut error_log = vec![0u8; 1024];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [
        error_log.as_mut_ptr().cast::<c_void>(),
        std::ptr::without_provenance_mut::<c_void>(error_log.len()),
    ];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: two options with their values, alive until the link is destroyed; one out-pointer.
    unsafe { sys::cuLinkCreate_v2(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }
        .result()
        .unwrap();
    let add = |text: &str, kind, name: &[u8]| {
        // SAFETY: `text` holds its length in bytes; `name` is NUL-terminated.
        unsafe {
            sys::cuLinkAddData_v2(
                state,
                kind,
                text.as_ptr().cast_mut().cast(),
                text.len(),
                name.as_ptr().cast(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
    };
    use sys::CUjitInputType as Input;
    assert_eq!(
        add(kernel, Input::CU_JIT_INPUT_PTX, b"kernel.ptx\0"),
        CUresult::CUDA_SUCCESS
    );
    assert_eq!(
        add(helper, Input::CU_JIT_INPUT_PTX, b"helper.ptx\0"),
        CUresult::CUDA_SUCCESS
    );
    assert_eq!(
        add("\x7fELF....", Input::CU_JIT_INPUT_CUBIN, b"a.cubin\0"),
        CUresult::CUDA_ERROR_NOT_SUPPORTED
    );
    let log = String::from_utf8_lossy(&error_log);
    assert!(
        log.contains("a.cubin") && log.contains("links PTX only"),
        "{log}"
    );
    let (mut image, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
    // SAFETY: two out-pointers.
    unsafe { sys::cuLinkComplete(state, &mut image, &mut size) }
        .result()
        .unwrap();
    assert!(size > 1);
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: the image is the linker's NUL-terminated text, alive until cuLinkDestroy.
    unsafe { sys::cuModuleLoadData(&mut module, image) }
        .result()
        .unwrap();
    let mut function: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: a loaded module and a NUL-terminated name.
    unsafe { sys::cuModuleGetFunction(&mut function, module, c"call_helper".as_ptr()) }
        .result()
        .unwrap();
    let stream = ctx.default_stream();
    let mut buffer = stream.clone_htod(&[35u32]).unwrap();
    let (address, _record) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut buffer, &stream);
    let mut params = [(&address as *const u64).cast_mut().cast::<c_void>()];
    // SAFETY: the kernel takes one u64, passed by pointer; one thread.
    unsafe {
        sys::cuLaunchKernel(
            function,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            stream.cu_stream(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .unwrap();
    drop(_record);
    assert_eq!(stream.clone_dtoh(&buffer).unwrap(), [42]);
    // SAFETY: the link state made above, destroyed once; a second time is an invalid handle.
    unsafe {
        assert_eq!(sys::cuLinkDestroy(state), CUresult::CUDA_SUCCESS);
        assert_eq!(
            sys::cuLinkDestroy(state),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
        sys::cuModuleUnload(module).result().unwrap();
    }
}

/// Issue 29 (E1): cuModuleLoadData of PTX with 30,000 nested `{ }` scopes aborted the process
/// (the parser recursed per scope); it loads now, and deeply nested brackets in an operand are
/// CUDA_ERROR_INVALID_PTX with the reason in the log. On a thread with a 512 KiB stack, so that
/// a recursion per level would overflow even at a tenth of the depth.
#[test]
fn deeply_nested_scopes_load_and_nested_operands_are_invalid_ptx() {
    let ctx = own_context();
    let depth = 30_000;
    let nested = STORE_PTX.replace(
        "\tret;\n",
        &format!("{}\tret;\n{}", "{\n".repeat(depth), "}\n".repeat(depth)),
    );
    let braces = STORE_PTX.replace(
        "\tret;\n",
        &format!("\tmov.b64 {}%r1, 0;\n\tret;\n", "{".repeat(depth)),
    );
    let results = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let nested = load_with_log(&ctx, &nested);
            let braces = load_with_log(&ctx, &braces);
            (nested, braces)
        })
        .unwrap()
        .join()
        .unwrap();
    let ((code, log), (braces_code, braces_log)) = results;
    assert_eq!(code, CUresult::CUDA_SUCCESS, "{log}");
    assert_eq!(
        braces_code,
        CUresult::CUDA_ERROR_INVALID_PTX,
        "{braces_log}"
    );
    assert!(braces_log.contains("nested"), "{braces_log}");
}

/// PTX built with debug information (Numba's debug=True) ends with DWARF sections
/// (`.section .debug_info { ... }`): they are skipped, and the module's kernels run.
#[test]
fn a_module_with_dwarf_sections_loads_and_runs() {
    let ctx = own_context();
    let ptx = format!(
        "{STORE_PTX}\n\t.section\t.debug_abbrev\n\t{{\n.b8 1\n.b8 17\n.b8 0\n\t}}\n\
         \t.section\t.debug_info\n\t{{\n.b32 50\n.b8 2\n.b64 $L__func_begin0\n\t}}\n\
         \t.section\t.debug_macinfo\t{{\t}}\n"
    );
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .expect("DWARF sections are skipped");
    let kernel = module.load_function("store_seven").unwrap();
    let stream = ctx.default_stream();
    let out = stream.alloc_zeros::<u32>(1).unwrap();
    let mut builder = stream.launch_builder(&kernel);
    builder.arg(&out);
    // SAFETY: the kernel stores one u32 through its pointer argument.
    unsafe { builder.launch(cudarc::driver::LaunchConfig::for_num_elems(1)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7]);
}
