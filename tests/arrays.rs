//! 2D and 3D views (`Array2`/`Array3`, `Out2`/`Out3`) on the CPU executor in checked mode and
//! on a GPU (or the PTX emulator), against references computed here: the seed's two transposes
//! written as in Numba, a 3D map, a pitched input, device buffers with a shape, and the errors
//! for shapes that do not fit and for indices past the shape.

mod support;

use ferrocuda::kernels::transpose_2d::{transpose_2d_naive, transpose_2d_tiled, TILE_2D};
use ferrocuda::{launch, Array2, Array3, Error, Module, Out2, Out3};
use rand::Rng;
use test_kernels::arrays::{all_write_one_2d, hand_over_2d, map_3d, row_sums, write_at_2d};

fn library(test: &str) -> Vec<Module> {
    support::on_every_device(test, &ferrocuda::KERNELS)
}

fn test_kernels(test: &str) -> Vec<Module> {
    support::on_every_device(test, support::test_kernels())
}

/// `aᵀ` of a row-major `rows × cols` matrix.
fn transposed(a: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; a.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = a[r * cols + c];
        }
    }
    t
}

/// The grid of `TILE_2D`-sided blocks that covers `cols` (x) and `rows` (y).
fn tiles(rows: usize, cols: usize) -> (usize, usize) {
    (cols.div_ceil(TILE_2D), rows.div_ceil(TILE_2D))
}

#[test]
fn the_seeds_transposes_written_with_2d_views_transpose() {
    for module in library("the_seeds_transposes_written_with_2d_views_transpose") {
        let (mut rng, seed) = support::rng();
        // Edges below, at and past a tile; one row, one column; a non-square matrix.
        for (rows, cols) in [(1, 1), (1, 40), (40, 1), (32, 32), (33, 65), (70, 45)] {
            let a = support::random_f32(&mut rng, rows * cols);
            let expected = transposed(&a, rows, cols);
            for tiled in [false, true] {
                let mut out = vec![f32::NAN; rows * cols];
                let input = Array2::new(&a, rows, cols).unwrap();
                let output = Out2::new(&mut out, cols, rows).unwrap();
                match tiled {
                    // Blocks of 32 × 8 threads, one thread per element.
                    false => launch!(
                        module,
                        transpose_2d_naive[(cols.div_ceil(32), rows.div_ceil(8)), (32, 8)](
                            input, output
                        )
                    ),
                    true => launch!(
                        module,
                        transpose_2d_tiled[tiles(rows, cols), (TILE_2D, TILE_2D)](input, output)
                    ),
                }
                .unwrap();
                assert_eq!(
                    out,
                    expected,
                    "{} rows={rows} cols={cols} tiled={tiled} seed={seed}",
                    module.device()
                );
            }
        }
    }
}

#[test]
fn the_naive_transpose_covers_any_matrix_its_grid_covers() {
    for module in library("the_naive_transpose_covers_any_matrix_its_grid_covers") {
        let (mut rng, seed) = support::rng();
        for (rows, cols) in [(3, 5), (17, 100), (64, 9)] {
            let a = support::random_f32(&mut rng, rows * cols);
            let mut out = vec![f32::NAN; rows * cols];
            let grid = (cols.div_ceil(16), rows.div_ceil(16));
            launch!(
                module,
                transpose_2d_naive[grid, (16, 16)](
                    Array2::new(&a, rows, cols).unwrap(),
                    Out2::new(&mut out, cols, rows).unwrap()
                )
            )
            .unwrap();
            assert_eq!(out, transposed(&a, rows, cols), "{rows}×{cols} seed={seed}");
        }
    }
}

#[test]
fn device_buffers_with_a_shape_are_arguments_and_stay_on_the_device() {
    for module in library("device_buffers_with_a_shape_are_arguments_and_stay_on_the_device") {
        let (mut rng, seed) = support::rng();
        let (rows, cols) = (37, 70);
        let a = support::random_f32(&mut rng, rows * cols);
        let device = module.device();
        let input = device.upload(&a).unwrap();
        let mut once = device.alloc_zeroed::<f32>(rows * cols).unwrap();
        let mut twice = device.alloc_zeroed::<f32>(rows * cols).unwrap();
        let block = (TILE_2D, TILE_2D);
        launch!(
            module,
            transpose_2d_tiled[tiles(rows, cols), block](
                Array2::new(&input, rows, cols).unwrap(),
                Out2::new(&mut once, cols, rows).unwrap()
            )
        )
        .unwrap();
        // Back again: the transpose of the transpose, from the buffer the first launch wrote.
        launch!(
            module,
            transpose_2d_tiled[tiles(cols, rows), block](
                Array2::new(&once, cols, rows).unwrap(),
                Out2::new(&mut twice, rows, cols).unwrap()
            )
        )
        .unwrap();
        assert_eq!(
            once.to_vec().unwrap(),
            transposed(&a, rows, cols),
            "seed={seed}"
        );
        assert_eq!(twice.to_vec().unwrap(), a, "seed={seed}");
    }
}

