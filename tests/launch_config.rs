//! `launch!` and `LaunchConfig`: sizes of any integer type (`n.div_ceil(256)` is a `usize`) and
//! tuples of them, a clear error for sizes no CUDA launch can have, a `Copy` config reused
//! across launches, and dynamic shared memory with or without a stream; on the CPU executor and
//! on a GPU when there is one.

mod support;

use ferrocuda::kernels::histogram::{bin_of, histogram};
use ferrocuda::kernels::{matrix_add, vector_add};
use ferrocuda::{launch, Dim3, Error, LaunchConfig, Module};

fn sum_is_right(a: &[f32], b: &[f32], out: &[f32]) -> bool {
    (0..a.len()).all(|i| out[i] == a[i] + b[i])
}

#[test]
fn grid_and_block_may_be_usize_u32_literals_or_tuples_of_them() {
    for kernels in support::on_every_device(
        "grid_and_block_may_be_usize_u32_literals_or_tuples_of_them",
        &ferrocuda::KERNELS,
    ) {
        grid_and_block_may_be_usize_u32_literals_or_tuples_of_them_on(&kernels);
    }
}

fn grid_and_block_may_be_usize_u32_literals_or_tuples_of_them_on(kernels: &Module) {
    let n: usize = 1000;
    let (a, b) = (vec![1.5f32; n], vec![2.25f32; n]);
    let mut out = vec![0.0f32; n];
    launch!(kernels, vector_add[n.div_ceil(256), 256usize](&a, &b, &mut out)).unwrap();
    assert!(sum_is_right(&a, &b, &out));
    out.fill(0.0);
    launch!(kernels, vector_add[n.div_ceil(128) as u32, 128](&a, &b, &mut out)).unwrap();
    assert!(sum_is_right(&a, &b, &out));

    // 2D: a 30 × 50 matrix, tuples mixing usize and u32.
    let (rows, cols) = (30usize, 50u32);
    let (x, y) = (vec![1.0f32; 1500], vec![2.0f32; 1500]);
    let mut sum = vec![0.0f32; 1500];
    launch!(
        kernels,
        matrix_add[(cols.div_ceil(16), rows.div_ceil(16)), (16usize, 16u32)](&x, &y, &mut sum, cols)
    )
    .unwrap();
    assert!(sum.iter().all(|&v| v == 3.0));
    let config = LaunchConfig::try_new([4usize, 2, 1], Dim3::new(8, 8, 1)).unwrap();
    assert_eq!(
        (config.grid, config.block),
        (Dim3::new(4, 2, 1), Dim3::new(8, 8, 1))
    );
}

#[test]
fn a_size_that_is_no_cuda_dimension_is_an_error_not_a_truncation() {
    for kernels in support::on_every_device(
        "a_size_that_is_no_cuda_dimension_is_an_error_not_a_truncation",
        &ferrocuda::KERNELS,
    ) {
        a_size_that_is_no_cuda_dimension_is_an_error_not_a_truncation_on(&kernels);
    }
}

