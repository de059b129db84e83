//! `vprintf` (CUDA's device printf): test-kernels' `print_mixed` (built from
//! `ferrocuda_std::println!`) renders each argument type as C's printf does, each thread's lines
//! in its order; hand-written PTX checks `%s` from global memory, the argument buffer's padding
//! and that a bad format pointer faults instead of reading the host's memory.

mod support;

use ferrocuda_ptx_emu::{FaultKind, Module};
use support::*;

#[test]
fn print_mixed_renders_every_argument_type_as_c_printf_does() {
    let d = Device::new();
    let x = [0.1f32, -2.25, 1.0e7, f32::INFINITY, 2.0];
    let input = d.upload(&x);
    let mut printed = Vec::new();
    let args = [Arg::Slice(input), value(0.5f64)];
    d.launch_printing(
        test_kernels(),
        "print_mixed",
        [2, 1, 1],
        [4, 1, 1],
        &args,
        &mut printed,
    )
    .unwrap();
    let printed = String::from_utf8(printed).unwrap();
    let lines: Vec<&str> = printed.lines().collect();
    // Written out by hand from C's rules: `%f` six decimals, `%.3f`, `%llu`, `%lld`, `%x`, `%s`.
    let expected_first = [
        "i=0 x=0.100000 y=0.050 neg=-1 big=18446744073709551615 min=-9223372036854775808 hex=beef0 small=0 half=0 ok=false str{} c 100%",
        "{thread 0} of 5 threads",
    ];
    let others = [
        "i=1 x=-2.250000 y=-1.125 neg=-2 big=18446744073709551614 min=-9223372036854775807 hex=beef1 small=3 half=-1 ok=false str{} c 100%",
        "i=2 x=10000000.000000 y=5000000.000 neg=-3 big=18446744073709551613 min=-9223372036854775806 hex=beef2 small=6 half=-2 ok=true str{} c 100%",
        "i=3 x=inf y=inf neg=-4 big=18446744073709551612 min=-9223372036854775805 hex=beef3 small=9 half=-3 ok=true str{} c 100%",
        "i=4 x=2.000000 y=1.000 neg=-5 big=18446744073709551611 min=-9223372036854775804 hex=beef4 small=12 half=-4 ok=true str{} c 100%",
    ];
    // Thread 0's two lines in its order (other threads' may come between).
    let at = |line: &str| lines.iter().position(|l| *l == line);
    assert!(
        at(expected_first[0]) < at(expected_first[1]) && at(expected_first[0]).is_some(),
        "{printed}"
    );
    let mut got = lines.clone();
    got.sort();
    let mut want: Vec<&str> = expected_first.iter().chain(&others).copied().collect();
    want.sort();
    assert_eq!(got, want, "{printed}");
}

/// A kernel calling `vprintf` with `format` (a `.global` string) and an argument buffer in
/// local memory that `body` fills; `%rd1` is the buffer's generic address.
fn kernel(strings: &str, body: &str) -> String {
    format!(
        r#"
.version 6.0
.target sm_70
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
{strings}
.visible .entry k(.param .u64 k_param_0)
{{
	.local .align 8 .b8 __local_depot0[32];
	.reg .b64 %SP;
	.reg .b64 %SPL;
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	mov.b64 %SPL, __local_depot0;
	cvta.local.u64 %SP, %SPL;
	add.u64 %rd1, %SP, 0;
	ld.param.u64 %rd2, [k_param_0];
	mov.u32 %r1, %tid.x;
{body}
	{{
	.param .b64 param0;
	st.param.b64 [param0], %rd2;
	.param .b64 param1;
	st.param.b64 [param1], %rd1;
	.param .b32 retval0;
	call.uni (retval0), vprintf, (param0, param1);
	ld.param.b32 %r2, [retval0];
	}}
	ret;
}}
"#
    )
}

