//! `ops::convolve_2d` and `ops::Filter`: 3 × 3 and 5 × 5 Gaussian, Sobel x and y and random
//! asymmetric filters on grey and RGB images of awkward sizes, against an f64 reference, on the
//! CPU executor (checked mode) and, where there is one, a GPU; the orientation of the filter
//! (cross-correlation, no flip); and the inputs it refuses.

mod support;

use ferrocuda::kernels::convolution::convolve_2d as convolve_2d_kernel;
use ferrocuda::ops::{self, Filter};
use ferrocuda::{launch, Device, Error, Module};
use rand::Rng;

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// The documented formula in f64 for channel `c` of pixel `(x, y)`: cross-correlation with
/// clamped coordinates; and Σ|w·in| (the scale of the f32 rounding error).
fn reference_at(
    image: &[f32],
    (width, height, channels): (usize, usize, usize),
    filter: &Filter,
    (x, y, c): (usize, usize, usize),
) -> (f64, f64) {
    let r = filter.radius() as isize;
    let clamp = |v: isize, len: usize| v.clamp(0, len as isize - 1) as usize;
    let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
    for dy in -r..=r {
        for dx in -r..=r {
            let w = filter.weights()[(dy + r) as usize * filter.side() + (dx + r) as usize];
            let (sx, sy) = (
                clamp(x as isize + dx, width),
                clamp(y as isize + dy, height),
            );
            let term = w as f64 * image[(sy * width + sx) * channels + c] as f64;
            sum += term;
            magnitude += term.abs();
        }
    }
    (sum, magnitude)
}

/// Filters a random image and checks the outputs of `rows` (every row if `None`) against f64:
/// a sum of `taps` f32 products is within taps·ε·Σ|w·in| (the bound is 2× that).
fn check_rows(
    kernels: &Module,
    (width, height, channels): (usize, usize, usize),
    filter: &Filter,
    rows: Option<Vec<usize>>,
) {
    let (mut rng, seed) = support::rng();
    let image = support::random_f32(&mut rng, width * height * channels);
    let mut got = vec![f32::NAN; image.len()];
    ops::convolve_2d(kernels, &image, &mut got, width, height, channels, filter).unwrap();
    let taps = (filter.side() * filter.side()) as f64;
    for y in rows.unwrap_or_else(|| (0..height).collect()) {
        for x in 0..width {
            for c in 0..channels {
                let shape = (width, height, channels);
                let (want, magnitude) = reference_at(&image, shape, filter, (x, y, c));
                let got = got[(y * width + x) * channels + c] as f64;
                let bound = 2.0 * taps * f32::EPSILON as f64 * magnitude + f32::MIN_POSITIVE as f64;
                assert!(
                    (got - want).abs() <= bound,
                    "{width}x{height}x{channels} {side}x{side} filter, pixel ({x}, {y}) channel \
                     {c}: {got} vs {want} (bound {bound}) seed={seed}",
                    side = filter.side(),
                );
            }
        }
    }
}

/// [`check_rows`] on every row.
fn check(kernels: &Module, width: usize, height: usize, channels: usize, filter: &Filter) {
    check_rows(kernels, (width, height, channels), filter, None);
}

/// The rows a 4K check compares: the 3 first and last (clamped borders) and 200 random ones,
/// each in full (every column, so every tile edge and both side borders).
fn sampled_rows(height: usize) -> Vec<usize> {
    let mut rng = support::rng().0;
    let mut rows: Vec<usize> = (0..3).chain(height - 3..height).collect();
    rows.extend((0..200).map(|_| rng.random_range(0..height)));
    rows
}

/// A filter of random weights in [-1, 1): asymmetric, so a flipped filter would fail.
fn random_filter(side: usize) -> Filter {
    let mut rng = support::rng().0;
    let weights: Vec<f32> = (0..side * side)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    Filter::new(&weights).unwrap()
}

fn filters() -> Vec<Filter> {
    vec![
        Filter::gaussian_3x3(),
        Filter::gaussian_5x5(),
        Filter::sobel_x(),
        Filter::sobel_y(),
        random_filter(1),
        random_filter(3),
        random_filter(5),
    ]
}

