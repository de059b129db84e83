//! The CPU executor against f64 references, on awkward lengths, with 1D and 2D grids.

mod support;

use ferrocuda::kernels::{matrix_add, saxpy, vector_add};
use ferrocuda::{launch, Device, Module};

const LENGTHS: [usize; 5] = [1, 255, 256, 257, 1_000_003];

fn cpu_kernels() -> Module {
    Device::cpu()
        .load(&ferrocuda::KERNELS)
        .expect("the CPU loads any PTX")
}

#[test]
fn vector_add_equals_reference_for_awkward_lengths() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let mut out = vec![f32::NAN; n];
        let blocks = (n as u32).div_ceil(256);
        launch!(kernels, vector_add[blocks, 256](&a, &b, &mut out)).unwrap();
        for i in 0..n {
            let want = (a[i] as f64 + b[i] as f64) as f32;
            assert_eq!(out[i], want, "n={n} i={i} seed={seed}");
        }
    }
}

#[test]
fn vector_add_with_the_default_config_and_device_buffers() {
    let kernels = cpu_kernels();
    let device = kernels.device().clone();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let (a_dev, b_dev) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let mut out_dev = device.alloc_zeroed::<f32>(n).unwrap();
        let config = kernels.config_for(&vector_add, n).unwrap();
        assert!(config.grid.count() * config.block.count() >= n as u64);
        kernels
            .launch(&vector_add, config, (&a_dev, &b_dev, &mut out_dev))
            .unwrap();
        let out = out_dev.to_vec().unwrap();
        assert!(
            (0..n).all(|i| out[i] == (a[i] as f64 + b[i] as f64) as f32),
            "n={n} seed={seed}"
        );
    }
}

#[test]
fn saxpy_grid_stride_covers_any_length_with_any_grid() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    let alpha = 1.5f32;
    for n in LENGTHS {
        // Fewer threads than elements (grid-stride), exactly enough, and more than enough.
        for (blocks, threads) in [
            (3u32, 64u32),
            ((n as u32).div_ceil(128), 128),
            (n as u32 / 100 + 2, 256),
        ] {
            let x = support::random_f32(&mut rng, n);
            let y0 = support::random_f32(&mut rng, n);
            let mut y = y0.clone();
            launch!(kernels, saxpy[blocks, threads](alpha, &x, &mut y)).unwrap();
            for i in 0..n {
                let want = alpha as f64 * x[i] as f64 + y0[i] as f64;
                // Two f32 roundings (product, sum): each off by at most half an ulp of its result.
                let tolerance =
                    f32::EPSILON as f64 * (2.0 * (alpha * x[i]).abs() as f64 + y0[i].abs() as f64);
                assert!(
                    (y[i] as f64 - want).abs() <= tolerance,
                    "n={n} grid=[{blocks},{threads}] i={i}: {} vs {want} seed={seed}",
                    y[i]
                );
            }
        }
    }
}

#[test]
fn matrix_add_on_a_2d_grid_of_2d_blocks() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    // Every length of LENGTHS as one row and as one column, and rectangles of awkward sizes.
    let lines = LENGTHS.iter().flat_map(|&n| [(1, n), (n, 1)]);
    for (rows, cols) in lines.chain([(31, 33), (257, 255), (1000, 1003)]) {
        let a = support::random_f32(&mut rng, rows * cols);
        let b = support::random_f32(&mut rng, rows * cols);
        let mut out = vec![f32::NAN; rows * cols];
        let block = (16u32, 16u32);
        let grid = ((cols as u32).div_ceil(16), (rows as u32).div_ceil(16));
        launch!(kernels, matrix_add[grid, block](&a, &b, &mut out, cols as u32)).unwrap();
        for i in 0..rows * cols {
            let want = (a[i] as f64 + b[i] as f64) as f32;
            assert_eq!(out[i], want, "{rows}x{cols} i={i} seed={seed}");
        }
    }
}

#[test]
fn elements_no_thread_writes_keep_their_values() {
    // A grid that covers only the first 256 elements of 1000: the rest must be untouched.
    let kernels = cpu_kernels();
    let a = vec![1.0f32; 1000];
    let b = vec![2.0f32; 1000];
    let mut out = vec![-7.0f32; 1000];
    launch!(kernels, vector_add[1, 256](&a, &b, &mut out)).unwrap();
    assert!(out[..256].iter().all(|&v| v == 3.0));
    assert!(out[256..].iter().all(|&v| v == -7.0));
}

#[test]
fn launches_on_a_stream_with_dynamic_shared_memory_run_the_same() {
    let kernels = cpu_kernels();
    let device = kernels.device().clone();
    let stream = device.new_stream().unwrap();
    let (mut rng, seed) = support::rng();
    let n = 4099;
    let a = support::random_f32(&mut rng, n);
    let b = support::random_f32(&mut rng, n);
    let (mut on_stream, mut with_shared) = (vec![0.0f32; n], vec![0.0f32; n]);
    let blocks = (n as u32).div_ceil(128);
    launch!(kernels, vector_add[blocks, 128, stream](&a, &b, &mut on_stream)).unwrap();
    launch!(kernels, vector_add[blocks, 128, stream, 1024](&a, &b, &mut with_shared)).unwrap();
    stream.synchronize().unwrap();
    for i in 0..n {
        let want = (a[i] as f64 + b[i] as f64) as f32;
        assert_eq!(
            (on_stream[i], with_shared[i]),
            (want, want),
            "i={i} seed={seed}"
        );
    }
}

/// The plain-store copy of the elementwise loop (`OwnedOut`), which a launch without checked
/// mode takes. At every length and block size (runs cut at 64 threads, a partial last row,
/// blocks of one thread),
/// `vector_add` gives the f64 reference, and `axpy_f16`, which also reads its own output
/// element, gives the bits of the checked copy (plain `Out` accesses, checked in
/// tests/half_precision.rs against its own reference).
#[test]
fn the_plain_store_loop_gives_the_reference_at_every_run_boundary() {
    use ferrocuda::f16;
    use test_kernels::half::axpy_f16;
    let unchecked = Device::cpu_checked(false);
    assert!(!unchecked.checks_enabled());
    let plain = unchecked.load(&ferrocuda::KERNELS).unwrap();
    let plain_test = unchecked.load(support::test_kernels()).unwrap();
    let checked_test = Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    let (mut rng, seed) = support::rng();
    for n in [1usize, 63, 64, 65, 200, 4097] {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let want: Vec<f32> = (0..n).map(|i| (a[i] as f64 + b[i] as f64) as f32).collect();
        let x: Vec<f16> = a.iter().map(|&v| f16::from_f32(v)).collect();
        let y0: Vec<f16> = b.iter().map(|&v| f16::from_f32(v)).collect();
        for block in [1u32, 32, 64, 100, 256, 1024] {
            let blocks = (n as u32).div_ceil(block);
            let mut out = vec![f32::NAN; n];
            launch!(plain, vector_add[blocks, block](&a, &b, &mut out)).unwrap();
            assert_eq!(out, want, "vector_add n={n} block={block} seed={seed}");
            let (mut y, mut y_checked) = (y0.clone(), y0.clone());
            launch!(plain_test, axpy_f16[blocks, block](0.75f32, &x, &mut y)).unwrap();
            launch!(checked_test, axpy_f16[blocks, block](0.75f32, &x, &mut y_checked)).unwrap();
            let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<u16>>();
            assert_eq!(
                bits(&y),
                bits(&y_checked),
                "axpy_f16 n={n} block={block} seed={seed}"
            );
        }
    }
}
