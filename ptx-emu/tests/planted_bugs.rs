//! Fidelity: bugs planted in real and hand-written PTX are caught, each with a readable reason;
//! the same PTX without the bug runs clean (so each check is shown to be the bug's doing).

mod support;

use ferrocuda_ptx_emu::{FaultKind, Module};
use support::*;

/// The text of kernel `name` in `ptx`, with `edit` applied to its body's lines only.
fn edit_kernel(ptx: &str, name: &str, edit: impl Fn(&str) -> Option<String>) -> String {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no kernel {name}"));
    let end = start + ptx[start..].find("\n}\n").expect("kernel end");
    let body: Vec<String> = ptx[start..end].lines().filter_map(edit).collect();
    format!("{}{}{}", &ptx[..start], body.join("\n"), &ptx[end..])
}

fn transpose(
    module: &Module,
) -> (
    Device,
    Vec<f32>,
    Buffer,
    Result<ferrocuda_ptx_emu::LaunchStats, ferrocuda_ptx_emu::Fault>,
) {
    let d = Device::new();
    let (rows, cols) = (64u32, 64u32);
    let input = random_f32(11, (rows * cols) as usize);
    let (bi, out) = (d.upload(&input), d.zeros::<f32>(input.len()));
    let args = [Arg::Slice(bi), Arg::Slice(out), value(rows), value(cols)];
    let result = d.launch(module, "transpose_tiled", [2, 2, 1], [32, 8, 1], 0, &args);
    (d, input, out, result)
}

#[test]
fn a_removed_bar_sync_in_the_tiled_transpose_is_a_race() {
    let (_, _, _, clean) = transpose(library());
    clean.expect("the unedited kernel runs clean");
    let ptx = edit_kernel(library_ptx(), "transpose_tiled", |l| {
        (l.trim() != "bar.sync 0;").then(|| l.to_string())
    });
    let removed = library_ptx().matches("bar.sync").count() - ptx.matches("bar.sync").count();
    assert!(removed >= 1, "the kernel had a bar.sync to remove");
    // Thread 0 runs ahead to the loads of elements other threads store: the shared-memory check
    // reports them as never stored (or, once stored, as a race with the storing thread).
    let fault = transpose(&Module::parse(&ptx).unwrap()).3.unwrap_err();
    let caught = (fault.kind == FaultKind::Divergence
        && fault.message.contains("shared-memory race"))
        || (fault.kind == FaultKind::IllegalAddress
            && fault
                .message
                .contains("no thread of the block has stored to"));
    assert!(
        caught && fault.message.contains("transpose_tiled"),
        "{fault}"
    );
    assert!(
        fault.message.contains("ld.shared.b32"),
        "names the load: {fault}"
    );
}

/// test-kernels' planted uninitialized read: thread 0 reads a shared element no thread writes.
#[test]
fn an_uninitialized_shared_read_faults() {
    let d = Device::new();
    let out = d.zeros::<f32>(32);
    let fault = d
        .launch(
            test_kernels(),
            "uninitialized_shared",
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[Arg::Slice(out)],
        )
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(
        fault
            .message
            .contains("no thread of the block has stored to"),
        "{fault}"
    );
}

/// The tiled transpose with its tile's shared-window address (`mov.u32 %r, TILE`) moved past the
/// tile's 4224 bytes: its first shared access faults. (A generic address used as a shared one:
/// `a_generic_address_used_as_shared_faults`.)
#[test]
fn a_shared_window_past_the_tile_faults() {
    let ptx = edit_kernel(library_ptx(), "transpose_tiled", |l| {
        Some(match l.contains("mov.u32") {
            true => l.replace("__ferrocuda_shared_transpose_tiled_0;", "4224;"),
            false => l.to_string(),
        })
    });
    assert_ne!(
        ptx,
        library_ptx(),
        "the kernel reads its tile's window with mov.u32"
    );
    let fault = transpose(&Module::parse(&ptx).unwrap()).3.unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(fault.message.contains("shared memory"), "{fault}");
}

/// A hand-written kernel: `tile[tid]`, through a generic address, with or without its
/// `cvta.to.shared` before the `st.shared`.
fn shared_store(convert: bool) -> String {
    let conversion = if convert {
        "cvta.to.shared.u64 %rd1, %rd1;"
    } else {
        ""
    };
    format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n.shared .align 4 .b8 tile[128];\n\
         .visible .entry k()\n{{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\ncvta.shared.u64 %rd1, tile;\n\
         add.s64 %rd1, %rd1, %rd2;\n{conversion}\nst.shared.u32 [%rd1], %r1;\nret;\n}}\n"
    )
}

#[test]
fn a_generic_address_used_as_shared_faults() {
    let d = Device::new();
    let good = Module::parse(&shared_store(true)).unwrap();
    d.launch(&good, "k", [1, 1, 1], [32, 1, 1], 0, &[])
        .expect("with cvta.to.shared");
    let bad = Module::parse(&shared_store(false)).unwrap();
    let fault = d
        .launch(&bad, "k", [1, 1, 1], [32, 1, 1], 0, &[])
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    assert!(
        fault.message.contains("st.shared.u32")
            && fault.message.contains("128 bytes of shared memory"),
        "{fault}"
    );
}