/// 1×1, smaller than a filter, smaller than a tile, one off the 32 × 8 tile, primes, a single
/// row and a single column.
const SIZES: [(usize, usize); 9] = [
    (1, 1),
    (2, 3),
    (4, 1),
    (1, 9),
    (31, 7),
    (33, 9),
    (67, 13),
    (32, 8),
    (5, 41),
];

#[test]
fn every_filter_matches_f64_on_grey_and_rgb_images_of_awkward_sizes() {
    let kernels = cpu_kernels();
    for (width, height) in SIZES {
        for channels in [1, 2, 3] {
            for filter in filters() {
                check(&kernels, width, height, channels, &filter);
            }
        }
    }
}

#[test]
fn a_medium_grey_image_matches_f64_with_each_filter_size() {
    // A 641 × 361 image (a sixth of 3840 × 2160 each way, plus one): the full 4K image takes
    // over a minute per filter on the checked executor in a debug build, so it is left to the
    // GPU test.
    let kernels = cpu_kernels();
    check(&kernels, 641, 361, 1, &Filter::sobel_x());
    check(&kernels, 641, 361, 1, &Filter::gaussian_5x5());
}

#[test]
fn a_medium_rgb_image_matches_f64_with_each_filter() {
    let kernels = cpu_kernels();
    for filter in filters() {
        check(&kernels, 161, 97, 3, &filter);
    }
}

#[test]
fn sobel_is_a_correlation_positive_towards_brighter_pixels() {
    let kernels = cpu_kernels();
    let (width, height) = (6, 5);
    // Brighter to the right by 1 per column, and downwards by 10 per row.
    let image: Vec<f32> = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x + 10 * y) as f32))
        .collect();
    let mut gx = vec![0.0f32; width * height];
    let mut gy = vec![0.0f32; width * height];
    ops::convolve_2d(
        &kernels,
        &image,
        &mut gx,
        width,
        height,
        1,
        &Filter::sobel_x(),
    )
    .unwrap();
    ops::convolve_2d(
        &kernels,
        &image,
        &mut gy,
        width,
        height,
        1,
        &Filter::sobel_y(),
    )
    .unwrap();
    for y in 0..height {
        for x in 0..width {
            // 8 × the slope inside; at a clamped border the difference spans one step, not two.
            let steps_x = if x == 0 || x == width - 1 { 1.0 } else { 2.0 };
            let steps_y = if y == 0 || y == height - 1 { 1.0 } else { 2.0 };
            assert_eq!(gx[y * width + x], 4.0 * steps_x, "sobel x at ({x}, {y})");
            assert_eq!(gy[y * width + x], 40.0 * steps_y, "sobel y at ({x}, {y})");
        }
    }
}

#[test]
fn built_in_filters_have_the_documented_weights() {
    let g3: Vec<f32> = [1., 2., 1., 2., 4., 2., 1., 2., 1.]
        .iter()
        .map(|w| w / 16.0)
        .collect();
    assert_eq!(Filter::gaussian_3x3().weights(), g3);
    let b5 = [1.0f32, 4.0, 6.0, 4.0, 1.0];
    let g5: Vec<f32> = b5
        .iter()
        .flat_map(|c| b5.iter().map(move |r| c * r / 256.0))
        .collect();
    assert_eq!(Filter::gaussian_5x5().weights(), g5);
    assert_eq!(g5.iter().sum::<f32>(), 1.0);
    assert_eq!(
        Filter::sobel_x().weights(),
        [-1., 0., 1., -2., 0., 2., -1., 0., 1.]
    );
    assert_eq!(
        Filter::sobel_y().weights(),
        [-1., -2., -1., 0., 0., 0., 1., 2., 1.]
    );
    assert_eq!(
        (Filter::gaussian_5x5().radius(), Filter::sobel_y().side()),
        (2, 3)
    );
}

#[test]
fn device_buffers_work_as_image_and_output() {
    let kernels = cpu_kernels();
    let device = kernels.device();
    let image_on = device.upload(&[0.0f32, 1.0, 2.0, 3.0]).unwrap();
    let mut out_on = device.alloc_zeroed::<f32>(4).unwrap();
    ops::convolve_2d(
        &kernels,
        &image_on,
        &mut out_on,
        2,
        2,
        1,
        &Filter::sobel_x(),
    )
    .unwrap();
    assert_eq!(out_on.to_vec().unwrap(), [4.0, 4.0, 4.0, 4.0]);
}

