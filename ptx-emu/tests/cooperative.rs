//! Cooperative launches: test-kernels' `grid_sum` (block partials, a grid barrier in global
//! memory, block 0 sums them) needs every block running at once; against an f64 reference. A
//! grid barrier only block 0 reaches is a divergence fault, not a hang.

mod support;

use ferrocuda_ptx_emu::{launch_printing, FaultKind, LaunchDims, LaunchKind};
use support::*;

/// `kernel` of test-kernels as a cooperative launch of `blocks` blocks of `threads`, with the
/// grid barrier (a zeroed word, pointer and length) after `args`.
fn cooperative(
    d: &Device,
    kernel: &str,
    blocks: u32,
    threads: u32,
    args: Vec<Arg>,
) -> Result<(), ferrocuda_ptx_emu::Fault> {
    let barrier = d.zeros::<u32>(1);
    let mut params: Vec<Vec<u8>> = Vec::new();
    for arg in args.iter().chain([&Arg::Slice(barrier)]) {
        match arg {
            Arg::Slice(b) => {
                params.push(b.addr.to_le_bytes().to_vec());
                params.push(b.len.to_le_bytes().to_vec());
            }
            Arg::Value(v) => params.push(v.clone()),
        }
    }
    let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
    let dims = LaunchDims {
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let mut printed = Vec::new();
    let kind = LaunchKind::Cooperative;
    launch_printing(
        test_kernels(),
        kernel,
        dims,
        &refs,
        &d.memory,
        kind,
        &mut printed,
    )
    .map(|_| ())
}

#[test]
fn grid_sum_sums_across_blocks_in_one_launch() {
    let d = Device::new();
    for (n, blocks) in [(1usize, 1u32), (700, 3), (2000, 6)] {
        let x = random_f32(n as u64, n);
        let input = d.upload(&x);
        let partial = d.upload(&vec![f32::NAN; blocks as usize]);
        let total = d.upload(&[f32::NAN]);
        let args = vec![Arg::Slice(input), Arg::Slice(partial), Arg::Slice(total)];
        cooperative(&d, "grid_sum", blocks, 256, args).unwrap_or_else(|f| panic!("{n}: {f}"));
        let want: f64 = x.iter().map(|&v| v as f64).sum();
        assert_close(&d.download::<f32>(total), &[want], 1e-5, &format!("n={n}"));
        // Every block wrote its partial before block 0 read them.
        assert!(d.download::<f32>(partial).iter().all(|p| p.is_finite()));
    }
}

#[test]
fn a_grid_barrier_that_only_block_0_reaches_is_a_divergence_fault() {
    let d = Device::new();
    let out = d.zeros::<u32>(3);
    let fault = cooperative(
        &d,
        "grid_sync_in_block_0_only",
        3,
        32,
        vec![Arg::Slice(out)],
    )
    .expect_err("block 0 waits for blocks that ended");
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(fault.message.contains("block (0, 0, 0)"), "{fault}");
    assert!(
        fault
            .message
            .contains("after every other block of the cooperative launch ended"),
        "{fault}"
    );
    // The other blocks ran to their end.
    assert_eq!(d.download::<u32>(out)[1..], [1, 1]);
}
