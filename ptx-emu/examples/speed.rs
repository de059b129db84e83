//! How fast the emulator runs the library's kernels: PTX instructions per second (summed over
//! all threads) for a few kernels at test-like sizes, on all cores and on one.
//!
//! `cargo run --release -p ferrocuda-ptx-emu --example speed` (the PTX ferrocuda ships); with
//! `-- --profile`, the same launches with the counters on (`LaunchOptions::profile`), to
//! measure what profiling costs; `--small` runs a 64th of the work (for valgrind's instruction
//! counts, which a loaded machine does not disturb as it does times).

use std::time::Instant;

use ferrocuda_ptx_emu::{launch_with, LaunchDims, LaunchKind, LaunchOptions, Memory, Module};

/// A kernel, its grid and block, and its parameters' bytes.
type Case = (&'static str, [u32; 3], [u32; 3], Vec<Vec<u8>>);

fn main() {
    let module = Module::parse(ferrocuda::KERNELS.source()).expect("the library's PTX parses");
    let memory = Memory::new(1 << 32);
    let buffer = |floats: usize| {
        let addr = memory.alloc(floats as u64 * 4).expect("alloc");
        let data: Vec<u8> = (0..floats)
            .flat_map(|i| ((i % 97) as f32 * 0.01).to_le_bytes())
            .collect();
        memory.write(addr, &data).expect("write");
        addr
    };
    let slice = |addr: u64, len: usize| {
        [
            addr.to_le_bytes().to_vec(),
            (len as u64).to_le_bytes().to_vec(),
        ]
    };
    // `--small`: a 64th of the work, for instruction counts under valgrind (callgrind).
    let small = std::env::args().any(|a| a == "--small");
    let n = if small { 1 << 14 } else { 1 << 20 };
    let (a, b, c) = (buffer(n), buffer(n), buffer(n));
    let side = if small { 64u32 } else { 256 };
    let m = (side * side) as usize;
    let mut cases: Vec<Case> = Vec::new();
    let three = |x: [Vec<u8>; 2], y: [Vec<u8>; 2], z: [Vec<u8>; 2]| [x, y, z].concat();
    cases.push((
        "vector_add",
        [n as u32 / 256, 1, 1],
        [256, 1, 1],
        three(slice(a, n), slice(b, n), slice(c, n)),
    ));
    let dims = [
        side.to_le_bytes().to_vec(),
        side.to_le_bytes().to_vec(),
        side.to_le_bytes().to_vec(),
    ];
    let mm = [three(slice(a, m), slice(b, m), slice(c, m)), dims.to_vec()].concat();
    cases.push((
        "matmul_tiled",
        [side / 16, side / 16, 1],
        [16, 16, 1],
        mm.clone(),
    ));
    cases.push((
        "matmul_blocked",
        // One block at `--small` (64², a ragged 128² tile): `side / 128` would be no block.
        [side.div_ceil(128), side.div_ceil(128), 1],
        [256, 1, 1],
        mm,
    ));
    let tr = [
        three(
            slice(a, m),
            slice(c, m),
            [side.to_le_bytes().to_vec(), side.to_le_bytes().to_vec()],
        ),
        vec![],
    ]
    .concat();
    cases.push(("transpose_tiled", [side / 32, side / 32, 1], [32, 8, 1], tr));
    cases.push((
        "dot_partial",
        [64, 1, 1],
        [256, 1, 1],
        three(slice(a, n), slice(b, n), slice(c, 64)),
    ));
    let hits = memory.alloc(8).expect("alloc");
    let samples = (1u64 << if small { 16 } else { 22 }).to_le_bytes().to_vec();
    let pi = vec![
        samples,
        7u64.to_le_bytes().to_vec(),
        hits.to_le_bytes().to_vec(),
        1u64.to_le_bytes().to_vec(),
    ];
    cases.push(("monte_carlo_pi", [64, 1, 1], [256, 1, 1], pi));
    let options = LaunchOptions {
        kind: LaunchKind::Plain,
        deadline: None,
        profile: std::env::args().any(|a| a == "--profile"),
    };
    println!("counters {}", if options.profile { "on" } else { "off" });
    for threads in [0usize, 1] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let cores = pool.current_num_threads();
        println!("{cores} host thread(s):");
        for (kernel, grid, block, params) in &cases {
            let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
            let dims = LaunchDims {
                grid: *grid,
                block: *block,
                dynamic_shared_bytes: 0,
            };
            let start = Instant::now();
            let stats = pool
                .install(|| {
                    launch_with(
                        &module,
                        kernel,
                        dims,
                        &refs,
                        &memory,
                        &options,
                        &mut Vec::new(),
                    )
                })
                .unwrap_or_else(|f| panic!("{f}"));
            let seconds = start.elapsed().as_secs_f64();
            let rate = stats.instructions as f64 / seconds;
            println!("  {kernel:16} {:>12} instructions in {seconds:7.3} s: {:6.1} M/s ({:5.1} M/s per thread)", stats.instructions, rate / 1e6, rate / 1e6 / cores as f64);
        }
    }
}