#[test]
fn filters_of_even_or_non_square_or_too_large_size_are_invalid_input() {
    for (count, want) in [
        (
            0,
            "0 weights are not a square filter of odd side (1, 9 or 25 weights)",
        ),
        (4, "4 weights are not a square filter of odd side"),
        (8, "8 weights are not a square filter of odd side"),
        (
            49,
            "a 7 × 7 filter (radius 3) is larger than the largest the kernel takes, 5 × 5 \
             (radius 2)",
        ),
    ] {
        match Filter::new(&vec![1.0; count]) {
            Err(Error::InvalidInput { op, detail }) => {
                assert_eq!(op, "Filter::new");
                assert!(detail.contains(want), "{count}: {detail}");
            }
            other => panic!("{count} weights: expected InvalidInput, got {other:?}"),
        }
    }
}

#[test]
fn bad_images_are_invalid_input_with_the_numbers() {
    // (width, height, channels, image length, output length, the message)
    let cases: [(usize, usize, usize, usize, usize, &str); 9] = [
        (
            0,
            3,
            1,
            0,
            0,
            "width and height must be at least 1, got 0 × 3",
        ),
        (
            3,
            0,
            1,
            0,
            0,
            "width and height must be at least 1, got 3 × 0",
        ),
        (
            2,
            2,
            0,
            0,
            0,
            "channels must be 1 to 3 (grey to RGB), got 0",
        ),
        (
            2,
            2,
            4,
            16,
            16,
            "channels must be 1 to 3 (grey to RGB), got 4",
        ),
        (
            2,
            3,
            3,
            17,
            18,
            "image has 17 elements but 2 × 3 pixels of 3 channels needs 18",
        ),
        (
            2,
            3,
            1,
            6,
            5,
            "output has 5 elements but 2 × 3 pixels of 1 channels needs 6",
        ),
        (
            u32::MAX as usize,
            u32::MAX as usize,
            3,
            1,
            1,
            "width·height·channels = 18446744065119617025 × 3 overflows usize",
        ),
        (
            1 << 16,
            1 << 15,
            2,
            1,
            1,
            "width·height·channels = 4294967296 is more than the kernels' limit of 4294967295",
        ),
        (
            1 << 31,
            1,
            1,
            1,
            1,
            "width and height must be below 2^31, got 2147483648 × 1",
        ),
    ];
    let kernels = cpu_kernels();
    for (width, height, channels, image_len, output_len, want) in cases {
        let image = vec![1.0f32; image_len];
        let mut output = vec![7.0f32; output_len];
        let filter = Filter::gaussian_3x3();
        match ops::convolve_2d(
            &kernels,
            &image,
            &mut output,
            width,
            height,
            channels,
            &filter,
        ) {
            Err(Error::InvalidInput { op, detail }) => {
                assert_eq!(op, "convolve_2d");
                assert!(detail.contains(want), "{detail}");
            }
            other => panic!("{width}x{height}x{channels}: expected InvalidInput, got {other:?}"),
        }
        assert!(output.iter().all(|&x| x == 7.0), "nothing was written");
    }
}

#[test]
fn the_kernel_refuses_the_wrong_block_shape_and_image_length() {
    let kernels = cpu_kernels();
    let image = vec![1.0f32; 4];
    let mut out = vec![0.0f32; 4];
    let weights = Filter::gaussian_3x3().weights().to_vec();
    let error = launch!(kernels, convolve_2d_kernel[1, (16, 16)](&image, &mut out, &weights, 2u32, 2u32, 1u32, 1u32))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "kernel `convolve_2d` runs in blocks of (32, 8, 1) threads, but the launch has blocks of \
         (16, 16, 1)"
    );
    // 2 × 2 pixels of 3 channels are 12 floats, not 4: refused before the kernel indexes them.
    let error = launch!(kernels, convolve_2d_kernel[1, (32, 8)](&image, &mut out, &weights, 2u32, 2u32, 3u32, 1u32))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`image` has 4 elements but width·height·channels = 2·2·3 = 12"),
        "{error}"
    );
}