#[test]
fn a_3d_map_puts_each_coordinate_where_it_belongs() {
    for module in test_kernels("a_3d_map_puts_each_coordinate_where_it_belongs") {
        let (mut rng, seed) = support::rng();
        for (planes, rows, cols) in [(1, 1, 1), (2, 3, 5), (3, 17, 40)] {
            let a = support::random_f32(&mut rng, planes * rows * cols);
            let mut out = vec![f32::NAN; a.len()];
            let grid = (cols.div_ceil(16), rows.div_ceil(8), planes);
            launch!(
                module,
                map_3d[grid, (16, 8)](
                    Array3::new(&a, planes, rows, cols).unwrap(),
                    Out3::new(&mut out, planes, rows, cols).unwrap()
                )
            )
            .unwrap();
            for p in 0..planes {
                for r in 0..rows {
                    for c in 0..cols {
                        let i = (p * rows + r) * cols + c;
                        let mark = p as f32 - r as f32 / 8.0 + c as f32 / 64.0;
                        assert_eq!(out[i], 2.0 * a[i] + mark, "({p}, {r}, {c}) seed={seed}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_pitched_input_is_read_row_by_row_without_its_padding() {
    for module in test_kernels("a_pitched_input_is_read_row_by_row_without_its_padding") {
        let (mut rng, seed) = support::rng();
        let (rows, cols, pitch) = (45, 13, 16);
        // The padding is NaN: a sum that read it would be NaN.
        let mut a = vec![f64::NAN; rows * pitch];
        for r in 0..rows {
            for c in 0..cols {
                a[r * pitch + c] = rng.random_range(-1.0..1.0);
            }
        }
        let expected: Vec<f64> = (0..rows)
            .map(|r| a[r * pitch..r * pitch + cols].iter().sum())
            .collect();
        // The last row needs no padding after it.
        let a = &a[..(rows - 1) * pitch + cols];
        let on_device = module.device().upload(a).unwrap();
        for from_buffer in [false, true] {
            let mut sums = vec![0.0f64; rows];
            let input = match from_buffer {
                false => Array2::with_pitch(a, rows, cols, pitch).unwrap(),
                true => Array2::with_pitch(&on_device, rows, cols, pitch).unwrap(),
            };
            launch!(module, row_sums[rows.div_ceil(32), 32](input, &mut sums)).unwrap();
            // The same additions in the same order: bit for bit.
            assert_eq!(sums, expected, "from_buffer={from_buffer} seed={seed}");
        }
    }
}

#[test]
fn a_shape_that_does_not_fit_its_memory_is_an_error_before_any_launch() {
    let data = vec![0.0f32; 11];
    let error = Array2::new(&data, 3, 4).err().unwrap();
    assert!(
        matches!(
            error,
            Error::BadShape {
                view: "Array2::new",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "Array2::new: a shape of 3 × 4 has 12 elements, but the data has 11"
    );
    // Three rows of 4 with a pitch of 4 need 12 elements; with 3.5 rows' worth, a pitch of 3
    // would overlap the rows.
    let error = Array2::with_pitch(&data, 3, 4, 4)
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("needs 12 elements, but the memory has 11"),
        "{error}"
    );
    let error = Array2::with_pitch(&data, 2, 4, 3)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("would overlap"), "{error}");
    let mut out = vec![0u32; 24];
    let error = Out3::new(&mut out, 2, 3, 5).err().unwrap().to_string();
    assert_eq!(
        error,
        "Out3::new: a shape of 2 × 3 × 5 has 30 elements, but the data has 24"
    );
    let error = Out3::with_strides(&mut out, [2, usize::MAX, 2], [usize::MAX, 2, 1])
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("overflows the address space"), "{error}");
}

#[test]
fn an_index_past_the_shape_is_an_error_naming_the_index_and_the_shape() {
    // On the CPU executor; on a GPU it traps (tests/gpu_faults.rs covers a trapping write).
    let module = ferrocuda::Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    // 2 × 3 with a pitch of 4: (0, 3) is memory (padding) but not in the shape.
    let mut out = vec![0u32; 8];
    for (row, col) in [(2u32, 0u32), (0, 3), (u32::MAX, 1)] {
        let error = launch!(
            module,
            write_at_2d[1, 32](Out2::with_pitch(&mut out, 2, 3, 4).unwrap(), row, col)
        )
        .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(&format!(
                "index [{row}, {col}] out of bounds for an output of shape [2, 3]"
            )),
            "{message}"
        );
        assert!(
            matches!(
                error,
                Error::KernelPanicked {
                    kernel: "write_at_2d",
                    ..
                }
            ),
            "{error}"
        );
    }
    assert_eq!(out, [0; 8], "no write landed");
    launch!(
        module,
        write_at_2d[1, 32](Out2::with_pitch(&mut out, 2, 3, 4).unwrap(), 1, 2)
    )
    .unwrap();
    assert_eq!(out, [0, 0, 0, 0, 0, 0, 1, 0]);
}

/// `index32` kernels compute their grid index in 32 bits: a launch of more than 2^32 threads
/// along an axis is refused before any thread runs, on every device, naming the kernel, the
/// axis and the launch's shape; 2^32 threads are no error (only a launch's size is checked here).
#[test]
fn the_naive_2d_transpose_refuses_a_grid_past_32_bits() {
    for module in library("the_naive_2d_transpose_refuses_a_grid_past_32_bits") {
        let a = vec![1.0f32; 6];
        let mut out = vec![0.0f32; 6];
        let error = launch!(
            module,
            transpose_2d_naive[(u32::MAX / 2, 1), (4, 4)](
                Array2::new(&a, 2, 3).unwrap(),
                Out2::new(&mut out, 3, 2).unwrap()
            )
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                Error::GridOver32Bits {
                    kernel: "transpose_2d_naive",
                    axis: 'x',
                    ..
                }
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "kernel `transpose_2d_naive` computes its grid index in 32 bits (`index32`): at most \
             2^32 = 4294967296 threads along each axis, but the launch has (2147483647, 1, 1) \
             blocks of (4, 4, 1) threads, more than that along x"
        );
        assert!(out.iter().all(|&x| x == 0.0), "nothing ran");
    }
}

/// The 2D transposes declare `transposed(out, a)`: a launch whose `out` is not shaped as `a`
/// reversed (here 2 × 3 for a 2 × 3 input, and 3 × 3) is refused before any thread runs, on
/// every device, naming the kernel, both parameters and the three shapes; the kernels are
/// compiled knowing the shapes match, so they never check `out`'s own.
#[test]
fn the_2d_transposes_refuse_an_output_not_shaped_as_the_input_reversed() {
    for module in library("the_2d_transposes_refuse_an_output_not_shaped_as_the_input_reversed") {
        let a = vec![1.0f32; 6];
        let mut out = vec![0.0f32; 9];
        let error = launch!(
            module,
            transpose_2d_naive[1, (4, 4)](
                Array2::new(&a, 2, 3).unwrap(),
                Out2::new(&mut out[..6], 2, 3).unwrap()
            )
        )
        .unwrap_err();
        assert!(
            matches!(
                &error,
                Error::ShapeNotTransposed {
                    kernel: "transpose_2d_naive",
                    out: "out",
                    a: "a",
                    out_shape: [2, 3],
                    a_shape: [2, 3],
                }
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "kernel `transpose_2d_naive`: `out` has shape [2, 3] and `a` has shape [2, 3], but the \
             kernel needs `out` shaped as `a` transposed (`transposed(out, a)`): [3, 2]"
        );
        let error = launch!(
            module,
            transpose_2d_tiled[1, (TILE_2D, TILE_2D)](
                Array2::new(&a, 2, 3).unwrap(),
                Out2::new(&mut out, 3, 3).unwrap()
            )
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "kernel `transpose_2d_tiled`: `out` has shape [3, 3] and `a` has shape [2, 3]"
            ),
            "{error}"
        );
        assert!(out.iter().all(|&x| x == 0.0), "nothing was written");
    }
}

#[test]
fn checked_mode_reports_two_threads_writing_one_element_of_a_2d_output() {
    let module = ferrocuda::Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    let mut out = vec![0u32; 6];
    // Two threads of one block, then two blocks of one thread: neither pair is ordered.
    for (blocks, threads) in [(1u32, 2u32), (2, 1)] {
        let error = launch!(
            module,
            all_write_one_2d[blocks, threads](Out2::new(&mut out, 2, 3).unwrap())
        )
        .unwrap_err();
        let Error::KernelBug { bug, .. } = &error else {
            panic!("expected a race, got {error}");
        };
        match &**bug {
            ferrocuda::KernelBug::OutputRace {
                output,
                index,
                write,
                ..
            } => {
                assert_eq!((output.as_str(), *index, *write), ("out", 0, true));
            }
            other => panic!("expected an output race, got {other}"),
        }
        let message = error.to_string();
        assert!(
            message.contains("data race on output `out`, element 0"),
            "{message}"
        );
        assert!(message.contains("test-kernels/src/arrays.rs"), "{message}");
    }
    // Unchecked, the same launch runs (one of the values wins, as on a GPU).
    let unchecked = ferrocuda::Device::cpu_checked(false)
        .load(support::test_kernels())
        .unwrap();
    launch!(unchecked, all_write_one_2d[1, 2](Out2::new(&mut out, 2, 3).unwrap())).unwrap();
    assert!(out[0] < 2);
    // A write, a barrier, then another thread's read and write: ordered, no race.
    let mut out = vec![0u32; 6];
    launch!(module, hand_over_2d[1, 2](Out2::new(&mut out, 2, 3).unwrap())).unwrap();
    assert_eq!(out, [0, 2, 0, 0, 0, 0]);
}

/// The tiled transpose's block shape is a launch fact: another shape is refused before any
/// thread runs (it would leave parts of the tile unwritten), on every device.
#[test]
fn the_tiled_2d_transpose_refuses_another_block_shape() {
    for module in library("the_tiled_2d_transpose_refuses_another_block_shape") {
        let (rows, cols) = (4, 4);
        let a = vec![1.0f32; rows * cols];
        let mut out = vec![0.0f32; rows * cols];
        let error = launch!(
            module,
            transpose_2d_tiled[1, (16, 16)](
                Array2::new(&a, rows, cols).unwrap(),
                Out2::new(&mut out, cols, rows).unwrap()
            )
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "kernel `transpose_2d_tiled` runs in blocks of (32, 32, 1) threads, but the launch \
             has blocks of (16, 16, 1)"
        );
        assert!(out.iter().all(|&x| x == 0.0), "nothing was written");
    }
}

/// The 2D transposes index their views in 32 bits (`index32(a, out)`): a view with an extent
/// past `u32::MAX` (here with no elements, so no memory is needed) is refused before any thread
/// runs, on every device, with the numbers; one at the limit runs.
#[test]
fn the_2d_transposes_refuse_views_past_32_bits() {
    const WIDE: usize = 1 << 32;
    for module in library("the_2d_transposes_refuse_views_past_32_bits") {
        let (a, mut out) = (vec![1.0f32; 6], vec![0.0f32; 6]);
        let empty: Vec<f32> = Vec::new();
        let wide = Array2::with_strides(&empty, [0, WIDE], [WIDE, 1]).unwrap();
        let error = launch!(
            module,
            transpose_2d_naive[1, (4, 4)](wide, Out2::new(&mut out, 3, 2).unwrap())
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                Error::ViewOver32Bits {
                    param: "a",
                    len: 0,
                    ..
                }
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "kernel `transpose_2d_naive`: `a` is a view of 0 elements with extents [0, 4294967296], \
             but the kernel indexes it in 32 bits (`index32`): its memory and each extent must be \
             at most u32::MAX = 4294967295"
        );
        let mut nothing: Vec<f32> = Vec::new();
        let tall = Out2::with_strides(&mut nothing, [WIDE, 0], [0, 1]).unwrap();
        let error = launch!(
            module,
            transpose_2d_tiled[1, (TILE_2D, TILE_2D)](Array2::new(&a, 2, 3).unwrap(), tall)
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("kernel `transpose_2d_tiled`: `out` is a view of 0 elements with extents [4294967296, 0]"),
            "{error}"
        );
        assert!(out.iter().all(|&x| x == 0.0), "nothing ran");
        // Extents of u32::MAX (with a zero beside them) pass the check.
        let most = Array2::with_strides(&empty, [0, WIDE - 1], [WIDE - 1, 1]).unwrap();
        let mut none: Vec<f32> = Vec::new();
        let most_out = Out2::with_strides(&mut none, [WIDE - 1, 0], [0, 1]).unwrap();
        launch!(module, transpose_2d_naive[1, (4, 4)](most, most_out)).unwrap();
    }
}
