//! `isspacep` and `mbarrier` (libcu++'s `cuda::barrier`), with the `::` forms of their state
//! spaces (`.shared::cta`, `.shared::cluster`; a cluster is one block here): which window a
//! generic address is in, and arrive/wait phases that order shared memory between the block's
//! threads, checked against what the PTX ISA defines.

mod support;

use ferrocuda_ptx_emu::{FaultKind, Module};
use support::*;

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

#[test]
fn isspacep_tells_each_generic_window_apart() {
    let spaces = [
        "shared",
        "shared::cta",
        "shared::cluster",
        "local",
        "global",
    ];
    // A global (a kernel parameter's device pointer), a shared and a local variable's generic
    // address: %rd1, %rd3, %rd5.
    let mut body = String::new();
    for (i, address) in ["%rd1", "%rd3", "%rd5"].iter().enumerate() {
        body += "    mov.u32 %r2, 0;\n";
        for (bit, space) in spaces.iter().enumerate() {
            body += &format!(
                "    isspacep.{space} %p1, {address};\n    selp.u32 %r1, {}, 0, %p1;\n    or.b32 %r2, %r2, %r1;\n",
                1 << bit
            );
        }
        body += &format!("    st.global.u32 [%rd1+{}], %r2;\n", 4 * i);
    }
    let ptx = format!(
        "{HEADER}
.visible .entry spaces(.param .u64 out_p)
{{
    .shared .align 4 .b32 s;
    .local .align 4 .b32 l;
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out_p];
    mov.u64 %rd2, s;
    cvta.shared.u64 %rd3, %rd2;
    mov.u64 %rd4, l;
    cvta.local.u64 %rd5, %rd4;
{body}    ret;
}}
"
    );
    let module = Module::parse(&ptx).unwrap();
    let d = Device::new();
    let out = d.zeros::<u32>(3);
    d.launch(
        &module,
        "spaces",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[value(out.addr)],
    )
    .unwrap();
    // Bits in `spaces`' order: the three shared forms are one window (a cluster of one
    // block), and global is every address outside the shared and local windows.
    let global = 0b10000;
    let shared = 0b00111;
    let local = 0b01000;
    assert_eq!(d.download::<u32>(out), [global, shared, local]);
}

/// 64 threads, three phases of one mbarrier: each thread stores to its slot, arrives and waits
/// (phase 0, on `arrive`'s state), reads its right neighbour's slot; arrives and waits on
/// phase 1's parity; stores again, and (phase 2) reads its left neighbour's. Without waits
/// that block until every thread has arrived, the emulator (which runs one thread until it
/// stops) would read slots not yet stored to.
const PHASES: &str = r#"
.visible .entry phases(.param .u64 out_p)
{
    .shared .align 8 .b64 bar;
    .shared .align 4 .b8 slots[256];
    .reg .pred %p<3>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra $INITED;
    mbarrier.init.shared::cta.b64 [bar], 64;
$INITED:
    bar.sync 0;
    mov.u32 %r4, slots;
    shl.b32 %r3, %r1, 2;
    add.u32 %r5, %r4, %r3;
    mul.lo.u32 %r2, %r1, 3;
    st.shared.u32 [%r5], %r2;
    mbarrier.arrive.shared::cta.b64 %rd1, [bar];
$W0:
    mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd1;
    @!%p2 bra $W0;
    add.u32 %r6, %r1, 1;
    and.b32 %r6, %r6, 63;
    shl.b32 %r7, %r6, 2;
    add.u32 %r8, %r4, %r7;
    ld.shared.u32 %r9, [%r8];
    mbarrier.arrive.shared.b64 _, [bar];
$W1:
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], 1;
    @!%p2 bra $W1;
    mul.lo.u32 %r2, %r1, 5;
    st.shared.u32 [%r5], %r2;
    mbarrier.arrive.shared::cluster.b64 %rd2, [bar];
