//! `oxicuda run`, the main job: add two vectors of 1,000,000 f32 on the best device, check every
//! element against a CPU loop, and print the device, the kernel time and the single-threaded
//! loop's time.

use oxicuda::{kernels::vector_add, launch, Device, Result};
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const N: usize = 1_000_000;
const THREADS_PER_BLOCK: u32 = 256;
const RUNS: usize = 10;

/// Runs the main job and says how it went: success only if every element is right.
pub fn main_job() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool> {
    let choice = Device::best();
    let device = choice.device;
    println!("oxicuda vector add: {N} f32 elements");
    println!("device:      {device}");
    println!("why:         {}", choice.reason);

    // As in the seed: a = 0, 1, 2, ...; b = 1, 1, 1, ...
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b = vec![1.0f32; N];

    let kernels = device.load(&oxicuda::KERNELS)?;
    let blocks = N.div_ceil(THREADS_PER_BLOCK as usize) as u32;
    let (a_dev, b_dev) = (device.upload(&a)?, device.upload(&b)?);
    let mut out_dev = device.alloc_zeroed::<f32>(N)?;
    let mut kernel_times = Vec::with_capacity(RUNS);
    for _ in 0..=RUNS {
        let ((), elapsed) = device.time(|| {
            launch!(kernels, vector_add[blocks, THREADS_PER_BLOCK](&a_dev, &b_dev, &mut out_dev))
        })?;
        kernel_times.push(elapsed);
    }
    kernel_times.remove(0); // the first launch includes one-time set-up
    let out = out_dev.to_vec()?;

    let mut expected = vec![0.0f32; N];
    let mut loop_times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        add_loop(black_box(&a), black_box(&b), black_box(&mut expected));
        loop_times.push(start.elapsed());
    }

    let wrong = out
        .iter()
        .zip(&expected)
        .filter(|(got, want)| got != want)
        .count();
    println!("launch:      vector_add[{blocks}, {THREADS_PER_BLOCK}]");
    println!(
        "kernel time: {} (median of {RUNS}, data already on the device)",
        show(median(&mut kernel_times))
    );
    println!(
        "CPU loop:    {} (median of {RUNS}, one thread)",
        show(median(&mut loop_times))
    );
    if wrong == 0 {
        println!("verified:    all {N} elements equal the CPU loop's");
    } else {
        println!("FAILED:      {wrong} of {N} elements differ from the CPU loop's");
        let (i, (got, want)) = out
            .iter()
            .zip(&expected)
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .unwrap();
        println!("             first at index {i}: got {got}, expected {want}");
    }
    Ok(wrong == 0)
}

/// The reference: a plain single-threaded loop.
fn add_loop(a: &[f32], b: &[f32], out: &mut [f32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn show(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}
