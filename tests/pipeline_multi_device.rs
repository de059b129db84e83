//! `ops::Pipeline::across` (issue 33): chunks spread over several GPUs, chunk k on device
//! k mod devices, each with its own streams. The prices equal one device's bit for bit and the
//! f64 reference; each device got the chunks the rule gives it (the pipeline's counts, checked
//! against what the body saw and against each device's own memory meter); each stays under its
//! memory limit; a fault names its chunk. On the PTX emulator this binary asks for two devices
//! (`FERROCUDA_EMU_DEVICES=2`, unless set already: `make test` also runs it in the emulator's
//! deferred mode, where a copy that is never waited for never lands); on hardware it needs two
//! GPUs and skips with fewer. What needs no GPU (bad arguments) runs on the CPU executor.

mod support;

use ferrocuda::kernels::finance::black_scholes;
use ferrocuda::kernels::vector_add;
use ferrocuda::ops::{Pipeline, SpanKind, Timeline};
use ferrocuda::{launch, Device, DeviceKind, Error, Module, KERNELS};

/// The kernels on every GPU, or `None` (skipped) with fewer than two (two on the emulator).
fn every_gpu(test: &str) -> Option<Vec<Module>> {
    let all = support::two_gpus_or_skip(test)?;
    Some(all.iter().map(|d| d.load(&KERNELS).unwrap()).collect())
}

/// Where the body saw chunk `index`: the device index it was given, and the devices of its
/// module, its stream's buffers and its outputs.
#[derive(Debug, PartialEq)]
struct Seen {
    index: usize,
    device: usize,
    kernels_on: DeviceKind,
    buffers_on: DeviceKind,
}

/// Options with prices well away from 0 (a relative tolerance suits them).
fn options(n: usize) -> [Vec<f32>; 3] {
    [
        (0..n).map(|i| 50.0 + (i % 101) as f32).collect(),
        (0..n).map(|i| 60.0 + (i % 37) as f32 * 2.0).collect(),
        (0..n).map(|i| 0.25 + (i % 9) as f32 * 0.25).collect(),
    ]
}

const RATE: f32 = 0.02;
const VOLATILITY: f32 = 0.3;

/// Black-Scholes call and put in f64 from the f32 inputs.
fn black_scholes_f64(s: f32, k: f32, t: f32) -> (f64, f64) {
    let (s, k, t, r, v) = (s as f64, k as f64, t as f64, RATE as f64, VOLATILITY as f64);
    let cdf = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
    let discounted = k * (-r * t).exp();
    let d1 = ((s / k).ln() + (r + 0.5 * v * v) * t) / (v * t.sqrt());
    let d2 = d1 - v * t.sqrt();
    (
        s * cdf(d1) - discounted * cdf(d2),
        discounted * cdf(-d2) - s * cdf(-d1),
    )
}

/// The prices through `pipeline`, with what the body saw of each chunk.
fn price(
    pipeline: Pipeline<'_>,
    [spot, strike, years]: &[Vec<f32>; 3],
) -> ((Vec<f32>, Vec<f32>), Timeline, Vec<Seen>) {
    let (mut call, mut put) = (vec![f32::NAN; spot.len()], vec![f32::NAN; spot.len()]);
    let mut seen = Vec::new();
    let timeline = pipeline
        .run(
            &[spot, strike, years],
            &mut [&mut call, &mut put],
            |chunk| {
                seen.push(Seen {
                    index: chunk.index,
                    device: chunk.device,
                    kernels_on: chunk.kernels.device().kind(),
                    buffers_on: chunk.inputs[0].device().kind(),
                });
                assert_eq!(
                    chunk.outputs[1].device().kind(),
                    seen.last().unwrap().buffers_on
                );
                let blocks = chunk.len().div_ceil(128);
                let [s, k, t] = chunk.inputs else {
                    unreachable!()
                };
                let [c, p] = chunk.outputs else {
                    unreachable!()
                };
                launch!(
                    chunk.kernels,
                    black_scholes[blocks, 128, chunk.stream](s, k, t, RATE, VOLATILITY, c, p)
                )
            },
        )
        .unwrap();
    ((call, put), timeline, seen)
}

