//! `thread::grid_stride_elements` gives, on every device and launch shape, exactly the elements
//! `x[i]` for the indices of `thread::grid_stride(x.len())`, in their order: through its `for`
//! loop (a 64-bit pointer on the GPU), `for_each` (a 32-bit index in chunks of 2^31 elements)
//! and the same chunked loop with chunks of 3 and 64 elements (so that the chunk boundaries,
//! and steps longer than a chunk, are crossed at test sizes). The same for `grid_stride_zip`'s
//! pairs (which share that chunked loop).

mod support;

use ferrocuda::launch;
use test_kernels::grid_stride_elements::{
    grid_stride_elements_match, grid_stride_zip_match, MATCH_OUTPUTS,
};

/// Launch shapes: one thread, a warp, blocks smaller than a warp, partial warps.
const SHAPES: [(u32, u32); 5] = [(1, 1), (1, 32), (2, 16), (3, 64), (7, 33)];
/// Lengths around the shapes' grid sizes and the test chunks (3 and 64 elements).
const LENGTHS: [usize; 9] = [0, 1, 2, 5, 63, 64, 65, 200, 1000];

#[test]
fn grid_stride_elements_are_the_grid_stride_indices_elements_in_every_loop() {
    let test = "grid_stride_elements_are_the_grid_stride_indices_elements_in_every_loop";
    for module in support::on_every_device(test, support::test_kernels()) {
        for (blocks, threads) in SHAPES {
            for n in LENGTHS {
                // Offset by 3 into a larger input, so that the slice starts inside its buffer.
                let offset = 3u32;
                let values: Vec<u32> = (0..n as u32 + offset).collect();
                let x = &values[offset as usize..];
                let grid = (blocks * threads) as usize;
                let mut out = vec![u32::MAX; MATCH_OUTPUTS * grid];
                launch!(
                    module,
                    grid_stride_elements_match[blocks, threads](x, offset, &mut out)
                )
                .unwrap();
                let shape = format!(
                    "n={n} grid={blocks}x{threads} on {:?}",
                    module.device().kind()
                );
                for (t, got) in out.chunks(MATCH_OUTPUTS).enumerate() {
                    assert_eq!(got[..4], [0, 0, 0, 0], "thread {t}: {shape}");
                }
                let visited: u32 = out.chunks(MATCH_OUTPUTS).map(|got| got[4]).sum();
                assert_eq!(visited as usize, n, "every element once: {shape}");
            }
        }
    }
}

#[test]
fn grid_stride_zip_gives_the_pairs_at_the_grid_stride_indices_in_every_loop() {
    let test = "grid_stride_zip_gives_the_pairs_at_the_grid_stride_indices_in_every_loop";
    for module in support::on_every_device(test, support::test_kernels()) {
        for (blocks, threads) in SHAPES {
            for n in LENGTHS {
                // `y` longer for odd lengths, then `x` longer: the pairs stop at the shorter
                // slice (on the CPU, whose chunk loop reads both unchecked, not past it).
                for (x_longer, y_longer) in [(0, 2 * (n % 2)), (3, 0)] {
                    let offset = 3u32;
                    let x: Vec<u32> = (offset..(n + x_longer) as u32 + offset).collect();
                    let y: Vec<u32> = (offset..(n + y_longer) as u32 + offset)
                        .map(|v| 2 * v)
                        .collect();
                    let grid = (blocks * threads) as usize;
                    let mut out = vec![u32::MAX; MATCH_OUTPUTS * grid];
                    launch!(
                        module,
                        grid_stride_zip_match[blocks, threads](&x, &y, offset, &mut out)
                    )
                    .unwrap();
                    let shape = format!(
                        "n={n} (x {x_longer}, y {y_longer} longer) grid={blocks}x{threads} on {:?}",
                        module.device().kind()
                    );
                    for (t, got) in out.chunks(MATCH_OUTPUTS).enumerate() {
                        assert_eq!(got[..4], [0; 4], "thread {t}: {shape}");
                    }
                    let visited: u32 = out.chunks(MATCH_OUTPUTS).map(|got| got[4]).sum();
                    assert_eq!(visited as usize, n, "every pair once: {shape}");
                }
            }
        }
    }
}