fn a_size_that_is_no_cuda_dimension_is_an_error_not_a_truncation_on(kernels: &Module) {
    let (a, b) = (vec![1.0f32; 4], vec![1.0f32; 4]);
    let mut out = vec![0.0f32; 4];
    // 2^32 + 1 would truncate to a grid of 1 block, which would "work".
    let too_many: usize = (1usize << 32) + 1;
    let error = launch!(kernels, vector_add[too_many, 256](&a, &b, &mut out)).unwrap_err();
    match &error {
        Error::LaunchDimension { what, axis, value } => {
            assert_eq!((*what, *axis, value.as_str()), ("grid", 'x', "4294967297"));
        }
        other => panic!("expected LaunchDimension, got {other}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("grid x = 4294967297") && message.contains("grid-stride loop"),
        "{message}"
    );
    assert_eq!(out, vec![0.0; 4], "nothing ran");

    let negative = launch!(kernels, vector_add[1, (8, -2)](&a, &b, &mut out)).unwrap_err();
    assert!(
        matches!(
            &negative,
            Error::LaunchDimension { what: "block", axis: 'y', value } if value == "-2"
        ),
        "{negative}"
    );
    let z = LaunchConfig::try_new((1u64, 1u64, u64::MAX), 1).unwrap_err();
    assert!(
        matches!(
            z,
            Error::LaunchDimension {
                what: "grid",
                axis: 'z',
                ..
            }
        ),
        "{z}"
    );
}

#[test]
fn a_launch_config_is_copy_and_serves_several_launches() {
    for kernels in support::on_every_device(
        "a_launch_config_is_copy_and_serves_several_launches",
        &ferrocuda::KERNELS,
    ) {
        a_launch_config_is_copy_and_serves_several_launches_on(&kernels);
    }
}

fn a_launch_config_is_copy_and_serves_several_launches_on(kernels: &Module) {
    let stream = kernels.device().new_stream().unwrap();
    let config = LaunchConfig::new(4, 256).on_stream(&stream);
    let (a, b) = (vec![1.0f32; 1024], vec![3.0f32; 1024]);
    let (mut first, mut second) = (vec![0.0f32; 1024], vec![0.0f32; 1024]);
    kernels
        .launch(&vector_add, config, (&a, &b, &mut first))
        .unwrap();
    kernels
        .launch(&vector_add, config, (&b, &a, &mut second))
        .unwrap();
    assert!(sum_is_right(&a, &b, &first) && sum_is_right(&b, &a, &second));
    assert!(config.stream.is_some());
    stream.synchronize().unwrap();
}

/// Values in `[0, 1)` and their histogram over `bins` bins.
fn histogram_case(bins: usize) -> (Vec<f32>, Vec<u32>) {
    let values: Vec<f32> = (0..1000).map(|i| (i % 97) as f32 / 97.0).collect();
    let mut expected = vec![0u32; bins];
    for &v in &values {
        expected[bin_of(v, 0.0, 1.0, bins).expect("in range")] += 1;
    }
    (values, expected)
}

#[test]
fn dynamic_shared_memory_can_be_given_without_a_stream() {
    for kernels in support::on_every_device(
        "dynamic_shared_memory_can_be_given_without_a_stream",
        &ferrocuda::KERNELS,
    ) {
        dynamic_shared_memory_can_be_given_without_a_stream_on(&kernels);
    }
}

fn dynamic_shared_memory_can_be_given_without_a_stream_on(kernels: &Module) {
    let bins = 16usize;
    let (values, expected) = histogram_case(bins);
    let bytes = (4 * bins) as u32;

    let mut counts = vec![0u32; bins];
    launch!(kernels, histogram[2, 64; shared = bytes](&values, &mut counts, 0.0f32, 1.0f32))
        .unwrap();
    assert_eq!(counts, expected, "[grid, block; shared = bytes]");

    let stream = kernels.device().new_stream().unwrap();
    let mut counts = vec![0u32; bins];
    launch!(
        kernels,
        histogram[2, 64, stream; shared = bytes](&values, &mut counts, 0.0f32, 1.0f32)
    )
    .unwrap();
    assert_eq!(counts, expected, "[grid, block, stream; shared = bytes]");

    // The older positional form still works.
    let mut counts = vec![0u32; bins];
    launch!(kernels, histogram[2, 64, stream, bytes](&values, &mut counts, 0.0f32, 1.0f32))
        .unwrap();
    assert_eq!(counts, expected, "[grid, block, stream, bytes]");

    // And so does a config built by hand, without a stream.
    let mut counts = vec![0u32; bins];
    let config = LaunchConfig::new(2, 64).with_shared_mem_bytes(bytes);
    kernels
        .launch(&histogram, config, (&values, &mut counts, 0.0f32, 1.0f32))
        .unwrap();
    assert_eq!(counts, expected, "LaunchConfig::with_shared_mem_bytes");
}
