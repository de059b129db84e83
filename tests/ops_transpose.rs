//! `ops::transpose`: both kernels move every element bit for bit, on random matrices of awkward
//! shapes, on the CPU executor (checked mode) and, where there is one, a GPU; and the inputs it
//! refuses; f64 matrices too, on every device.

mod support;

use ferrocuda::kernels::transpose::{TRANSPOSE_ROWS, TRANSPOSE_TILE};
use ferrocuda::ops::{self, Element, Transpose};
use ferrocuda::{Device, Error, Module};
use rand::Rng;

const KERNELS: [Transpose; 2] = [Transpose::Naive, Transpose::Coalesced];

/// 1×1, single rows and columns, primes, one off the 32 tile, tall and skinny.
const SHAPES: [(usize, usize); 9] = [
    (1, 1),
    (1, 67),
    (67, 1),
    (33, 31),
    (32, 32),
    (131, 67),
    (4099, 3),
    (3, 4099),
    (65, 97),
];

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// Transposes a random matrix with every kernel and compares bits with the index formula.
/// Among the values: -0.0, NaNs with payloads and subnormals, which a float comparison would
/// not tell apart.
fn check_all(kernels: &Module, rows: usize, cols: usize) {
    let (mut rng, seed) = support::rng();
    let mut input = support::random_f32(&mut rng, rows * cols);
    let specials = [
        -0.0f32,
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0xffa0_0001),
        1e-40,
    ];
    for (slot, special) in input.iter_mut().step_by(7).zip(specials) {
        *slot = special;
    }
    check_bits(kernels, &input, rows, cols, seed);
}

/// Transposes `input` (`rows × cols`) with every kernel and compares each element's bytes with
/// the index formula's.
fn check_bits<T: ops::Element>(kernels: &Module, input: &[T], rows: usize, cols: usize, seed: u64) {
    for kernel in KERNELS {
        let mut output = vec![T::ZERO; rows * cols];
        ops::transpose(kernels, input, &mut output, rows, cols, kernel).unwrap();
        assert_transposed(
            input,
            &output,
            rows,
            cols,
            &format!("{kernel:?} seed={seed}"),
        );
    }
}

/// `output` holds `input`ᵀ bit for bit (`input` is `rows × cols`).
fn assert_transposed<T: ops::Element>(
    input: &[T],
    output: &[T],
    rows: usize,
    cols: usize,
    what: &str,
) {
    for y in 0..rows {
        for x in 0..cols {
            assert_eq!(
                bytemuck::bytes_of(&output[x * rows + y]),
                bytemuck::bytes_of(&input[y * cols + x]),
                "{what} {rows}x{cols} ({y},{x})"
            );
        }
    }
}

#[test]
fn f64_matrices_move_all_64_bits_on_every_device() {
    for kernels in support::on_every_device("f64_matrices_move_all_64_bits", &ferrocuda::KERNELS) {
        let (mut rng, seed) = support::rng();
        for (rows, cols) in [(1, 1), (33, 31), (65, 97), (3, 130)] {
            // Any bits: NaN payloads, −0.0 and subnormals included.
            let input: Vec<f64> = (0..rows * cols)
                .map(|_| f64::from_bits(rng.random()))
                .collect();
            check_bits(&kernels, &input, rows, cols, seed);
        }
    }
}

#[test]
fn both_kernels_are_bit_exact_for_awkward_shapes() {
    let kernels = cpu_kernels();
    for (rows, cols) in SHAPES {
        check_all(&kernels, rows, cols);
    }
}

#[test]
fn the_default_is_the_coalesced_kernel() {
    assert_eq!(Transpose::default(), Transpose::Coalesced);
}

