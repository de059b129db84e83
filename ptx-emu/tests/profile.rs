//! The counters of a profiled launch against counts worked out by hand: coalescing of strided
//! loads, shared-memory bank conflicts and broadcasts, a branch that splits every warp in half,
//! same-address atomics, barriers, and the library's transposes' known access patterns.

mod support;

use ferrocuda_ptx_emu::{InstrClass, Module, Profile};
use support::*;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

fn module(body: &str) -> Module {
    let ptx = format!("{HEADER}{body}");
    Module::parse(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"))
}

/// `out[t] = in[t * k]` for every thread t: lanes load 4-byte elements `k` apart.
const STRIDED: &str = "
.visible .entry strided(.param .u64 in, .param .u64 out, .param .u32 k)
{
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.reg .f32 %f<2>;
mov.u32 %r1, %ctaid.x;
mov.u32 %r2, %ntid.x;
mov.u32 %r3, %tid.x;
mad.lo.u32 %r1, %r1, %r2, %r3;
ld.param.u32 %r4, [k];
mul.lo.u32 %r5, %r1, %r4;
ld.param.u64 %rd1, [in];
mul.wide.u32 %rd2, %r5, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.f32 %f1, [%rd3];
ld.param.u64 %rd4, [out];
mul.wide.u32 %rd5, %r1, 4;
add.s64 %rd6, %rd4, %rd5;
st.global.f32 [%rd6], %f1;
ret;
}
";

/// 32-byte sectors a warp's 4-byte accesses at `addresses` touch, counted independently of
/// the emulator (a set of sector numbers).
fn sectors(addresses: impl Iterator<Item = u64>) -> u64 {
    addresses
        .map(|a| a / 32)
        .collect::<std::collections::BTreeSet<_>>()
        .len() as u64
}

#[test]
fn strided_loads_take_min_4k_32_sectors_per_request_and_a_broadcast_one() {
    let m = module(STRIDED);
    let d = Device::new();
    let (blocks, threads) = (2u32, 64u32);
    let n = (blocks * threads) as usize;
    for k in [0u32, 1, 2, 3, 4, 8, 16, 32, 64] {
        let input: Vec<f32> = (0..n * k.max(1) as usize).map(|i| i as f32).collect();
        let inb = d.upload(&input);
        let out = d.zeros::<f32>(n);
        let args = [value(inb.addr), value(out.addr), value(k)];
        let p = d
            .profile(&m, "strided", [blocks, 1, 1], [threads, 1, 1], &args)
            .unwrap();
        let got = d.download::<f32>(out);
        let want: Vec<f32> = (0..n).map(|t| input[t * k as usize]).collect();
        assert_eq!(got, want, "k = {k}: the profiled run computes the same");
        let warps = (n / 32) as u64;
        // The allocation is 256-byte aligned: warp w's lanes read in + 4k(32w + l).
        let per_warp = sectors((0..32u64).map(|l| inb.addr + 4 * k as u64 * l));
        let closed_form = if k == 0 { 1 } else { (4 * k as u64).min(32) };
        assert_eq!(per_warp, closed_form, "k = {k}: the reference");
        assert_eq!(p.global_loads.requests, warps, "k = {k}");
        assert_eq!(p.global_loads.sectors, warps * closed_form, "k = {k}");
        assert_eq!(p.global_loads.bytes_requested, warps * 128, "k = {k}");
        // Stores are unit-stride: 4 sectors per request whatever k is.
        assert_eq!(p.global_stores.requests, warps);
        assert_eq!(p.global_stores.sectors, warps * 4);
        // Straight-line code: every lane active at every instruction.
        assert_eq!(p.warp_instructions, warps * 15, "k = {k}");
        assert_eq!(p.simt_efficiency(), Some(1.0));
        assert_eq!(p.class(InstrClass::LoadGlobal), warps);
        assert_eq!(p.class(InstrClass::StoreGlobal), warps);
        assert_eq!(p.class(InstrClass::Param), 3 * warps);
        assert_eq!(p.blocks, blocks as u64);
    }
}

/// Lane t stores to and loads shared word `t * s`, then every lane loads word 0.
const BANKS: &str = "
.visible .entry banks(.param .u64 out, .param .u32 s)
{
.reg .b32 %r<10>;
.reg .b64 %rd<8>;
.shared .align 4 .b8 tile[8192];
mov.u32 %r1, %tid.x;
ld.param.u32 %r2, [s];
mul.lo.u32 %r3, %r1, %r2;
mul.wide.u32 %rd1, %r3, 4;
mov.u64 %rd2, tile;
add.s64 %rd3, %rd2, %rd1;
st.shared.u32 [%rd3], %r1;
bar.sync 0;
ld.shared.u32 %r4, [%rd3];
ld.shared.u32 %r5, [tile];
add.u32 %r6, %r4, %r5;
ld.param.u64 %rd4, [out];
mul.wide.u32 %rd5, %r1, 4;
add.s64 %rd6, %rd4, %rd5;
st.global.u32 [%rd6], %r6;
ret;
}
";

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn shared_strides_conflict_gcd_s_32_ways_and_a_broadcast_takes_one_wavefront() {
    let m = module(BANKS);
    let d = Device::new();
    let threads = 64u32;
    let warps = 2u64;
    for s in [1u32, 2, 3, 4, 8, 16, 32] {
        let out = d.zeros::<u32>(threads as usize);
        let p = d
            .profile(
                &m,
                "banks",
                [1, 1, 1],
                [threads, 1, 1],
                &[value(out.addr), value(s)],
            )
            .unwrap();
        let want: Vec<u32> = (0..threads).collect();
        assert_eq!(d.download::<u32>(out), want, "s = {s}");
        // Lanes l and l' hit the same bank when s·l ≡ s·l' (mod 32): gcd(s, 32) lanes per
        // bank, each a different word.
        let ways = gcd(s as u64, 32);
        assert_eq!(p.shared_stores.requests, warps, "s = {s}");
        assert_eq!(p.shared_stores.wavefronts, warps * ways, "s = {s}");
        assert_eq!(p.shared_stores.ideal_wavefronts, warps);
        // The strided load (`ways`) and the broadcast of word 0 (one wavefront).
        assert_eq!(p.shared_loads.requests, 2 * warps);
        assert_eq!(p.shared_loads.wavefronts, warps * (ways + 1), "s = {s}");
        assert_eq!(p.barrier_instructions, warps);
        assert_eq!(p.class(InstrClass::Barrier), warps);
    }
}

/// Lanes below 16 take one arm, the others the other; both join before the store.
const HALVES: &str = "
.visible .entry halves(.param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<6>;
.reg .b64 %rd<4>;
mov.u32 %r1, %tid.x;
ld.param.u64 %rd1, [out];
mov.u32 %r2, %laneid;
setp.lt.u32 %p1, %r2, 16;
@%p1 bra THEN;
add.u32 %r3, %r1, 100;
bra JOIN;
THEN:
add.u32 %r3, %r1, 200;
JOIN:
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r3;
ret;
}
";

#[test]
fn a_branch_that_splits_every_warp_in_half() {
    let m = module(HALVES);
    let d = Device::new();
    let (threads, warps) = (128u32, 4u64);
    let out = d.zeros::<u32>(threads as usize);
    let p = d
        .profile(&m, "halves", [1, 1, 1], [threads, 1, 1], &[value(out.addr)])
        .unwrap();
    let want: Vec<u32> = (0..threads)
        .map(|t| t + if t % 32 < 16 { 200 } else { 100 })
        .collect();
    assert_eq!(d.download::<u32>(out), want);
    // Per warp: 8 instructions with 32 lanes (4 before the branch, the branch, 4 after the
    // join), the `else` arm's add and `bra JOIN` with 16, the `then` arm's add with 16. Had
    // the warp not reconverged at JOIN, its 4 last instructions would count twice.
    assert_eq!(p.warp_instructions, warps * 12);
    assert_eq!(p.thread_instructions, warps * (9 * 32 + 3 * 16));
    // The `@%p1 bra` is predicated off for the 16 lanes that fall through.
    assert_eq!(
        p.thread_instructions_pred_on,
        warps * (9 * 32 + 3 * 16 - 16)
    );
    assert_eq!(p.simt_efficiency(), Some(336.0 / 384.0));
    // Two branches per warp: `@%p1 bra` divergent, `bra JOIN` (16 lanes, one target) not.
    assert_eq!(p.branches, warps * 2);
    assert_eq!(p.divergent_branches, warps);
    assert_eq!(p.branch_efficiency(), Some(0.5));
    assert_eq!(p.class(InstrClass::Control), warps * 3);
}

/// Every lane adds 1 to `counters[t % m]`.
const ATOMICS: &str = "
.visible .entry atomics(.param .u64 counters, .param .u32 m)
{
.reg .b32 %r<6>;
.reg .b64 %rd<4>;
mov.u32 %r1, %tid.x;
ld.param.u32 %r2, [m];
rem.u32 %r3, %r1, %r2;
ld.param.u64 %rd1, [counters];
mul.wide.u32 %rd2, %r3, 4;
add.s64 %rd3, %rd1, %rd2;
atom.global.add.u32 %r4, [%rd3], 1;
ret;
}
";

#[test]
fn atomics_on_the_same_address_within_a_warp_are_counted() {
    let m = module(ATOMICS);
    let d = Device::new();
    let (threads, warps) = (64u32, 2u64);
    for targets in [1u32, 4, 32, 64] {
        let counters = d.zeros::<u32>(targets as usize);
        let p = d
            .profile(
                &m,
                "atomics",
                [1, 1, 1],
                [threads, 1, 1],
                &[value(counters.addr), value(targets)],
            )
            .unwrap();
        let want: Vec<u32> = (0..targets)
            .map(|j| (0..threads).filter(|t| t % targets == j).count() as u32)
            .collect();
        assert_eq!(d.download::<u32>(counters), want);
        assert_eq!(p.atomic_requests, warps);
        assert_eq!(p.atomic_lanes, warps * 32);
        // Each warp's 32 lanes hit min(targets, 32) distinct counters.
        let distinct = targets.min(32) as u64;
        assert_eq!(p.atomic_same_address, warps * (32 - distinct), "{targets}");
        assert_eq!(p.class(InstrClass::AtomicGlobal), warps);
    }
}

/// A launch runs the same with and without counters, and counts the same instructions.
#[test]
fn counters_do_not_change_what_a_launch_computes() {
    let m = module(HALVES);
    let d = Device::new();
    let (plain, counted) = (d.zeros::<u32>(96), d.zeros::<u32>(96));
    let stats = d
        .launch(&m, "halves", [1, 1, 1], [96, 1, 1], 0, &[value(plain.addr)])
        .unwrap();
    assert_eq!(stats.profile, None);
    let p: Profile = d
        .profile(&m, "halves", [1, 1, 1], [96, 1, 1], &[value(counted.addr)])
        .unwrap();
    assert_eq!(d.download::<u32>(plain), d.download::<u32>(counted));
    assert_eq!(stats.instructions, p.thread_instructions_pred_on);
}

/// A `rows × cols` f32 matrix transposed by the library's `kernel` with the counters on.
fn transpose(kernel: &str, rows: u32, cols: u32, block: [u32; 3], per_block: [u32; 2]) -> Profile {
    let d = Device::new();
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let inb = d.upload(&input);
    let out = d.zeros::<f32>(input.len());
    let grid = [cols.div_ceil(per_block[0]), rows.div_ceil(per_block[1]), 1];
    let args = [Arg::Slice(inb), Arg::Slice(out), value(rows), value(cols)];
    let p = d.profile(library(), kernel, grid, block, &args).unwrap();
    let got = d.download::<f32>(out);
    for r in 0..rows as usize {
        for c in 0..cols as usize {
            assert_eq!(got[c * rows as usize + r], input[r * cols as usize + c]);
        }
    }
    p
}

#[test]
fn the_library_transposes_show_their_known_access_patterns() {
    let (rows, cols) = (128, 128);
    // Naive: a warp reads 32 consecutive floats of a row (4 sectors) and writes a column, 32
    // floats `rows` apart (32 sectors).
    let naive = transpose("transpose_naive", rows, cols, [32, 8, 1], [32, 8]);
    assert_eq!(naive.global_loads.sectors, 4 * naive.global_loads.requests);
    assert_eq!(
        naive.global_stores.sectors,
        32 * naive.global_stores.requests
    );
    assert_eq!(naive.global_stores.requests, (rows * cols / 32) as u64);
    assert_eq!(
        naive.shared_loads.requests + naive.shared_stores.requests,
        0
    );
    // Tiled: rows in and rows out (4 sectors each); the padded tile's column reads hit 32
    // different banks: one wavefront per request.
    let tiled = transpose("transpose_tiled", rows, cols, [32, 8, 1], [32, 32]);
    assert_eq!(tiled.global_loads.sectors, 4 * tiled.global_loads.requests);
    assert_eq!(
        tiled.global_stores.sectors,
        4 * tiled.global_stores.requests
    );
    assert_eq!(tiled.global_stores.requests, (rows * cols / 32) as u64);
    assert_eq!(tiled.shared_loads.requests, (rows * cols / 32) as u64);
    assert_eq!(tiled.shared_loads.wavefronts, tiled.shared_loads.requests);
    assert_eq!(tiled.shared_stores.wavefronts, tiled.shared_stores.requests);
    assert_eq!(tiled.barrier_instructions, (rows * cols / 32) as u64 / 4);
}

/// The emulator's counters as `ferrocuda::profile` reads them from a launch record.
fn counters(p: &Profile) -> ferrocuda::profile::Counters {
    let global = |t: &ferrocuda_ptx_emu::GlobalTraffic| ferrocuda::profile::GlobalTraffic {
        requests: t.requests,
        sectors: t.sectors,
        bytes_requested: t.bytes_requested,
    };
    let shared = |t: &ferrocuda_ptx_emu::SharedTraffic| ferrocuda::profile::SharedTraffic {
        requests: t.requests,
        wavefronts: t.wavefronts,
        ideal_wavefronts: t.ideal_wavefronts,
    };
    ferrocuda::profile::Counters {
        warp_instructions: p.warp_instructions,
        by_class: InstrClass::ALL
            .iter()
            .map(|&c| (c.name().to_string(), p.class(c)))
            .collect(),
        thread_instructions: p.thread_instructions,
        thread_instructions_pred_on: p.thread_instructions_pred_on,
        branches: p.branches,
        divergent_branches: p.divergent_branches,
        global_loads: global(&p.global_loads),
        global_stores: global(&p.global_stores),
        shared_loads: shared(&p.shared_loads),
        shared_stores: shared(&p.shared_stores),
        atomic_requests: p.atomic_requests,
        atomic_lanes: p.atomic_lanes,
        atomic_same_address: p.atomic_same_address,
        barrier_instructions: p.barrier_instructions,
        blocks: p.blocks,
    }
}

/// The seed's lesson, 1024² f32 on an H200 (estimated): the naive transpose's column writes
/// against the tiled one's row writes, and the tile's padding against none. Prints the table
/// README.md shows (`cargo test -p ferrocuda-ptx-emu --test profile -- --nocapture lesson`).
#[test]
fn the_transpose_lesson() {
    let side = 1024;
    let naive_16 = transpose("transpose_naive", side, side, [16, 16, 1], [16, 16]);
    let naive_32 = transpose("transpose_naive", side, side, [32, 8, 1], [32, 8]);
    let padded = transpose("transpose_tiled", side, side, [32, 8, 1], [32, 32]);
    let unpadded = {
        let d = Device::new();
        let input: Vec<f32> = (0..side * side).map(|i| i as f32).collect();
        let (inb, out) = (d.upload(&input), d.zeros::<f32>(input.len()));
        let args = [Arg::Slice(inb), Arg::Slice(out), value(side), value(side)];
        let grid = [side / 32, side / 32, 1];
        let m = test_kernels();
        let p = d
            .profile(m, "transpose_tiled_unpadded", grid, [32, 8, 1], &args)
            .unwrap();
        let got = d.download::<f32>(out);
        for (i, &v) in got.iter().enumerate() {
            let (r, c) = (i / side as usize, i % side as usize);
            assert_eq!(v, input[c * side as usize + r]);
        }
        p
    };
    let requests = (side * side / 32) as u64;
    // A warp of a 16 × 16 block spans two rows of threads: its 32 column writes fall in pairs
    // into 16 sectors; of a 32-wide block, into 32.
    assert_eq!(naive_16.global_stores.sectors, 16 * requests);
    assert_eq!(naive_32.global_stores.sectors, 32 * requests);
    for tiled in [&padded, &unpadded] {
        assert_eq!(tiled.global_stores.sectors, 4 * requests);
        assert_eq!(tiled.global_loads.sectors, 4 * requests);
        assert_eq!(tiled.shared_stores.wavefronts, requests);
    }
    // Reading a tile column: 32 banks with the padding, one bank 32 times without.
    assert_eq!(padded.shared_loads.wavefronts, requests);
    assert_eq!(unpadded.shared_loads.wavefronts, 32 * requests);
    let h200 = ferrocuda::profile::gpu("h200").unwrap();
    let estimate = |p: &Profile| ferrocuda::profile::estimate(h200, &counters(p), p.blocks).seconds;
    // The estimate orders them as the counts do: more sectors, or more passes through the
    // banks, take longer.
    assert!(estimate(&naive_32) > estimate(&naive_16));
    assert!(estimate(&naive_16) > estimate(&padded));
    assert!(estimate(&unpadded) > estimate(&padded));
    println!("| kernel (1024² f32) | block | store sectors/request | shared wavefronts/request (loads) | estimated time on an H200 |");
    println!("|---|---|---|---|---|");
    for (name, block, p) in [
        ("transpose_naive", "16 × 16", &naive_16),
        ("transpose_naive", "32 × 8", &naive_32),
        ("transpose_tiled (padded tile)", "32 × 8", &padded),
        (
            "transpose_tiled_unpadded (test kernel)",
            "32 × 8",
            &unpadded,
        ),
    ] {
        let c = counters(p);
        let e = ferrocuda::profile::estimate(h200, &c, p.blocks);
        let shared = match c.shared_loads.requests {
            0 => "-".to_string(),
            r => format!("{:.0}", c.shared_loads.wavefronts as f64 / r as f64),
        };
        println!(
            "| {name} | {block} | {:.0} | {shared} | {:.1} µs ({}) |",
            c.store_sectors_per_request().unwrap(),
            e.seconds * 1e6,
            e.bound()
        );
    }
}