fn run(ptx: &str, format: u64, threads: u32) -> Result<String, ferrocuda_ptx_emu::Fault> {
    let module = Module::parse(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let d = Device::new();
    let mut printed = Vec::new();
    d.launch_printing(
        &module,
        "k",
        [1, 1, 1],
        [threads, 1, 1],
        &[value(format)],
        &mut printed,
    )?;
    Ok(String::from_utf8(printed).unwrap())
}

#[test]
fn strings_from_global_memory_and_padding_before_a_double() {
    // "%s|%d|%5.2f|%c\n": a string, an int at 8, padding, a double at 16, a char at 24.
    let strings = r#"
.global .align 1 .b8 fmt[16] = {37, 115, 124, 37, 100, 124, 37, 53, 46, 50, 102, 124, 37, 99, 10, 0};
.global .align 1 .b8 word[4] = {97, 98, 99, 0};"#;
    let body = r#"
	mov.u64 %rd3, word;
	cvta.global.u64 %rd4, %rd3;
	st.local.b64 [%SPL], %rd4;
	st.local.b32 [%SPL+8], %r1;
	st.local.b32 [%SPL+12], -1;
	mov.b64 %rd5, 0x400c000000000000;
	st.local.b64 [%SPL+16], %rd5;
	add.u32 %r3, %r1, 65;
	st.local.b32 [%SPL+24], %r3;
	mov.u64 %rd6, fmt;
	cvta.global.u64 %rd2, %rd6;"#;
    // The format pointer comes from the module's `fmt`, so the parameter is not used.
    let printed = run(&kernel(strings, body), 0, 3).unwrap();
    let mut lines: Vec<&str> = printed.lines().collect();
    lines.sort();
    assert_eq!(lines, ["abc|0| 3.50|A", "abc|1| 3.50|B", "abc|2| 3.50|C"]);
}

#[test]
fn a_format_pointer_outside_every_allocation_faults() {
    let fault = run(&kernel("", ""), 0x1234_5678, 1).unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(
        fault.message.contains("not inside any live allocation"),
        "{fault}"
    );
}

/// `text` NUL-terminated, as a `.global` byte array named `name`.
fn global_string(name: &str, text: &str) -> String {
    let bytes: Vec<String> = text.bytes().chain([0]).map(|b| b.to_string()).collect();
    format!(
        ".global .align 1 .b8 {name}[{}] = {{{}}};",
        bytes.len(),
        bytes.join(", ")
    )
}

/// Issue 29 (E2): a kernel printing `%.99999999999999999999d` never ended (the padding went one
/// '0' at a time at the front). Its text cannot fit in the printf buffer: the call is dropped
/// (vprintf returns -1) and the launch ends at once. In a thread with a deadline, so that a
/// regression fails instead of hanging.
#[test]
fn a_huge_printf_precision_is_a_dropped_call_not_a_hang() {
    let strings = global_string("fmt", "%.99999999999999999999d|%d\n");
    let body = r#"
	st.local.b32 [%SPL], %r1;
	st.local.b32 [%SPL+4], %r1;
	mov.u64 %rd6, fmt;
	cvta.global.u64 %rd2, %rd6;"#;
    let ptx = kernel(&strings, body);
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(run(&ptx, 0, 2).map_err(|f| f.to_string()));
    });
    let printed = receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the launch ended within 60 s")
        .unwrap();
    assert_eq!(printed, "");
}

/// Within the buffer, a long precision is printed whole (zeros in front, found in one pass).
#[test]
fn a_long_printf_precision_within_the_buffer_is_printed() {
    let strings = global_string("fmt", "%.500000d\n");
    let body = r#"
	st.local.b32 [%SPL], 42;
	mov.u64 %rd6, fmt;
	cvta.global.u64 %rd2, %rd6;"#;
    let printed = run(&kernel(&strings, body), 0, 1).unwrap();
    assert_eq!(printed.len(), 500_001);
    assert!(
        printed.ends_with("00042\n"),
        "{}",
        &printed[printed.len() - 10..]
    );
}