/// Lanes at or past `live` exit; the rest shuffle with a full mask.
fn shuffle_after_exit(live: u32) -> String {
    format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
         mov.u32 %r1, %laneid;\nsetp.ge.u32 %p1, %r1, {live};\n@%p1 exit;\n\
         shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n\
         ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
         st.global.u32 [%rd3], %r2;\nret;\n}}\n"
    )
}

#[test]
fn a_shuffle_whose_mask_names_an_exited_lane_faults() {
    let d = Device::new();
    let out = d.zeros::<u32>(32);
    let all = Module::parse(&shuffle_after_exit(32)).unwrap();
    d.launch(&all, "k", [1, 1, 1], [32, 1, 1], 0, &[value(out.addr)])
        .expect("every lane arrives");
    assert_eq!(
        d.download::<u32>(out),
        (0..32).map(|l| l ^ 1).collect::<Vec<u32>>()
    );
    let some = Module::parse(&shuffle_after_exit(16)).unwrap();
    let fault = d
        .launch(&some, "k", [1, 1, 1], [32, 1, 1], 0, &[value(out.addr)])
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(
        fault.message.contains("names lane 16, which has exited"),
        "{fault}"
    );
}

#[test]
fn test_kernels_warp_divergence_is_caught() {
    let d = Device::new();
    let out = d.zeros::<u32>(32);
    let fault = d
        .launch(
            test_kernels(),
            "warp_divergence",
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[Arg::Slice(out)],
        )
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(fault.message.contains("which has exited"), "{fault}");
}

#[test]
fn a_global_access_one_past_an_allocation_faults() {
    let d = Device::new();
    let n = 1000;
    let a = d.upload(&random_f32(12, n));
    let (b, out) = (d.upload(&random_f32(13, n)), d.zeros::<f32>(n + 1));
    let args = |len| {
        [
            Arg::Slice(Buffer { len, ..a }),
            Arg::Slice(Buffer { len, ..b }),
            Arg::Slice(Buffer { len, ..out }),
        ]
    };
    d.launch(
        library(),
        "vector_add",
        [4, 1, 1],
        [256, 1, 1],
        0,
        &args(n as u64),
    )
    .expect("in bounds");
    // The kernel trusts the lengths it is given: one more than a and b hold.
    let fault = d
        .launch(
            library(),
            "vector_add",
            [4, 1, 1],
            [256, 1, 1],
            0,
            &args(n as u64 + 1),
        )
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::IllegalAddress, "{fault}");
    let one_past = format!("{:#x}", a.addr + 4 * n as u64);
    assert!(
        fault.message.contains(&one_past) && fault.message.contains("thread (232, 0, 0)"),
        "{fault}"
    );
    assert!(
        fault.message.contains("not inside any live allocation"),
        "{fault}"
    );
}

#[test]
fn planted_test_kernel_bugs_are_caught() {
    let d = Device::new();
    let x = d.upload(&[1.0f32; 64]);
    let out = d.zeros::<f32>(64);
    let race = d.launch(
        test_kernels(),
        "race_missing_barrier",
        [1, 1, 1],
        [64, 1, 1],
        0,
        &[Arg::Slice(x), Arg::Slice(out)],
    );
    let race = race.unwrap_err();
    assert!(
        race.kind == FaultKind::Divergence && race.message.contains("race"),
        "{race}"
    );
    d.launch(
        test_kernels(),
        "rotate_in_block",
        [1, 1, 1],
        [64, 1, 1],
        0,
        &[Arg::Slice(x), Arg::Slice(out)],
    )
    .expect("the fixed version");

    let past = d
        .launch(
            test_kernels(),
            "shared_past_end",
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[Arg::Slice(out)],
        )
        .unwrap_err();
    assert!(
        matches!(past.kind, FaultKind::IllegalAddress | FaultKind::Trap),
        "{past}"
    );

    let negative = d.upload(&[-1.0f32; 64]);
    let trap = d
        .launch(
            test_kernels(),
            "assert_non_negative",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Slice(negative), Arg::Slice(out)],
        )
        .unwrap_err();
    assert_eq!(trap.kind, FaultKind::Trap, "{trap}");

    for synced in [1u32, 0] {
        let r = d.launch(
            test_kernels(),
            "warp_exchange",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Slice(x), Arg::Slice(out), value(synced)],
        );
        match synced {
            1 => r.expect("ordered by sync_warp"),
            _ => {
                let race = r.unwrap_err();
                assert!(race.message.contains("race"), "{race}");
                continue;
            }
        };
    }
}

/// Half the block at barrier 0, half at barrier 1: nothing can proceed. A fault, not a hang.
#[test]
fn a_barrier_not_every_thread_reaches_is_a_fault_not_a_hang() {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n.reg .pred %p<2>;\n.reg .b32 %r<2>;\n\
               mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 16;\n@%p1 bra $L1;\nbar.sync 1;\nret;\n$L1:\nbar.sync 0;\nret;\n}\n";
    let fault = Device::new()
        .launch(
            &Module::parse(ptx).unwrap(),
            "k",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[],
        )
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(
        fault.message.contains("deadlock")
            && fault.message.contains("16 thread(s)")
            && fault.message.contains("48 thread(s)"),
        "{fault}"
    );
}