#[test]
fn chunks_go_round_robin_and_the_prices_equal_one_device_and_the_f64_reference() {
    let _serial = support::gpu_alone();
    let Some(modules) = every_gpu("chunks_go_round_robin") else {
        return;
    };
    let devices = modules.len();
    let n = support::size_for(modules[0].device(), 50_000, 3_001);
    let data = options(n);
    let (alone, alone_timeline, _) = price(Pipeline::new(&modules[0]).chunk_len(211), &data);
    assert_eq!(alone_timeline.per_device.len(), 1);
    assert_eq!(alone_timeline.per_device[0].chunks, n.div_ceil(211));

    // Chunks fewer than the streams of all devices, as many, and many more; 1 to 3 streams.
    for (chunk_len, streams) in [(n / 3 + 1, 3), (211, 1), (211, 2), (97, 3)] {
        for m in 1..=devices {
            for module in &modules[..m] {
                module.device().reset_peak_memory();
            }
            let pipeline = Pipeline::across(&modules[..m])
                .chunk_len(chunk_len)
                .streams(streams)
                .timeline(true);
            let (prices, timeline, seen) = price(pipeline, &data);
            let case = format!("{n} options in chunks of {chunk_len} on {m} devices × {streams}");
            assert!(
                prices == alone,
                "{case}: the prices differ from one device's"
            );
            let chunks = n.div_ceil(chunk_len);
            assert_eq!((timeline.chunks, timeline.devices), (chunks, m), "{case}");

            // What the body saw: chunk k on device k mod m, with that device's module and buffers.
            assert_eq!(seen.len(), chunks, "{case}");
            for (k, seen) in seen.iter().enumerate() {
                let on = modules[k % m].device().kind();
                let expected = Seen {
                    index: k,
                    device: k % m,
                    kernels_on: on,
                    buffers_on: on,
                };
                assert_eq!(seen, &expected, "{case}");
            }
            // The pipeline's counts agree, and each device's memory meter saw its buffers.
            for (d, work) in timeline.per_device.iter().enumerate() {
                let mine: Vec<usize> = (d..chunks).step_by(m).collect();
                let elements: usize = mine.iter().map(|&k| chunk_len.min(n - k * chunk_len)).sum();
                assert_eq!(work.device, modules[d].device().to_string(), "{case}");
                assert_eq!(
                    (work.chunks, work.elements, work.uploads, work.downloads),
                    (mine.len(), elements, 3 * mine.len(), 2 * mine.len()),
                    "{case}: device {d}"
                );
                assert_eq!(work.bytes, 5 * 4 * elements, "{case}: device {d}");
                let peak = modules[d].device().peak_memory();
                let most = 5 * 4 * chunk_len * streams;
                match mine.is_empty() {
                    true => assert_eq!(peak, 0, "{case}: device {d} has no chunk"),
                    false => assert!(0 < peak && peak <= most, "{case}: device {d} peak {peak}"),
                }
            }
            // The spans: three per chunk, on the chunk's device's streams.
            assert_eq!(timeline.spans.len(), 3 * chunks, "{case}");
            for span in &timeline.spans {
                assert_eq!(span.device, span.chunk % m, "{span:?}");
                assert_eq!(span.stream % m, span.device, "{span:?}");
                assert!(span.start <= span.end, "{span:?}");
            }
            let kernels = timeline.spans.iter().filter(|s| s.kind == SpanKind::Kernel);
            assert_eq!(kernels.count(), chunks);
        }
    }

    // Against the f64 reference (prices of 6 to 100 or so: relative 1e-4 is ~800 ULP of room
    // for the f32 kernel's exp, log and Φ).
    let [spot, strike, years] = &data;
    for i in 0..n {
        let (call, put) = black_scholes_f64(spot[i], strike[i], years[i]);
        for (got, want) in [(alone.0[i], call), (alone.1[i], put)] {
            assert!(
                (got as f64 - want).abs() <= 1e-4 * want.abs().max(1.0),
                "option {i}: {got} against {want}"
            );
        }
    }
}

#[test]
fn each_device_stays_under_its_memory_limit_with_the_default_chunk_length() {
    let _serial = support::gpu_alone();
    let Some(modules) = every_gpu("each_device_stays_under_its_memory_limit") else {
        return;
    };
    // 1 MiB of each input under 64 KiB per device (tests/pipeline.rs's ratio), on every device.
    let limit = 64 << 10;
    let capped: Vec<Module> = modules
        .iter()
        .map(|m| {
            let device = m.device().with_memory_limit(Some(limit));
            device.reset_peak_memory();
            device.load(m.ptx()).unwrap()
        })
        .collect();
    let n = (1 << 20) / 4;
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.25).collect();
    let mut sum = vec![f32::NAN; n];
    let timeline = Pipeline::across(&capped)
        .streams(2)
        .run(&[&a, &b], &mut [&mut sum], |chunk| {
            let [a, b] = chunk.inputs else { unreachable!() };
            let blocks = chunk.len().div_ceil(256);
            launch!(chunk.kernels, vector_add[blocks, 256, chunk.stream](a, b, &mut chunk.outputs[0]))
        })
        .unwrap();
    println!(
        "{n} elements in {} chunks of {} over {} devices",
        timeline.chunks, timeline.chunk_len, timeline.devices
    );
    for (i, &x) in sum.iter().enumerate() {
        // An f32 sum is the f64 sum rounded once.
        assert_eq!(x, (a[i] as f64 + b[i] as f64) as f32, "element {i}");
    }
    for (d, module) in capped.iter().enumerate() {
        let device = module.device();
        let peak = device.peak_memory();
        assert!(
            0 < peak && peak <= limit,
            "device {d}: peak {peak} over {limit}"
        );
        assert_eq!(device.memory_in_use(), 0, "device {d}");
        let work = &timeline.per_device[d];
        assert!(work.chunks >= 8, "device {d}: {work:?}");
    }
    let chunks: usize = timeline.per_device.iter().map(|w| w.chunks).sum();
    assert_eq!(chunks, timeline.chunks);
}

