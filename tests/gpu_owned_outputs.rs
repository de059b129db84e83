//! The elementwise path's plain output stores (`KernelInfo::owned_outputs`, docs/cpu-executor.md)
//! against the GPU and an f64 reference: `vector_add` qualifies, and a 1D launch on the executor
//! without checked mode (the plain-store copy of the loop) gives the GPU's results. Skips, saying
//! so, without a GPU.

mod support;

use ferrocuda::kernels::vector_add;
use ferrocuda::{launch, CpuOptions, Device};

#[test]
fn vector_add_with_plain_stores_equals_the_gpu_and_the_reference() {
    assert_eq!(vector_add.info().owned_outputs, ["out"]);
    let Some(gpu) =
        support::gpu_or_skip("vector_add_with_plain_stores_equals_the_gpu_and_the_reference")
    else {
        return;
    };
    let unchecked = CpuOptions {
        checked: false,
        ..CpuOptions::default()
    };
    let cpu = Device::cpu_with(unchecked)
        .unwrap()
        .load(&ferrocuda::KERNELS)
        .unwrap();
    let gpu = gpu.load(&ferrocuda::KERNELS).unwrap();
    let (mut rng, seed) = support::rng();
    let largest = support::size_for(gpu.device(), 1_000_003, 20_003);
    for n in [1usize, 255, 257, largest] {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        // f32 addition is correctly rounded: the f64 sum rounded once is the exact reference.
        let reference: Vec<f32> = (0..n)
            .map(|i| (f64::from(a[i]) + f64::from(b[i])) as f32)
            .collect();
        let (mut on_gpu, mut on_cpu) = (vec![0.0f32; n], vec![0.0f32; n]);
        let blocks = (n as u32).div_ceil(128);
        launch!(gpu, vector_add[blocks, 128](&a, &b, &mut on_gpu)).unwrap();
        launch!(cpu, vector_add[blocks, 128](&a, &b, &mut on_cpu)).unwrap();
        assert_eq!(on_cpu, reference, "CPU, n={n} seed={seed}");
        assert_eq!(on_gpu, reference, "GPU, n={n} seed={seed}");
    }
}
