//! GPU against CPU: each kernel gives the same results on both. Skips, saying so, without a GPU.

mod support;

use ferrocuda::kernels::{matrix_add, saxpy, vector_add};
use ferrocuda::{launch, Device, Error, Module};

/// The GPU's kernels and the CPU's, or `None` (after saying why) when there is no GPU.
fn both(test: &str) -> Option<(Module, Module)> {
    match Device::cuda(0) {
        Ok(gpu) => {
            println!("running on {gpu}");
            Some((
                gpu.load(&ferrocuda::KERNELS).unwrap(),
                Device::cpu().load(&ferrocuda::KERNELS).unwrap(),
            ))
        }
        Err(error) => {
            // On the GPU machine (scripts/device-run.sh) a missing GPU is a failure, not a skip.
            assert!(
                std::env::var_os("FERROCUDA_EXPECT_GPU").is_none(),
                "FERROCUDA_EXPECT_GPU is set but {error}"
            );
            support::say_skipped(test, &format!("no CUDA device ({error})"));
            None
        }
    }
}

#[test]
fn vector_add_gpu_equals_cpu() {
    let Some((gpu, cpu)) = both("vector_add_gpu_equals_cpu") else {
        return;
    };
    let (mut rng, seed) = support::rng();
    for n in [1usize, 255, 256, 257, 1_000_003] {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let (mut on_gpu, mut on_cpu) = (vec![0.0f32; n], vec![0.0f32; n]);
        let blocks = (n as u32).div_ceil(256);
        launch!(gpu, vector_add[blocks, 256](&a, &b, &mut on_gpu)).unwrap();
        launch!(cpu, vector_add[blocks, 256](&a, &b, &mut on_cpu)).unwrap();
        assert_eq!(on_gpu, on_cpu, "n={n} seed={seed}");
    }
}

#[test]
fn saxpy_and_matrix_add_gpu_equal_cpu_with_device_buffers() {
    let Some((gpu, cpu)) = both("saxpy_and_matrix_add_gpu_equal_cpu_with_device_buffers") else {
        return;
    };
    let (mut rng, seed) = support::rng();
    let n = 100_003;
    let x = support::random_f32(&mut rng, n);
    let y = support::random_f32(&mut rng, n);
    let device = gpu.device();
    let x_dev = device.upload(&x).unwrap();
    let mut y_dev = device.upload(&y).unwrap();
    launch!(gpu, saxpy[40, 128](0.5f32, &x_dev, &mut y_dev)).unwrap();
    let mut y_cpu = y.clone();
    launch!(cpu, saxpy[40, 128](0.5f32, &x, &mut y_cpu)).unwrap();
    let y_gpu = y_dev.to_vec().unwrap();
    for i in 0..n {
        // The GPU may fuse a * x + y into one FMA: allow one rounding of difference.
        let tolerance = 2.0 * f32::EPSILON * (y_cpu[i].abs() + 0.5 * x[i].abs());
        assert!(
            (y_gpu[i] - y_cpu[i]).abs() <= tolerance,
            "i={i} seed={seed}"
        );
    }

    let (rows, cols) = (257usize, 1003usize);
    let a = support::random_f32(&mut rng, rows * cols);
    let b = support::random_f32(&mut rng, rows * cols);
    let (mut on_gpu, mut on_cpu) = (vec![0.0f32; rows * cols], vec![0.0f32; rows * cols]);
    let grid = ((cols as u32).div_ceil(16), (rows as u32).div_ceil(16));
    launch!(gpu, matrix_add[grid, (16, 16)](&a, &b, &mut on_gpu, cols as u32)).unwrap();
    launch!(cpu, matrix_add[grid, (16, 16)](&a, &b, &mut on_cpu, cols as u32)).unwrap();
    assert_eq!(on_gpu, on_cpu, "seed={seed}");
}

#[test]
fn gpu_launch_errors_are_reported() {
    let Some((gpu, _cpu)) = both("gpu_launch_errors_are_reported") else {
        return;
    };
    let limit = gpu.device().properties().max_threads_per_block;
    let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    let error = launch!(gpu, saxpy[1, limit + 1](2.0f32, &x, &mut y)).unwrap_err();
    assert!(matches!(error, Error::BlockTooLarge { .. }), "{error}");
    let config = gpu.config_for(&vector_add, 1_000_000).unwrap();
    assert!(
        config.block.x >= 32 && config.block.x <= limit,
        "{config:?}"
    );
}
