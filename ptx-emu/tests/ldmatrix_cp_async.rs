//! `ldmatrix` (every count, with and without `.trans`) against the PTX ISA's description of
//! which lane gives which row's address and which lane receives which elements; `cp.async`'s
//! sizes, zero fill and groups (`commit_group`, `wait_group N`, `wait_all`), and the faults.

mod support;

use ferrocuda_ptx_emu::{FaultKind, Module};
use support::*;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// 1 KiB of shared memory holding the u16 values `3i + 1`, then one `ldmatrix` whose lane `l`
/// gives the shared offset `offsets[l]`; each lane's 4 result registers to `out`.
fn run_ldmatrix(count: usize, trans: bool, offsets: &[u32; 32]) -> Vec<u32> {
    let regs = ["%d0", "%d1", "%d2", "%d3"][..count].join(",");
    let instruction = format!(
        "ldmatrix.sync.aligned.m8n8.x{count}{}.shared.b16 {{{regs}}}, [%s1];",
        if trans { ".trans" } else { "" }
    );
    let ptx = format!(
        "{HEADER}.shared .align 16 .b8 tile[1024];\n\
         .visible .entry k(.param .u64 data, .param .u64 offsets, .param .u64 out)\n{{\n\
         .reg .b32 %v<4>;\n.reg .b32 %d<4>;\n.reg .b32 %s<3>;\n.reg .b32 %t;\n.reg .b64 %p<6>;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %p0, [data];\nmul.wide.u32 %p1, %t, 32;\nadd.s64 %p0, %p0, %p1;\n\
         mov.u32 %s0, tile;\nmad.lo.u32 %s0, %t, 32, %s0;\n\
         ld.global.v4.b32 {{%v0,%v1,%v2,%v3}}, [%p0];\nst.shared.v4.b32 [%s0], {{%v0,%v1,%v2,%v3}};\n\
         ld.global.v4.b32 {{%v0,%v1,%v2,%v3}}, [%p0+16];\nst.shared.v4.b32 [%s0+16], {{%v0,%v1,%v2,%v3}};\n\
         bar.sync 0;\n\
         ld.param.u64 %p2, [offsets];\nmul.wide.u32 %p1, %t, 4;\nadd.s64 %p2, %p2, %p1;\nld.global.u32 %s1, [%p2];\n\
         mov.u32 %s2, tile;\nadd.s32 %s1, %s1, %s2;\n{instruction}\n\
         ld.param.u64 %p3, [out];\nmul.wide.u32 %p1, %t, 16;\nadd.s64 %p3, %p3, %p1;\n\
         st.global.v4.b32 [%p3], {{%d0,%d1,%d2,%d3}};\nret;\n}}\n"
    );
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{instruction}: {e}"));
    let d = Device::new();
    let data: Vec<u16> = (0..512).map(|i| 3 * i as u16 + 1).collect();
    let (data, offsets_buffer) = (d.upload(&data), d.upload(offsets));
    let out = d.zeros::<u32>(32 * 4);
    d.launch(
        &module,
        "k",
        [1, 1, 1],
        [32, 1, 1],
        0,
        &[
            value(data.addr),
            value(offsets_buffer.addr),
            value(out.addr),
        ],
    )
    .unwrap_or_else(|f| panic!("{instruction}: {f}"));
    d.download::<u32>(out)
}

#[test]
fn ldmatrix_every_count_with_and_without_trans() {
    // Rows scattered over the tile, 16-byte aligned, in no order: lane l gives row l*7+3 (mod 64).
    let offsets: [u32; 32] = std::array::from_fn(|l| ((l as u32 * 7 + 3) % 64) * 16);
    // The ISA: lanes 8j..8j+7 give the addresses of rows 0..7 of matrix j; matrix j goes to
    // each lane's register j; lane l receives row l/4, elements 2(l%4) and 2(l%4)+1 (the lower
    // in the low half); with .trans, the matrix is transposed first.
    let element = |matrix: usize, row: usize, col: usize| {
        let offset = offsets[8 * matrix + row] as usize / 2 + col;
        3 * offset as u32 + 1
    };
    for count in [1, 2, 4] {
        for trans in [false, true] {
            let got = run_ldmatrix(count, trans, &offsets);
            for lane in 0..32 {
                for j in 0..count {
                    let (r, c) = (lane / 4, 2 * (lane % 4));
                    let (lo, hi) = if trans {
                        (element(j, c, r), element(j, c + 1, r))
                    } else {
                        (element(j, r, c), element(j, r, c + 1))
                    };
                    assert_eq!(
                        got[lane * 4 + j],
                        lo | hi << 16,
                        "x{count} trans={trans}: lane {lane} register {j}"
                    );
                }
            }
        }
    }
}