#[test]
fn device_buffers_work_as_input_and_output() {
    let kernels = cpu_kernels();
    let device = kernels.device();
    let input: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let input_on = device.upload(&input).unwrap();
    let mut output_on = device.alloc_zeroed::<f32>(6).unwrap();
    for kernel in KERNELS {
        ops::transpose(&kernels, &input_on, &mut output_on, 2, 3, kernel).unwrap();
        assert_eq!(output_on.to_vec().unwrap(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }
}

#[test]
fn bad_shapes_and_lengths_are_invalid_input_with_the_numbers() {
    // (rows, cols, input length, output length, the message)
    let cases: [(usize, usize, usize, usize, &str); 7] = [
        (0, 3, 0, 0, "rows and cols must be at least 1, got 0 × 3"),
        (3, 0, 0, 0, "rows and cols must be at least 1, got 3 × 0"),
        (
            2,
            3,
            5,
            6,
            "input has 5 elements but rows × cols = 2 × 3 needs 6",
        ),
        (
            2,
            3,
            6,
            7,
            "output has 7 elements but rows × cols = 2 × 3 needs 6",
        ),
        (
            1 << 32,
            1,
            1,
            1,
            "rows = 4294967296 is more than the kernels' limit of 4294967295",
        ),
        (
            1 << 16,
            1 << 16,
            1,
            1,
            // Past the 32-bit kernels' u32::MAX elements: the 64-bit ones take it (the length
            // is what is wrong).
            "input has 1 elements but rows × cols = 65536 × 65536 needs 4294967296",
        ),
        (
            65_535 * 32 + 1,
            1,
            65_535 * 32 + 1,
            65_535 * 32 + 1,
            "2097121 rows need 65536 blocks of 32 in y, more than the device's limit of 65535",
        ),
    ];
    let kernels = cpu_kernels();
    for (rows, cols, input_len, output_len, want) in cases {
        for kernel in KERNELS {
            // The naive kernel's blocks on the CPU are 128 high: its too-tall matrix is taller.
            let (rows, input_len, output_len, want) =
                if kernel == Transpose::Naive && want.starts_with("2097121") {
                    let rows = 65_535 * 128 + 1;
                    (
                        rows,
                        rows,
                        rows,
                        "8388481 rows need 65536 blocks of 128 in y, more than the device's limit \
                         of 65535",
                    )
                } else {
                    (rows, input_len, output_len, want)
                };
            let input = vec![1.0f32; input_len];
            let mut output = vec![7.0f32; output_len];
            match ops::transpose(&kernels, &input, &mut output, rows, cols, kernel) {
                Err(Error::InvalidInput { op, detail }) => {
                    assert_eq!(op, "transpose");
                    assert!(detail.contains(want), "{kernel:?}: {detail}");
                }
                other => panic!("{kernel:?} {rows}x{cols}: expected InvalidInput, got {other:?}"),
            }
            assert!(output.iter().all(|&x| x == 7.0), "nothing was written");
        }
    }
}

/// The kernels index in 32 bits and the tiled one needs its block shape: a launch past the ops
/// function is checked for both (`len(input = rows * cols)`, `block(32, 8)`), before it runs.
#[test]
fn a_direct_launch_with_another_shape_length_or_block_is_an_error() {
    use ferrocuda::kernels::transpose::{transpose_naive, transpose_tiled};
    for kernels in support::on_every_device(
        "a_direct_launch_with_another_shape_length_or_block_is_an_error",
        &ferrocuda::KERNELS,
    ) {
        let device = kernels.device().to_string();
        let input = vec![1.0f32; 6];
        let mut out = vec![7.0f32; 6];
        let error = ferrocuda::launch!(kernels, transpose_naive[(1, 1), (16, 16)](&input, &mut out, 2u32, 4u32))
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::LengthNotProduct {
                    param: "input",
                    len: 6,
                    ..
                }
            ),
            "{device}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            "kernel `transpose_naive`: `input` has 6 elements but rows·cols = 2·4 = 8; the kernel \
             needs it to have rows·cols elements, at most u32::MAX"
        );
        // Equal to the length in u64 arithmetic, but above u32::MAX.
        let error = ferrocuda::launch!(kernels, transpose_tiled[(1, 1), (32, 8)](&input, &mut out, 1u32 << 16, 1u32 << 16))
            .unwrap_err()
            .to_string();
        assert!(error.contains("rows·cols = 65536·65536 = 4294967296, above u32::MAX (the kernel indexes `input` in 32 bits)"), "{device}: {error}");
        let error = ferrocuda::launch!(kernels, transpose_tiled[(1, 1), (16, 16)](&input, &mut out, 2u32, 3u32))
            .unwrap_err();
        assert!(
            matches!(error, Error::BlockShape { .. }),
            "{device}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            "kernel `transpose_tiled` runs in blocks of (32, 8, 1) threads, but the launch has blocks of (16, 16, 1)"
        );
        assert!(out.iter().all(|&x| x == 7.0), "{device}: nothing ran");
        // The same launches with the right shape and block run.
        ferrocuda::launch!(kernels, transpose_tiled[(1, 1), (32, 8)](&input, &mut out, 2u32, 3u32))
            .unwrap();
        assert_eq!(out, [1.0; 6], "{device}");
    }
}

