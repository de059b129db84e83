//! The memory counters of the tensor-core data movers, against counts worked out by hand:
//! `ldmatrix` is one shared-memory request whose 8×8 matrices (8 rows of 16 bytes each) pass
//! through the 32 banks one matrix at a time, and `cp.async` is a global load of the bytes it
//! reads plus a shared store of the bytes it writes.

mod support;

use ferrocuda_ptx_emu::{InstrClass, Module, Profile};
use support::*;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// One warp fills a 1 KiB shared tile, then runs one `ldmatrix.x{count}` whose lane `l` gives
/// the row offset `offsets[l]`, and stores its registers to global memory. Returns the profile
/// and checks the profiled run computes what the unprofiled one does.
fn profile_ldmatrix(count: usize, offsets: &[u32; 32]) -> Profile {
    let regs = ["%d0", "%d1", "%d2", "%d3"][..count].join(",");
    let ptx = format!(
        "{HEADER}.shared .align 16 .b8 tile[1024];\n\
         .visible .entry k(.param .u64 offsets, .param .u64 out)\n{{\n\
         .reg .b32 %d<4>;\n.reg .b32 %s<3>;\n.reg .b32 %t;\n.reg .b64 %p<4>;\n\
         mov.u32 %t, %tid.x;\nmov.u32 %s0, tile;\nmad.lo.u32 %s0, %t, 32, %s0;\n\
         st.shared.v4.b32 [%s0], {{%t,%t,%t,%t}};\nst.shared.v4.b32 [%s0+16], {{%t,%t,%t,%t}};\n\
         bar.sync 0;\n\
         ld.param.u64 %p2, [offsets];\nmul.wide.u32 %p1, %t, 4;\nadd.s64 %p2, %p2, %p1;\n\
         ld.global.u32 %s1, [%p2];\nmov.u32 %s2, tile;\nadd.s32 %s1, %s1, %s2;\n\
         mov.b32 %d0, 0;\nmov.b32 %d1, 0;\nmov.b32 %d2, 0;\nmov.b32 %d3, 0;\n\
         ldmatrix.sync.aligned.m8n8.x{count}.shared.b16 {{{regs}}}, [%s1];\n\
         ld.param.u64 %p3, [out];\nmul.wide.u32 %p1, %t, 16;\nadd.s64 %p3, %p3, %p1;\n\
         st.global.v4.b32 [%p3], {{%d0,%d1,%d2,%d3}};\nret;\n}}\n"
    );
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let d = Device::new();
    let offsets_buffer = d.upload(offsets);
    let run = |profiled: bool| {
        let out = d.zeros::<u32>(32 * 4);
        let args = [value(offsets_buffer.addr), value(out.addr)];
        let p = if profiled {
            d.profile(&module, "k", [1, 1, 1], [32, 1, 1], &args)
                .unwrap()
        } else {
            d.launch(&module, "k", [1, 1, 1], [32, 1, 1], 0, &args)
                .unwrap();
            Profile::default()
        };
        (p, d.download::<u32>(out))
    };
    let (p, profiled) = run(true);
    let (_, plain) = run(false);
    assert_eq!(profiled, plain, "counters change what ldmatrix loads");
    p
}

#[test]
fn ldmatrix_is_one_shared_request_with_a_pass_per_matrix() {
    // (count, lane l's row offset, wavefronts worked out by hand)
    type Case = (usize, fn(u32) -> u32, u64);
    let cases: [Case; 6] = [
        // Contiguous rows: each matrix is 128 consecutive bytes, every bank once.
        (4, |l| 16 * l, 4),
        (1, |l| 16 * l, 1),
        // Rows 128 bytes apart: all 8 rows of the matrix in banks 0-3, 8 words each.
        (1, |l| 128 * l, 8),
        // Rows 64 bytes apart: banks 0-3 and 16-19 alternate, 4 rows each, per matrix.
        (2, |l| 64 * l, 4 + 4),
        // Every lane the same row: each matrix's rows are one word per bank (a broadcast).
        (4, |_| 0, 4),
        // Matrix 0 in banks 0-3, matrix 1 in banks 4-7, rows 128 bytes apart: 8 each, one
        // matrix after the other (a whole-warp pass would take 8, both at once).
        (
            2,
            |l| if l < 8 { 128 * l } else { 16 + 128 * (l - 8) },
            8 + 8,
        ),
    ];
    for (count, offset, wavefronts) in cases {
        let offsets: [u32; 32] = std::array::from_fn(|l| offset(l as u32) % 1024);
        let p = profile_ldmatrix(count, &offsets);
        let what = format!("x{count}, offsets {:?}", &offsets[..8 * count]);
        assert_eq!(p.shared_loads.requests, 1, "{what}");
        assert_eq!(p.shared_loads.wavefronts, wavefronts, "{what}");
        // Each matrix is 32 words: one wavefront at least.
        assert_eq!(p.shared_loads.ideal_wavefronts, count as u64, "{what}");
        assert_eq!(p.class(InstrClass::LoadShared), 1, "{what}");
        // The tile's fill: 2 requests of 32 lanes × 16 bytes 32 bytes apart: banks 0-3, 8-11,
        // 16-19 and 24-27 only, 8 words each: 8 wavefronts per request.
        assert_eq!(p.shared_stores.requests, 2, "{what}");
        assert_eq!(p.shared_stores.wavefronts, 16, "{what}");
    }
}