#[test]
fn ldmatrix_faults_on_a_misaligned_or_out_of_range_row() {
    let mut offsets: [u32; 32] = std::array::from_fn(|l| l as u32 * 16);
    offsets[3] = 8;
    let fault = std::panic::catch_unwind(|| run_ldmatrix(1, false, &offsets)).unwrap_err();
    let message = fault.downcast_ref::<String>().unwrap();
    assert!(message.contains("misaligned"), "{message}");
    offsets[3] = 1024;
    let fault = std::panic::catch_unwind(|| run_ldmatrix(1, false, &offsets)).unwrap_err();
    let message = fault.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("outside the block's 1024 bytes"),
        "{message}"
    );
    // Lanes past the count give no address: theirs is never read.
    offsets[3] = 0;
    offsets[20] = 4096;
    run_ldmatrix(2, false, &offsets);
}

/// One thread: fills 64 shared bytes with 0xee, then issues copies from `src` in groups and
/// snapshots the bytes to `out` after `wait_group 1`, `wait_group 0` and `wait_all`.
const GROUPS: &str = ".shared .align 16 .b8 buf[64];\n\
    .visible .entry k(.param .u64 src, .param .u64 out)\n{\n\
    .reg .b32 %s;\n.reg .b32 %e;\n.reg .b32 %v<4>;\n.reg .b64 %p<3>;\n\
    ld.param.u64 %p0, [src];\nld.param.u64 %p1, [out];\nmov.u32 %s, buf;\nmov.b32 %e, 0xeeeeeeee;\n\
    st.shared.v4.b32 [buf], {%e,%e,%e,%e};\nst.shared.v4.b32 [buf+16], {%e,%e,%e,%e};\n\
    st.shared.v4.b32 [buf+32], {%e,%e,%e,%e};\nst.shared.v4.b32 [buf+48], {%e,%e,%e,%e};\n\
    cp.async.ca.shared.global [%s], [%p0], 16;\ncp.async.commit_group;\n\
    cp.async.cg.shared.global [%s+16], [%p0+16], 16, 8;\ncp.async.commit_group;\n\
    cp.async.ca.shared.global [%s+32], [%p0+32], 4;\ncp.async.ca.shared.global [%s+40], [%p0+40], 8;\n\
    cp.async.wait_group 1;\nSNAPSHOT\ncp.async.wait_group 0;\nSNAPSHOT\ncp.async.wait_all;\nSNAPSHOT\n\
    ret;\n}\n";

fn snapshot() -> String {
    let mut s = String::new();
    for k in 0..4 {
        s += &format!(
            "ld.shared.v4.b32 {{%v0,%v1,%v2,%v3}}, [buf+{o}];\nst.global.v4.b32 [%p1+{o}], {{%v0,%v1,%v2,%v3}};\n",
            o = 16 * k
        );
    }
    s + "add.s64 %p1, %p1, 64;"
}

#[test]
fn cp_async_groups_complete_as_waited_for() {
    let ptx = format!("{HEADER}{}", GROUPS.replace("SNAPSHOT", &snapshot()));
    let module = Module::parse(&ptx).unwrap();
    let d = Device::new();
    let src: Vec<u8> = (1..=64).collect();
    let src_buffer = d.upload(&src);
    let out = d.zeros::<u8>(3 * 64);
    d.launch(
        &module,
        "k",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[value(src_buffer.addr), value(out.addr)],
    )
    .unwrap();
    let got = d.download::<u8>(out);
    let mut want = vec![0xee; 64];
    // wait_group 1: the first group (16 bytes) has landed, the second may not have: the
    // emulator completes copies at the latest moment the ISA allows.
    want[..16].copy_from_slice(&src[..16]);
    assert_eq!(got[..64], want, "after wait_group 1");
    // wait_group 0: the second group too, 8 bytes read and 8 zero-filled (src-size 8).
    want[16..24].copy_from_slice(&src[16..24]);
    want[24..32].fill(0);
    assert_eq!(
        got[64..128],
        want,
        "after wait_group 0 (uncommitted copies still pending)"
    );
    // wait_all: the copies never committed as well.
    want[32..36].copy_from_slice(&src[32..36]);
    want[40..48].copy_from_slice(&src[40..48]);
    assert_eq!(got[128..], want, "after wait_all");
}

