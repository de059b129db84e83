//! `thread::grid_stride_elements` gives, on every device and launch shape, exactly the elements
//! `x[i]` for the indices of `thread::grid_stride(x.len())`, in their order: through its `for`
//! loop (a 64-bit pointer on the GPU), `for_each` (a 32-bit index in chunks of 2^31 elements)
//! and the same chunked loop with chunks of 3 and 64 elements (so that the chunk boundaries,
//! and steps longer than a chunk, are crossed at test sizes).

mod support;

use ferrocuda::launch;
use test_kernels::grid_stride_elements::{grid_stride_elements_match, MATCH_OUTPUTS};

#[test]
fn grid_stride_elements_are_the_grid_stride_indices_elements_in_every_loop() {
    let test = "grid_stride_elements_are_the_grid_stride_indices_elements_in_every_loop";
    for module in support::on_every_device(test, support::test_kernels()) {
        for (blocks, threads) in [(1u32, 1u32), (1, 32), (2, 16), (3, 64), (7, 33)] {
            for n in [0usize, 1, 2, 5, 63, 64, 65, 200, 1000] {
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
