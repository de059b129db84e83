//! Recursive calls (`ptx-emu/src/recursion.rs`): each activation of a recursive `.func` has its
//! own registers, `.param` space and `.local` stack frame, as PTX's ABI gives it, checked
//! against the same recursions computed in Rust; calls past the stack's limits fault with a
//! clear message instead of overflowing the host's stack.

mod support;

use ferrocuda_ptx_emu::{FaultKind, Module};
use support::*;

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Numba's shape of a recursive function: the result is stored through a pointer into the
/// caller's `.local` frame (Numba's return pointer), so each activation's frame must keep its
/// own address while its callees run. `fib(out, n)` stores fib(n) at `out` and returns the calls
/// it made, itself included, in its `.param` return value. `n` and `out` live in registers
/// across both calls; one result is read back through the frame variable's name, one through
/// the frame's register.
const FIB: &str = r#"
.func (.param .b64 fib_calls) fib(.param .b64 fib_out, .param .b64 fib_n)
{
    .local .align 8 .b8 depot[16];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    .reg .pred %p<2>;
    .reg .b64 %rd<16>;
    mov.u64 %SPL, depot;
    cvta.local.u64 %SP, %SPL;
    ld.param.u64 %rd1, [fib_out];
    ld.param.u64 %rd2, [fib_n];
    setp.lt.s64 %p1, %rd2, 2;
    @%p1 bra $BASE;
    add.s64 %rd3, %rd2, -1;
    add.u64 %rd4, %SP, 0;
    {
    .param .b64 param0;
    .param .b64 param1;
    .param .b64 retval0;
    st.param.b64 [param0+0], %rd4;
    st.param.b64 [param1+0], %rd3;
    call.uni (retval0), fib, (param0, param1);
    ld.param.b64 %rd5, [retval0+0];
    }
    add.s64 %rd3, %rd2, -2;
    add.u64 %rd6, %SP, 8;
    {
    .param .b64 param0;
    .param .b64 param1;
    .param .b64 retval0;
    st.param.b64 [param0+0], %rd6;
    st.param.b64 [param1+0], %rd3;
    call.uni (retval0), fib, (param0, param1);
    ld.param.b64 %rd7, [retval0+0];
    }
    ld.local.u64 %rd8, [depot];
    ld.local.u64 %rd9, [%SPL+8];
    add.s64 %rd10, %rd8, %rd9;
    st.u64 [%rd1], %rd10;
    add.s64 %rd11, %rd5, %rd7;
    add.s64 %rd11, %rd11, 1;
    st.param.b64 [fib_calls], %rd11;
    ret;
$BASE:
    st.u64 [%rd1], %rd2;
    mov.u64 %rd11, 1;
    st.param.b64 [fib_calls], %rd11;
    ret;
}

// Thread t: out[t] = fib(t), calls[t] = the calls it took.
.visible .entry fibs(.param .u64 out_p, .param .u64 calls_p)
{
    .local .align 8 .b8 kdepot[8];
    .reg .b32 %r<2>;
    .reg .b64 %k<12>;
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %k1, %r1;
    mov.u64 %k2, kdepot;
    cvta.local.u64 %k3, %k2;
    {
    .param .b64 param0;
    .param .b64 param1;
    .param .b64 retval0;
    st.param.b64 [param0+0], %k3;
    st.param.b64 [param1+0], %k1;
    call.uni (retval0), fib, (param0, param1);
    ld.param.b64 %k4, [retval0+0];
    }
    ld.local.u64 %k5, [kdepot];
    ld.param.u64 %k6, [out_p];
    ld.param.u64 %k7, [calls_p];
    shl.b64 %k8, %k1, 3;
    add.s64 %k9, %k6, %k8;
    st.global.u64 [%k9], %k5;
    add.s64 %k10, %k7, %k8;
    st.global.u64 [%k10], %k4;
    ret;
}
"#;

fn fib_reference(n: u64) -> (u64, u64) {
    let (mut a, mut b) = (0u64, 1u64);
    let (mut calls_a, mut calls_b) = (1u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
        // calls(k + 2) = calls(k + 1) + calls(k) + 1.
        (calls_a, calls_b) = (calls_b, calls_a + calls_b + 1);
    }
    (a, calls_a)
}