fn cp_async_fault(copy: &str) -> ferrocuda_ptx_emu::Fault {
    let ptx = format!(
        "{HEADER}.shared .align 16 .b8 buf[64];\n.visible .entry k(.param .u64 src)\n{{\n\
         .reg .b32 %s;\n.reg .b64 %p0;\nld.param.u64 %p0, [src];\nmov.u32 %s, buf;\n{copy}\n\
         cp.async.wait_all;\nret;\n}}\n"
    );
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{copy}: {e}"));
    let d = Device::new();
    let src = d.upload(&[0u8; 32]);
    d.launch(&module, "k", [1, 1, 1], [1, 1, 1], 0, &[value(src.addr)])
        .unwrap_err()
}

#[test]
fn cp_async_faults_at_the_copy() {
    let f = cp_async_fault("cp.async.cg.shared.global [%s], [%p0+8], 16;");
    assert_eq!(f.kind, FaultKind::MisalignedAddress, "{f}");
    assert!(
        f.message.contains("`cp.async.cg"),
        "at the copy, not the wait: {f}"
    );
    let f = cp_async_fault("cp.async.ca.shared.global [%s+4], [%p0], 8;");
    assert_eq!(f.kind, FaultKind::MisalignedAddress, "{f}");
    let f = cp_async_fault("cp.async.ca.shared.global [%s], [%p0+32], 4;");
    assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    let f = cp_async_fault("cp.async.ca.shared.global [%s+64], [%p0], 4;");
    assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    let f = cp_async_fault("cp.async.ca.shared.global [%s], [%p0], 8, 9;");
    assert!(f.message.contains("src-size 9"), "{f}");
    // src-size 0 reads nothing: any source address is fine, the bytes are zero.
    let ok = format!(
        "{HEADER}.shared .align 16 .b8 buf[64];\n.visible .entry k()\n{{\n.reg .b32 %s;\n\
         mov.u32 %s, buf;\ncp.async.ca.shared.global [%s], [0], 16, 0;\ncp.async.wait_all;\nret;\n}}\n"
    );
    Device::new()
        .launch(
            &Module::parse(&ok).unwrap(),
            "k",
            [1, 1, 1],
            [1, 1, 1],
            0,
            &[],
        )
        .unwrap();
    // .cg copies 16 bytes only: a module with another size does not load.
    let bad = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b32 %s;\n.reg .b64 %p;\n\
         cp.async.cg.shared.global [%s], [%p], 4;\nret;\n}}\n"
    );
    let e = Module::parse(&bad).err().expect("cp.async.cg of 4 bytes");
    assert!(e.to_string().contains("[16] bytes, not 4"), "{e}");
}

/// Thread 0 copies into shared memory; thread 1 reads it after a `bar.sync`, with (`WAIT` =
/// `cp.async.wait_all;`) or without the wait before the barrier.
const HANDOFF: &str = ".shared .align 16 .b8 buf[16];\n\
    .visible .entry k(.param .u64 src, .param .u64 out)\n{\n\
    .reg .b32 %t;\n.reg .b32 %s;\n.reg .b32 %v;\n.reg .pred %p;\n.reg .b64 %a<2>;\n\
    ld.param.u64 %a0, [src];\nld.param.u64 %a1, [out];\nmov.u32 %s, buf;\nmov.u32 %t, %tid.x;\n\
    setp.eq.u32 %p, %t, 0;\n@%p cp.async.ca.shared.global [%s], [%a0], 16;\nWAIT\nbar.sync 0;\n\
    @!%p ld.shared.u32 %v, [buf+4];\n@!%p st.global.u32 [%a1], %v;\ncp.async.wait_all;\nret;\n}\n";

#[test]
fn reading_a_copy_before_waiting_for_it_is_caught() {
    let run = |wait: &str| {
        let ptx = format!("{HEADER}{}", HANDOFF.replace("WAIT", wait));
        let module = Module::parse(&ptx).unwrap();
        let d = Device::new();
        let src = d.upload(&[5u32, 6, 7, 8]);
        let out = d.zeros::<u32>(1);
        let result = d.launch(
            &module,
            "k",
            [1, 1, 1],
            [2, 1, 1],
            0,
            &[value(src.addr), value(out.addr)],
        );
        result.map(|_| d.download::<u32>(out)[0])
    };
    assert_eq!(run("cp.async.wait_all;"), Ok(6));
    // Without the wait the bytes land at thread 0's later wait: thread 1's read either finds
    // shared memory nobody stored or races with that write (which, depends on the schedule).
    let fault = run("").unwrap_err();
    let caught = (fault.kind == FaultKind::IllegalAddress
        && fault.message.contains("uninitialized"))
        || (fault.kind == FaultKind::Divergence && fault.message.contains("shared-memory race"));
    assert!(caught, "{fault}");
}
