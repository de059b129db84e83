//! `ferrocuda::bench::GpuTime` (feature `criterion`) on a GPU, the emulator in `make test`: the
//! measurement criterion drives records its CUDA events on the stream the work is launched on,
//! times the batch between them, and the work's result is what the reference says. Its
//! arithmetic is a unit test of `src/bench.rs`; what the time means on hardware is for a GPU.

#![cfg(feature = "criterion")]

mod support;

use criterion::measurement::Measurement;
use ferrocuda::bench::{check, GpuTime};
use ferrocuda::{kernels::saxpy, launch};
use std::time::Duration;

#[test]
fn gpu_time_brackets_the_launches_on_its_stream() {
    let Some(gpu) = support::gpu_or_skip("gpu_time_brackets_the_launches_on_its_stream") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let n = 1usize << 14;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (gx, mut gy) = (gpu.upload(&x).unwrap(), gpu.upload(&y).unwrap());
    let timer = GpuTime::new(&gpu).unwrap();
    let stream = timer.stream().clone();
    // What criterion's `iter` does with a measurement: start, the batch, end.
    let start = timer.start();
    for _ in 0..3 {
        launch!(kernels, saxpy[(n as u32).div_ceil(256), 256, stream](2.0f32, &gx, &mut gy))
            .unwrap();
    }
    let elapsed = timer.end(start);
    assert!(elapsed > Duration::ZERO, "{elapsed:?}");
    assert_eq!(timer.to_f64(&elapsed), elapsed.as_nanos() as f64);
    // Three fused multiply-adds per element, each rounded once.
    let want: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(&x, &y)| (0..3).fold(y, |acc, _| 2.0f32.mul_add(x, acc)))
        .collect();
    check("saxpy × 3 under GpuTime", &gy.to_vec().unwrap(), &want, 0.0).unwrap();
    // A second batch on the same measurement: its events are new ones, on the same stream.
    let again = timer.start();
    launch!(kernels, saxpy[(n as u32).div_ceil(256), 256, stream](2.0f32, &gx, &mut gy)).unwrap();
    assert!(timer.end(again) > Duration::ZERO);
}