#[test]
fn fibonacci_through_pointers_into_callers_frames_matches_rust() {
    let module = Module::parse(&format!("{HEADER}{FIB}")).unwrap();
    let d = Device::new();
    // One thread per n, each recursing to its own depth (lanes of one warp apart).
    let n = 21;
    let (out, calls) = (d.zeros::<u64>(n), d.zeros::<u64>(n));
    let args = [value(out.addr), value(calls.addr)];
    d.launch(&module, "fibs", [1, 1, 1], [n as u32, 1, 1], 0, &args)
        .unwrap();
    let want: Vec<(u64, u64)> = (0..n as u64).map(fib_reference).collect();
    let got: Vec<(u64, u64)> = d
        .download::<u64>(out)
        .into_iter()
        .zip(d.download::<u64>(calls))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[20], (6765, 21891));
}

/// Mutual recursion without `.local`: `up(n) = n == 0 ? 0 : 3n + down(n - 1)` and
/// `down(n) = n == 0 ? 1 : up(n - 1) ^ (n << 1)`, each keeping `n` in a register across its
/// call, `up` calling through a prototype.
const MUTUAL: &str = r#"
.func (.param .b64 down_r) down(.param .b64 down_n);

.func (.param .b64 up_r) up(.param .b64 up_n)
{
    .reg .pred %p<2>;
    .reg .b64 %u<8>;
    ld.param.u64 %u1, [up_n];
    setp.eq.s64 %p1, %u1, 0;
    @%p1 bra $ZERO;
    add.s64 %u2, %u1, -1;
    {
    .param .b64 param0;
    .param .b64 retval0;
    st.param.b64 [param0+0], %u2;
    call.uni (retval0), down, (param0);
    ld.param.b64 %u3, [retval0+0];
    }
    mul.lo.s64 %u4, %u1, 3;
    add.s64 %u5, %u4, %u3;
    st.param.b64 [up_r], %u5;
    ret;
$ZERO:
    mov.u64 %u5, 0;
    st.param.b64 [up_r], %u5;
    ret;
}

.func (.param .b64 down_r) down(.param .b64 down_n)
{
    .reg .pred %p<2>;
    .reg .b64 %w<8>;
    ld.param.u64 %w1, [down_n];
    setp.eq.s64 %p1, %w1, 0;
    @%p1 bra $ONE;
    add.s64 %w2, %w1, -1;
    {
    .param .b64 param0;
    .param .b64 retval0;
    st.param.b64 [param0+0], %w2;
    call.uni (retval0), up, (param0);
    ld.param.b64 %w3, [retval0+0];
    }
    shl.b64 %w4, %w1, 1;
    xor.b64 %w5, %w3, %w4;
    st.param.b64 [down_r], %w5;
    ret;
$ONE:
    mov.u64 %w5, 1;
    st.param.b64 [down_r], %w5;
    ret;
}

// out[t] = up(depth[t]).
.visible .entry ups(.param .u64 depth_p, .param .u64 out_p)
{
    .reg .b32 %r<2>;
    .reg .b64 %k<10>;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %k1, %r1, 8;
    ld.param.u64 %k2, [depth_p];
    add.s64 %k3, %k2, %k1;
    ld.global.u64 %k4, [%k3];
    {
    .param .b64 param0;
    .param .b64 retval0;
    st.param.b64 [param0+0], %k4;
    call.uni (retval0), up, (param0);
    ld.param.b64 %k5, [retval0+0];
    }
    ld.param.u64 %k6, [out_p];
    add.s64 %k7, %k6, %k1;
    st.global.u64 [%k7], %k5;
    ret;
}
"#;

fn up(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        3 * n + down(n - 1)
    }
}

fn down(n: u64) -> u64 {
    if n == 0 {
        1
    } else {
        up(n - 1) ^ (n << 1)
    }
}