#[test]
fn gpu_is_bit_exact_for_every_kernel() {
    let Some(gpu) = support::gpu_or_skip("gpu_is_bit_exact_for_every_kernel") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let large = support::size_for(&gpu, [(2048, 1536), (1000, 3001)], [(256, 192), (100, 301)]);
    for (rows, cols) in SHAPES.into_iter().chain(large) {
        check_all(&kernels, rows, cols);
    }
}

/// The 64-bit kernels `ops::transpose` runs for matrices past `u32::MAX` elements (which do not
/// fit in CI's memory), launched directly at small shapes on every device: the same bits as the
/// index formula, in f32 and f64, for awkward shapes; and a length that is not `rows·cols` is
/// an error (their assert), never an access past the buffers.
#[test]
fn the_64_bit_kernels_move_the_same_bits() {
    fn check<T: ops::Element>(module: &Module, input: &[T], rows: usize, cols: usize) {
        let device = module.device().to_string();
        let (r, c) = (rows as u32, cols as u32);
        let tiles = (cols.div_ceil(TRANSPOSE_TILE), rows.div_ceil(TRANSPOSE_TILE));
        let tiled_block = (TRANSPOSE_TILE, TRANSPOSE_ROWS);
        let naive_grid = (cols.div_ceil(16), rows.div_ceil(16));
        for tiled in [false, true] {
            let mut output = vec![T::ZERO; rows * cols];
            match tiled {
                false => ferrocuda::launch!(module, T::transpose_naive_wide[naive_grid, (16, 16)](input, &mut output, r, c)),
                true => ferrocuda::launch!(module, T::transpose_tiled_wide[tiles, tiled_block](input, &mut output, r, c)),
            }
            .unwrap();
            assert_transposed(
                input,
                &output,
                rows,
                cols,
                &format!("{device}: tiled {tiled}"),
            );
        }
    }
    for module in
        support::on_every_device("the_64_bit_kernels_move_the_same_bits", &ferrocuda::KERNELS)
    {
        let (mut rng, _) = support::rng();
        for (rows, cols) in [(1, 1), (33, 31), (67, 131), (5, 40)] {
            let input = support::random_f32(&mut rng, rows * cols);
            check(&module, &input, rows, cols);
            let wide: Vec<f64> = (0..rows * cols)
                .map(|_| rng.random::<f64>() - 0.5)
                .collect();
            check(&module, &wide, rows, cols);
        }
    }
    // One element short of rows·cols (both buffers, so `same_len` holds): their assert, on the
    // CPU (on a GPU it traps, which leaves the context unusable).
    let module = cpu_kernels();
    let (rows, cols) = (5u32, 40u32);
    let short = vec![1.0f32; 199];
    let mut output = vec![0.0f32; 199];
    let grid = (cols.div_ceil(16), rows.div_ceil(16));
    for tiled in [false, true] {
        let error = match tiled {
            false => ferrocuda::launch!(module, f32::transpose_naive_wide[grid, (16, 16)](&short, &mut output, rows, cols)),
            true => ferrocuda::launch!(module, f32::transpose_tiled_wide[(2, 1), (TRANSPOSE_TILE, TRANSPOSE_ROWS)](&short, &mut output, rows, cols)),
        }
        .unwrap_err()
        .to_string();
        assert!(error.contains("input.len() must be rows·cols"), "{error}");
    }
    assert!(output.iter().all(|&x| x == 0.0), "nothing written");
}