/// `ops::convolve_2d` (weights carried in constant memory, `convolve_2d_const`) gives the same
/// bits as the kernel with the weights in a slice, on every device.
#[test]
fn the_constant_memory_kernel_gives_the_slice_kernels_bits() {
    for kernels in support::on_every_device(
        "the_constant_memory_kernel_gives_the_slice_kernels_bits",
        &ferrocuda::KERNELS,
    ) {
        let (mut rng, seed) = support::rng();
        for (width, height, channels) in [(37, 11, 1), (33, 9, 3), (5, 40, 2)] {
            let image = support::random_f32(&mut rng, width * height * channels);
            for filter in filters() {
                let mut carried = vec![f32::NAN; image.len()];
                let mut sliced = vec![f32::NAN; image.len()];
                let shape = (width, height, channels);
                ops::convolve_2d(
                    &kernels,
                    &image,
                    &mut carried,
                    width,
                    height,
                    channels,
                    &filter,
                )
                .unwrap();
                let (w, h, c, r) = (
                    width as u32,
                    height as u32,
                    channels as u32,
                    filter.radius() as u32,
                );
                let grid = (width.div_ceil(32), height.div_ceil(8));
                launch!(kernels, convolve_2d_kernel[grid, (32, 8)](&image, &mut sliced, filter.weights(), w, h, c, r))
                    .unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&carried),
                    bits(&sliced),
                    "{} {shape:?} side {} seed={seed}",
                    kernels.device(),
                    filter.side()
                );
            }
        }
    }
}

/// Threads filtering with different filters through one module at once each get their own
/// filter's result (the weights are one constant table per module, carried by each launch).
#[test]
fn concurrent_calls_with_different_filters_each_get_their_own() {
    for kernels in support::on_every_device(
        "concurrent_calls_with_different_filters_each_get_their_own",
        &ferrocuda::KERNELS,
    ) {
        let (width, height, channels) = (40, 17, 1);
        let image = support::random_f32(&mut support::rng().0, width * height * channels);
        let filters = [
            Filter::gaussian_3x3(),
            Filter::sobel_x(),
            Filter::gaussian_5x5(),
            random_filter(5),
        ];
        // Each filter's result alone, first.
        let alone: Vec<Vec<f32>> = filters
            .iter()
            .map(|filter| {
                let mut out = vec![0.0f32; image.len()];
                ops::convolve_2d(&kernels, &image, &mut out, width, height, channels, filter)
                    .unwrap();
                out
            })
            .collect();
        std::thread::scope(|scope| {
            for (filter, want) in filters.iter().zip(&alone) {
                let (kernels, image) = (&kernels, &image);
                scope.spawn(move || {
                    for round in 0..15 {
                        let mut out = vec![0.0f32; image.len()];
                        ops::convolve_2d(kernels, image, &mut out, width, height, channels, filter)
                            .unwrap();
                        assert!(
                            out == *want,
                            "{} side {} round {round}: another call's weights",
                            kernels.device(),
                            filter.side()
                        );
                    }
                });
            }
        });
    }
}

#[test]
fn gpu_matches_f64_on_the_4k_workload() {
    let Some(gpu) = support::gpu_or_skip("gpu_matches_f64_on_the_4k_workload") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    for (width, height) in SIZES {
        for channels in [1, 3] {
            for filter in filters() {
                check(&kernels, width, height, channels, &filter);
            }
        }
    }
    // The workload: every filter on a 3840 × 2160 grey image, and RGB with 3 × 3 and
    // 5 × 5 filters. The f64 reference checks a sample of rows (it is slow in a debug build).
    let (width, height) = support::size_for(&gpu, (3840, 2160), (480, 270));
    for filter in filters() {
        check_rows(
            &kernels,
            (width, height, 1),
            &filter,
            Some(sampled_rows(height)),
        );
    }
    for filter in [Filter::sobel_y(), Filter::gaussian_5x5()] {
        check_rows(
            &kernels,
            (width, height, 3),
            &filter,
            Some(sampled_rows(height)),
        );
    }
}