/// One warp: lane `l` copies `bytes` from `src + l·src_stride` to `tile + l·dst_stride` with
/// `cp.async` reading `src_size` of them, waits, and copies the tile to `out`.
fn profile_cp_async(bytes: u32, src_stride: u32, dst_stride: u32, src_size: u32) -> Profile {
    let ptx = format!(
        "{HEADER}.shared .align 16 .b8 tile[4096];\n\
         .visible .entry k(.param .u64 src, .param .u64 out)\n{{\n\
         .reg .b32 %s<2>;\n.reg .b32 %t;\n.reg .b32 %n;\n.reg .b64 %p<4>;\n\
         mov.u32 %t, %tid.x;\nmov.u32 %n, {src_size};\n\
         ld.param.u64 %p0, [src];\nmul.wide.u32 %p1, %t, {src_stride};\nadd.s64 %p0, %p0, %p1;\n\
         mov.u32 %s0, tile;\nmad.lo.u32 %s0, %t, {dst_stride}, %s0;\n\
         cp.async.ca.shared.global [%s0], [%p0], {bytes}, %n;\ncp.async.wait_all;\n\
         ld.shared.b32 %s1, [%s0];\n\
         ld.param.u64 %p2, [out];\nmul.wide.u32 %p1, %t, 4;\nadd.s64 %p2, %p2, %p1;\n\
         st.global.b32 [%p2], %s1;\nret;\n}}\n"
    );
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let d = Device::new();
    let src: Vec<u32> = (0..32 * src_stride / 4).map(|i| i + 1).collect();
    let src_buffer = d.upload(&src);
    let out = d.zeros::<u32>(32);
    let p = d
        .profile(
            &module,
            "k",
            [1, 1, 1],
            [32, 1, 1],
            &[value(src_buffer.addr), value(out.addr)],
        )
        .unwrap();
    // Each lane's first word arrived (or was zero-filled).
    let want: Vec<u32> = (0..32)
        .map(|l| {
            if src_size >= 4 {
                src[(l * src_stride / 4) as usize]
            } else {
                0
            }
        })
        .collect();
    assert_eq!(d.download::<u32>(out), want);
    p
}

#[test]
fn cp_async_is_a_global_load_and_a_shared_store() {
    // (bytes, src stride, dst stride, src-size, global sectors, shared wavefronts), by hand.
    let cases = [
        // 32 lanes × 16 contiguous bytes: 512 bytes, 16 sectors; 128 words, 4 per bank.
        (16, 16, 16, 16, 16, 4),
        // 4 bytes a lane, 32 bytes apart: one sector each; 4-byte words side by side.
        (4, 32, 4, 4, 32, 1),
        // 8 bytes a lane, contiguous: 256 bytes, 8 sectors; 64 words, 2 per bank.
        (8, 8, 8, 8, 8, 2),
        // Shared words 128 bytes apart: all in bank 0, 32 ways.
        (4, 4, 128, 4, 4, 32),
    ];
    for (bytes, src_stride, dst_stride, src_size, sectors, wavefronts) in cases {
        let what = format!("{bytes} bytes, strides {src_stride}/{dst_stride}");
        let p = profile_cp_async(bytes, src_stride, dst_stride, src_size);
        assert_eq!(p.global_loads.requests, 1, "{what}");
        assert_eq!(p.global_loads.sectors, sectors, "{what}");
        assert_eq!(
            p.global_loads.bytes_requested,
            32 * src_size as u64,
            "{what}"
        );
        assert_eq!(p.shared_stores.requests, 1, "{what}");
        assert_eq!(p.shared_stores.wavefronts, wavefronts, "{what}");
        assert_eq!(p.class(InstrClass::LoadGlobal), 1, "{what}");
        // The tile read back: one shared load, one global store, as plain instructions.
        assert_eq!(p.shared_loads.requests, 1, "{what}");
        assert_eq!(p.global_stores.requests, 1, "{what}");
    }
    // A src-size of 0 reads nothing (zero fill): no global request, the shared store remains.
    let p = profile_cp_async(4, 4, 4, 0);
    assert_eq!(p.global_loads, Default::default());
    assert_eq!(
        (p.shared_stores.requests, p.shared_stores.wavefronts),
        (1, 1)
    );
}