#[test]
fn a_fault_on_the_second_device_names_its_chunk_with_earlier_chunks_written() {
    let _serial = support::gpu_alone();
    let Some(modules) = every_gpu("a_fault_on_the_second_device") else {
        return;
    };
    let devices = modules.len();
    let faulty: Vec<Module> = modules
        .iter()
        .map(|m| m.device().load(support::test_kernels()).unwrap())
        .collect();
    let (n, chunk_len, k) = (100, 16, 3); // chunk 3 is on device 1 of 2 (or 3 of 3 and more)
    for streams in 1..=2 {
        let mut x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        x[k * chunk_len + 5] = -1.0; // the kernel traps on it
        let untouched = -7.0f32;
        let mut out = vec![untouched; n];
        let error = Pipeline::across(&faulty)
            .chunk_len(chunk_len)
            .streams(streams)
            .run(&[&x], &mut [&mut out], |chunk| {
                assert_eq!(chunk.device, chunk.index % devices);
                let blocks = chunk.len().div_ceil(32);
                launch!(chunk.kernels, test_kernels::assert_non_negative[blocks, 32, chunk.stream](
                    &chunk.inputs[0],
                    &mut chunk.outputs[0]
                ))
            })
            .unwrap_err();
        println!("{streams} streams per device: {error}");
        support::assert_failed_in_chunk(&error, k, chunk_len, &x, &out, untouched);
    }
    // Every device carries on.
    let ones = vec![1.0f32; 50];
    let modules: Vec<Module> = modules
        .iter()
        .map(|m| m.device().load(&KERNELS).unwrap())
        .collect();
    let mut two = vec![0.0f32; 50];
    let timeline = Pipeline::across(&modules)
        .chunk_len(8)
        .run(&[&ones, &ones], &mut [&mut two], |chunk| {
            let [a, b] = chunk.inputs else { unreachable!() };
            launch!(chunk.kernels, vector_add[1, 32, chunk.stream](a, b, &mut chunk.outputs[0]))
        })
        .unwrap();
    assert_eq!(two, vec![2.0; 50]);
    assert!(timeline.per_device.iter().all(|w| w.chunks >= 1));
}

#[test]
fn a_launch_with_another_devices_kernels_is_refused() {
    let _serial = support::gpu_alone();
    let Some(modules) = every_gpu("a_launch_with_another_devices_kernels") else {
        return;
    };
    let (a, mut out) = (vec![1.0f32; 64], vec![0.0f32; 64]);
    let error = Pipeline::across(&modules)
        .chunk_len(16)
        .run(&[&a, &a], &mut [&mut out], |chunk| {
            let [a, b] = chunk.inputs else { unreachable!() };
            // Always device 0's module: chunk 1's buffers and stream are device 1's.
            launch!(modules[0], vector_add[1, 16, chunk.stream](a, b, &mut chunk.outputs[0]))
        })
        .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(&error, Error::ChunkFailed { chunk: 1, source, .. }
            if matches!(**source, Error::WrongDevice { .. })),
        "{message}"
    );
    assert_eq!(&out[..16], &[2.0; 16], "chunk 0 ran on device 0");
}

#[test]
fn no_modules_or_two_on_one_device_are_errors_before_anything_runs() {
    let _serial = support::gpu_alone();
    let (one, two) = (
        Device::cpu().load(&KERNELS).unwrap(),
        Device::cpu().load(&KERNELS).unwrap(),
    );
    let (a, mut out) = (vec![1.0f32; 10], vec![0.0f32; 10]);
    let body =
        |_: ferrocuda::ops::Chunk<'_, f32>| -> ferrocuda::Result<()> { panic!("must not run") };
    let error = Pipeline::across(&[])
        .run(&[&a], &mut [&mut out], body)
        .unwrap_err();
    assert!(error.to_string().contains("no modules"), "{error}");
    let both = [one, two];
    let error = Pipeline::across(&both)
        .run(&[&a], &mut [&mut out], body)
        .unwrap_err();
    assert!(
        error.to_string().contains("modules 0 and 1 are both on"),
        "{error}"
    );
    // One module is `Pipeline::new`.
    let timeline = Pipeline::across(&both[..1])
        .chunk_len(4)
        .run(&[&a, &a], &mut [&mut out], |chunk| {
            let [a, b] = chunk.inputs else { unreachable!() };
            launch!(chunk.kernels, vector_add[1, 4, chunk.stream](a, b, &mut chunk.outputs[0]))
        })
        .unwrap();
    assert_eq!(out, vec![2.0; 10]);
    assert_eq!((timeline.devices, timeline.per_device[0].chunks), (1, 3));
}