$W2:
    mbarrier.test_wait.shared.b64 %p2, [bar], %rd2;
    @!%p2 bra $W2;
    add.u32 %r6, %r1, 63;
    and.b32 %r6, %r6, 63;
    shl.b32 %r7, %r6, 2;
    add.u32 %r8, %r4, %r7;
    ld.shared.u32 %r10, [%r8];
    mul.lo.u32 %r11, %r9, 1000;
    add.u32 %r11, %r11, %r10;
    ld.param.u64 %rd3, [out_p];
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r11;
    ret;
}

// One thread, a barrier of 2: the first test_wait finds the phase open (0), the second,
// after the second arrival, complete (1). out = {first, second}.
.visible .entry open_phase(.param .u64 out_p)
{
    .shared .align 8 .b64 bar;
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd3, [out_p];
    mbarrier.init.shared.b64 [bar], 2;
    mbarrier.arrive.shared.b64 %rd1, [bar];
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd1;
    selp.u32 %r1, 1, 0, %p1;
    st.global.u32 [%rd3], %r1;
    mbarrier.arrive.shared.b64 %rd2, [bar];
    mbarrier.test_wait.shared.b64 %p2, [bar], %rd1;
    selp.u32 %r2, 1, 0, %p2;
    st.global.u32 [%rd3+4], %r2;
    ret;
}

// A try_wait no arrival can complete: a barrier of 3 for 2 threads.
.visible .entry short(.param .u64 out_p)
{
    .shared .align 8 .b64 bar;
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra $INITED;
    mbarrier.init.shared.b64 [bar], 3;
$INITED:
    bar.sync 0;
    mbarrier.arrive.shared.b64 %rd1, [bar];
$W:
    mbarrier.try_wait.shared.b64 %p2, [bar], %rd1;
    @!%p2 bra $W;
    ret;
}

// An arrival on a barrier never initialised.
.visible .entry uninitialised(.param .u64 out_p)
{
    .shared .align 8 .b64 bar;
    .reg .b64 %rd<2>;
    mbarrier.arrive.shared.b64 %rd1, [bar];
    ret;
}
"#;

fn module() -> Module {
    Module::parse(&format!("{HEADER}{PHASES}")).unwrap()
}

#[test]
fn mbarrier_phases_order_shared_memory_between_threads() {
    let module = module();
    let d = Device::new();
    let out = d.zeros::<u32>(64);
    d.launch(
        &module,
        "phases",
        [2, 1, 1],
        [64, 1, 1],
        0,
        &[value(out.addr)],
    )
    .unwrap();
    let want: Vec<u32> = (0..64u32)
        .map(|t| ((t + 1) % 64 * 3) * 1000 + (t + 63) % 64 * 5)
        .collect();
    assert_eq!(d.download::<u32>(out), want);
    // With the counters on, warps run in lockstep: the same answer.
    let out = d.zeros::<u32>(64);
    d.profile(&module, "phases", [1, 1, 1], [64, 1, 1], &[value(out.addr)])
        .unwrap();
    assert_eq!(d.download::<u32>(out), want);
}

#[test]
fn test_wait_answers_false_for_an_open_phase_and_true_once_it_completes() {
    let module = module();
    let d = Device::new();
    let out = d.zeros::<u32>(2);
    d.launch(
        &module,
        "open_phase",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[value(out.addr)],
    )
    .unwrap();
    assert_eq!(d.download::<u32>(out), [0, 1]);
}

#[test]
fn a_phase_that_cannot_complete_or_a_bad_arrival_faults() {
    let module = module();
    let d = Device::new();
    let out = d.zeros::<u32>(1);
    let args = [value(out.addr)];
    let fault = d
        .launch(&module, "short", [1, 1, 1], [2, 1, 1], 0, &args)
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(fault.message.contains("deadlock"), "{fault}");
    // The emulator's strict checks (the tests' default) see an object never stored to.
    let fault = d
        .launch(&module, "uninitialised", [1, 1, 1], [1, 1, 1], 0, &args)
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(
        fault.message.contains("mbarrier.arrive")
            && fault
                .message
                .contains("which no thread of the block has stored to"),
        "{fault}"
    );
}
