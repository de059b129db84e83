//! `Checks::Gpu`: what a GPU lets pass runs (an access past an allocation's end but inside its
//! 256-byte granule, a read of shared memory never stored to, a shared-memory race), what a GPU
//! faults on still faults (past the granule), and the default `Checks::Strict` faults on all of
//! them, so each difference is the mode's doing.

mod support;

use ferrocuda_ptx_emu::{Checks, FaultKind, Memory, Module};
use support::*;

fn device(checks: Checks) -> Device {
    Device {
        memory: Memory::of_device_checked(1 << 32, 0, checks),
    }
}

/// `k(p, n)`: thread `t` stores `t + 1` as a `u32` at `p + 4 * t` for `t < n`.
fn store_each() -> Module {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .visible .entry k(.param .u64 p, .param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
        mov.u32 %r1, %tid.x;\nld.param.u32 %r2, [n];\nsetp.ge.u32 %p1, %r1, %r2;\n@%p1 ret;\n\
        ld.param.u64 %rd1, [p];\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd1, %rd1, %rd2;\n\
        add.u32 %r3, %r1, 1;\nst.global.u32 [%rd1], %r3;\nret;\n}\n";
    Module::parse(ptx).unwrap()
}

/// Numba's test_localmem stores ten elements into a one-element array: a GPU never notices.
#[test]
fn stores_past_the_end_reach_the_granule_and_no_further() {
    let module = store_each();
    for checks in [Checks::Strict, Checks::Gpu] {
        let d = device(checks);
        let one = d.zeros::<u32>(1);
        let next = d.upload(&[7u32; 64]);
        let ten = d.launch(
            &module,
            "k",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[value(one.addr), value(10u32)],
        );
        match checks {
            Checks::Strict => {
                let fault = ten.unwrap_err();
                assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
                assert!(
                    fault.message.contains("not inside any live allocation"),
                    "{fault}"
                );
            }
            Checks::Gpu => {
                ten.expect("inside the allocation's 256-byte granule");
                // The host sees the allocation's own element; the next allocation is untouched.
                assert_eq!(d.download::<u32>(one), [1]);
                assert_eq!(d.download::<u32>(next), [7; 64]);
                // Thread 64 would store at byte 256: the next granule, unmapped on a GPU too.
                let past = d.launch(
                    &module,
                    "k",
                    [1, 1, 1],
                    [65, 1, 1],
                    0,
                    &[value(one.addr), value(65u32)],
                );
                let fault = past.unwrap_err();
                assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
                let byte_256 = format!("{:#x}", one.addr + 256);
                assert!(fault.message.contains(&byte_256), "{fault}");
            }
        }
    }
}

/// `k(out)`: `out[t] = tile[t]` from shared memory no thread stored to (Numba's test_sm reads
/// such an array, test_issue_2393).
#[test]
fn shared_memory_never_stored_to_reads_as_it_is() {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n.shared .align 4 .b8 tile[128];\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<4>;\n\
        mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nmov.u64 %rd3, tile;\nadd.s64 %rd3, %rd3, %rd2;\n\
        ld.shared.u32 %r2, [%rd3];\nld.param.u64 %rd1, [out];\nadd.s64 %rd1, %rd1, %rd2;\n\
        st.global.u32 [%rd1], %r2;\nret;\n}\n";
    let module = Module::parse(ptx).unwrap();
    for checks in [Checks::Strict, Checks::Gpu] {
        let d = device(checks);
        let out = d.upload(&[u32::MAX; 32]);
        let run = d.launch(&module, "k", [1, 1, 1], [32, 1, 1], 0, &[value(out.addr)]);
        if checks == Checks::Strict {
            let fault = run.unwrap_err();
            assert!(
                fault
                    .message
                    .contains("no thread of the block has stored to"),
                "{fault}"
            );
        } else {
            run.expect("a GPU reads whatever is there");
            // The emulator's shared memory starts zeroed.
            assert_eq!(d.download::<u32>(out), [0; 32]);
        }
    }
}

/// Thread 0 stores to `tile[1]`, thread 1 reads it, with no `bar.sync` between: a race.
#[test]
fn a_shared_memory_race_is_checked_only_when_strict() {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n.shared .align 4 .b8 tile[128];\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n\
        mov.u32 %r1, %tid.x;\nmov.u64 %rd2, tile;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra READ;\n\
        st.shared.u32 [%rd2+4], 5;\nret;\nREAD:\nld.shared.u32 %r2, [%rd2+4];\n\
        ld.param.u64 %rd1, [out];\nst.global.u32 [%rd1], %r2;\nret;\n}\n";
    let module = Module::parse(ptx).unwrap();
    for checks in [Checks::Strict, Checks::Gpu] {
        let d = device(checks);
        let out = d.zeros::<u32>(1);
        let run = d.launch(&module, "k", [1, 1, 1], [2, 1, 1], 0, &[value(out.addr)]);
        if checks == Checks::Strict {
            let fault = run.unwrap_err();
            assert!(fault.message.contains("shared-memory race"), "{fault}");
        } else {
            run.expect("a GPU does not check races");
            // Thread 0 runs first (the emulator's order): the read sees its store.
            assert_eq!(d.download::<u32>(out), [5]);
        }
    }
}

/// Lanes 16.. return, then the rest `bar.warp.sync` with a full mask (`__syncwarp()`), as
/// Numba's reduction kernels do: a GPU lets it pass, the strict check names the exited lane.
#[test]
fn a_warp_sync_naming_exited_lanes_is_checked_only_when_strict() {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<4>;\n\
        mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 16;\n@%p1 ret;\nbar.warp.sync -1;\n\
        ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd1, %rd1, %rd2;\n\
        st.global.u32 [%rd1], 1;\nret;\n}\n";
    let module = Module::parse(ptx).unwrap();
    for checks in [Checks::Strict, Checks::Gpu] {
        let d = device(checks);
        let out = d.zeros::<u32>(32);
        let run = d.launch(&module, "k", [1, 1, 1], [32, 1, 1], 0, &[value(out.addr)]);
        if checks == Checks::Strict {
            let fault = run.unwrap_err();
            assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
            assert!(fault.message.contains("which has exited"), "{fault}");
        } else {
            run.expect("the lanes that did not exit sync among themselves");
            let want: Vec<u32> = (0..32).map(|l| (l < 16) as u32).collect();
            assert_eq!(d.download::<u32>(out), want);
        }
    }
}