#[test]
fn mutual_recursion_keeps_each_activations_registers_and_params() {
    let module = Module::parse(&format!("{HEADER}{MUTUAL}")).unwrap();
    let d = Device::new();
    // Up to 1023 calls deep under the kernel's own: the deepest the stack holds.
    let depths: Vec<u64> = vec![0, 1, 2, 3, 10, 97, 500, 1022, 1023];
    let input = d.upload(&depths);
    let out = d.zeros::<u64>(depths.len());
    let args = [value(input.addr), value(out.addr)];
    let threads = [depths.len() as u32, 1, 1];
    d.launch(&module, "ups", [2, 1, 1], threads, 0, &args)
        .unwrap();
    let want: Vec<u64> = depths.iter().map(|&n| up(n)).collect();
    assert_eq!(d.download::<u64>(out), want);
}

#[test]
fn recursion_past_the_depth_limit_faults_as_a_stack_overflow() {
    let module = Module::parse(&format!("{HEADER}{MUTUAL}")).unwrap();
    let d = Device::new();
    // 1025 calls deep (up(1024) and its 1024 callees): one past the limit.
    let input = d.upload(&[1024u64]);
    let out = d.zeros::<u64>(1);
    let args = [value(input.addr), value(out.addr)];
    let fault = d
        .launch(&module, "ups", [1, 1, 1], [1, 1, 1], 0, &args)
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(
        fault
            .message
            .contains("stack overflow: more than 1024 calls deep"),
        "{fault}"
    );
}

/// `deep(n)` with a 4 KiB `.local` array per activation: it fills its array with `n`, recurses
/// to `n - 1`, and returns the sum of its own array's first and last words after the call (so
/// a callee that wrote into its caller's frame shows), plus its callee's result.
const DEEP: &str = r#"
.func (.param .b64 deep_r) deep(.param .b64 deep_n)
{
    .local .align 16 .b8 big[4096];
    .reg .pred %p<2>;
    .reg .b64 %d<12>;
    ld.param.u64 %d1, [deep_n];
    mov.u64 %d2, big;
    st.local.u64 [%d2], %d1;
    st.local.u64 [big+4088], %d1;
    setp.eq.s64 %p1, %d1, 0;
    mov.u64 %d3, 0;
    @%p1 bra $DONE;
    add.s64 %d4, %d1, -1;
    {
    .param .b64 param0;
    .param .b64 retval0;
    st.param.b64 [param0+0], %d4;
    call.uni (retval0), deep, (param0);
    ld.param.b64 %d3, [retval0+0];
    }
$DONE:
    ld.local.u64 %d5, [big];
    ld.local.u64 %d6, [%d2+4088];
    add.s64 %d7, %d5, %d6;
    add.s64 %d8, %d7, %d3;
    st.param.b64 [deep_r], %d8;
    ret;
}

.visible .entry deeps(.param .u64 n_p, .param .u64 out_p)
{
    .reg .b64 %k<6>;
    ld.param.u64 %k1, [n_p];
    {
    .param .b64 param0;
    .param .b64 retval0;
    st.param.b64 [param0+0], %k1;
    call.uni (retval0), deep, (param0);
    ld.param.b64 %k2, [retval0+0];
    }
    ld.param.u64 %k3, [out_p];
    st.global.u64 [%k3], %k2;
    ret;
}
"#;

#[test]
fn each_activation_has_its_own_local_frame_until_the_stack_is_full() {
    let module = Module::parse(&format!("{HEADER}{DEEP}")).unwrap();
    let d = Device::new();
    let out = d.zeros::<u64>(1);
    // 16 KiB of stack: four 4 KiB frames (n = 3, 2, 1, 0).
    d.launch(
        &module,
        "deeps",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[value(3u64), value(out.addr)],
    )
    .unwrap();
    // Each activation's own two words: 2n each, summed over n = 0..=3.
    assert_eq!(d.download::<u64>(out), [2 * (3 + 2 + 1)]);
    let fault = d
        .launch(
            &module,
            "deeps",
            [1, 1, 1],
            [1, 1, 1],
            0,
            &[value(4u64), value(out.addr)],
        )
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(
        fault.message.contains("stack overflow") && fault.message.contains("4096 bytes of .local"),
        "{fault}"
    );
}
