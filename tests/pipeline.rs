//! `ops::Pipeline`: host data in chunks on streams equals one launch over all of it bit for
//! bit, keeps the device under its memory limit, and a fault in chunk k names chunk k with the
//! chunks before it written and the rest untouched. On the CPU executor and on a GPU (the PTX
//! emulator in CI, where work runs when it is queued: the same steps in order, no overlap).
//!
//! The tests run one at a time: the fault test replaces the GPU's CUDA context, which every
//! `Device` of it shares.

mod support;

use ferrocuda::kernels::finance::black_scholes;
use ferrocuda::kernels::vector_add;
use ferrocuda::ops::{Pipeline, SpanKind};
use ferrocuda::{launch, Device, Error, Module, KERNELS};

/// The CPU executor (unchecked: these kernels share nothing between threads, and the largest
/// test runs 16 Mi threads) and GPU 0 if there is one.
fn devices(test: &str) -> Vec<Device> {
    let mut devices = vec![Device::cpu_checked(false)];
    devices.extend(support::gpu_or_skip(test));
    devices
}

/// `a + b` through a pipeline.
fn add_in_chunks(
    kernels: &Module,
    a: &[f32],
    b: &[f32],
    chunk_len: usize,
    streams: usize,
) -> ferrocuda::Result<Vec<f32>> {
    let mut sum = vec![f32::NAN; a.len()];
    Pipeline::new(kernels)
        .chunk_len(chunk_len)
        .streams(streams)
        .run(&[a, b], &mut [&mut sum], |chunk| {
            let [a, b] = chunk.inputs else {
                unreachable!("two inputs")
            };
            let blocks = chunk.len().div_ceil(128);
            launch!(kernels, vector_add[blocks, 128, chunk.stream](a, b, &mut chunk.outputs[0]))
        })?;
    Ok(sum)
}

#[test]
fn chunked_equals_one_shot_bit_for_bit_for_every_chunk_length_and_stream_count() {
    let _serial = support::gpu_alone();
    for device in devices("chunked_equals_one_shot") {
        let kernels = device.load(&KERNELS).unwrap();
        let (mut rng, seed) = support::rng();
        let n = support::size_for(&device, 10_007, 263);
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let mut one_shot = vec![0.0f32; n];
        launch!(kernels, vector_add[n.div_ceil(128), 128](&a, &b, &mut one_shot)).unwrap();
        // 1 element (on a short input: one launch per element), primes, exactly the input, more.
        let tiny = support::size_for(&device, 300, 40);
        for (len, chunk_len) in [(tiny, 1), (n, 7), (n, 97), (n, n), (n, n + 5)] {
            for streams in 1..=4 {
                let chunked =
                    add_in_chunks(&kernels, &a[..len], &b[..len], chunk_len, streams).unwrap();
                assert!(
                    chunked
                        .iter()
                        .zip(&one_shot)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{device} seed {seed}: {len} elements in chunks of {chunk_len} on {streams} \
                     streams differ from one launch"
                );
            }
        }
    }
}

#[test]
fn black_scholes_in_chunks_equals_one_launch_bit_for_bit() {
    let _serial = support::gpu_alone();
    for device in devices("black_scholes_in_chunks") {
        let kernels = device.load(&KERNELS).unwrap();
        let n = support::size_for(&device, 5_000, 700);
        let spot: Vec<f32> = (0..n).map(|i| 50.0 + (i % 101) as f32).collect();
        let strike: Vec<f32> = (0..n).map(|i| 60.0 + (i % 37) as f32 * 2.0).collect();
        let years: Vec<f32> = (0..n).map(|i| 0.25 + (i % 9) as f32 * 0.25).collect();
        let (rate, volatility) = (0.02f32, 0.3f32);
        let (mut call, mut put) = (vec![0.0f32; n], vec![0.0f32; n]);
        ferrocuda::ops::black_scholes(
            &kernels, &spot, &strike, &years, rate, volatility, &mut call, &mut put,
        )
        .unwrap();
        let (mut chunk_call, mut chunk_put) = (vec![0.0f32; n], vec![0.0f32; n]);
        let timeline = Pipeline::new(&kernels)
            .chunk_len(211)
            .streams(3)
            .timeline(true)
            .run(
                &[&spot, &strike, &years],
                &mut [&mut chunk_call, &mut chunk_put],
                |chunk| {
                    let blocks = chunk.len().div_ceil(128);
                    let [s, k, t] = chunk.inputs else { unreachable!() };
                    let [c, p] = chunk.outputs else { unreachable!() };
                    launch!(kernels, black_scholes[blocks, 128, chunk.stream](s, k, t, rate, volatility, c, p))
                },
            )
            .unwrap();
        assert_eq!(call, chunk_call, "{device}");
        assert_eq!(put, chunk_put, "{device}");
        assert_eq!(
            (timeline.chunks, timeline.chunk_len),
            (n.div_ceil(211), 211)
        );
        // Three spans per chunk, each inside the run; on one stream, in order.
        assert_eq!(timeline.spans.len(), 3 * timeline.chunks);
        for span in &timeline.spans {
            assert!(span.start <= span.end, "{span:?}");
            assert_eq!(span.stream, span.chunk % 3);
        }
        let kernels_spans = timeline.spans.iter().filter(|s| s.kind == SpanKind::Kernel);
        assert_eq!(kernels_spans.count(), timeline.chunks);
        let (busy, elapsed) = timeline.busy_and_elapsed();
        println!("{device}: busy {busy:?} over {elapsed:?}");
        // The emulator's deferred mode (FERROCUDA_EMU_DEFER) runs a stream's work when it is
        // waited for, so one stream's span may hold another's work, as on a GPU.
        let deferred = std::env::var_os("FERROCUDA_EMU_DEFER").is_some_and(|v| v != "0");
        if !device.is_gpu() || (device.properties().is_emulator() && !deferred) {
            // Work runs when queued: spans never overlap, so they take at most the run's time.
            assert!(busy <= elapsed + std::time::Duration::from_micros(50));
        }
    }
}

#[test]
fn data_sixteen_times_the_memory_limit_runs_in_chunks_under_it() {
    let _serial = support::gpu_alone();
    for device in devices("data_sixteen_times_the_memory_limit") {
        // The case is 1 GiB under a 64 MiB limit; scaled to 64 MiB under 4 MiB on the
        // CPU executor (debug builds interpret every thread) and 1 MiB under 64 KiB on the
        // emulator: the same ratio, the same code.
        let (input_bytes, limit) =
            support::size_for(&device, (64 << 20, 4 << 20), (1 << 20, 64 << 10));
        let capped = device.with_memory_limit(Some(limit));
        let kernels = capped.load(&KERNELS).unwrap();
        let n = input_bytes / 4;
        let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
        let b = vec![0.25f32; n];

        // All at once it does not fit, and the error says what to do.
        let Err(error) = capped.upload(&a) else {
            panic!("{input_bytes} bytes fitted under {limit}")
        };
        let message = error.to_string();
        assert!(
            matches!(error, Error::OutOfMemory { limit: Some(l), .. } if l == limit),
            "{message}"
        );
        assert!(message.contains("ops::Pipeline"), "{message}");

        // Chunked with the default chunk length (from the free memory under the limit).
        capped.reset_peak_memory();
        let mut sum = vec![0.0f32; n];
        let timeline = Pipeline::new(&kernels)
            .streams(2)
            .run(&[&a, &b], &mut [&mut sum], |chunk| {
                let [a, b] = chunk.inputs else { unreachable!() };
                let blocks = chunk.len().div_ceil(256);
                launch!(kernels, vector_add[blocks, 256, chunk.stream](a, b, &mut chunk.outputs[0]))
            })
            .unwrap();
        let peak = capped.peak_memory();
        println!(
            "{device}: {n} elements in {} chunks of {}, peak {peak} bytes under {limit}",
            timeline.chunks, timeline.chunk_len
        );
        assert!(
            0 < peak && peak <= limit,
            "peak {peak} over the limit {limit}"
        );
        assert!(timeline.chunks >= 16);
        for (i, &x) in sum.iter().enumerate() {
            assert_eq!(x, (i % 1000) as f32 + 0.25, "element {i}");
        }
        assert_eq!(capped.memory_in_use(), 0);
    }
}

#[test]
fn a_fault_in_chunk_k_names_it_with_earlier_chunks_written_and_later_ones_untouched() {
    let _serial = support::gpu_alone();
    for device in devices("a_fault_in_chunk_k") {
        let kernels = device.load(support::test_kernels()).unwrap();
        let (n, chunk_len, k) = (100, 16, 3);
        for streams in 1..=3 {
            let mut x: Vec<f32> = (0..n).map(|i| i as f32).collect();
            x[k * chunk_len + 5] = -1.0; // the kernel traps (panics on the CPU) on it
            let untouched = -7.0f32;
            let mut out = vec![untouched; n];
            let error = Pipeline::new(&kernels)
                .chunk_len(chunk_len)
                .streams(streams)
                .run(&[&x], &mut [&mut out], |chunk| {
                    let blocks = chunk.len().div_ceil(32);
                    launch!(kernels, test_kernels::assert_non_negative[blocks, 32, chunk.stream](
                        &chunk.inputs[0],
                        &mut chunk.outputs[0]
                    ))
                })
                .unwrap_err();
            let message = error.to_string();
            println!("{device}, {streams} streams: {message}");
            support::assert_failed_in_chunk(&error, k, chunk_len, &x, &out, untouched);
        }
        // In the short last chunk: its own elements are named.
        let mut x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        x[98] = -1.0;
        let mut out = vec![0.0f32; n];
        let error = Pipeline::new(&kernels)
            .chunk_len(chunk_len)
            .streams(2)
            .run(&[&x], &mut [&mut out], |chunk| {
                launch!(kernels, test_kernels::assert_non_negative[chunk.len().div_ceil(32), 32, chunk.stream](
                    &chunk.inputs[0],
                    &mut chunk.outputs[0]
                ))
            })
            .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("chunk 6 of 7 (elements 96 to 100)"),
            "{message}"
        );
        assert_eq!(&out[..96], &x[..96]);
        // The device carries on.
        let kernels = device.load(&KERNELS).unwrap();
        let ones = vec![1.0f32; 50];
        assert_eq!(
            add_in_chunks(&kernels, &ones, &ones, 16, 2).unwrap(),
            vec![2.0; 50]
        );
    }
}

#[test]
fn bad_shapes_are_errors_before_anything_runs() {
    let _serial = support::gpu_alone();
    let kernels = Device::cpu().load(&KERNELS).unwrap();
    let (a, mut short) = (vec![1.0f32; 10], vec![0.0f32; 9]);
    let body =
        |_: ferrocuda::ops::Chunk<'_, f32>| -> ferrocuda::Result<()> { panic!("must not run") };
    for (pipeline, expect) in [
        (Pipeline::new(&kernels).streams(0), "1 to 16"),
        (Pipeline::new(&kernels).streams(17), "1 to 16"),
        (Pipeline::new(&kernels).chunk_len(0), "chunk length of 0"),
    ] {
        let mut out = vec![0.0f32; 10];
        let error = pipeline.run(&[&a], &mut [&mut out], body).unwrap_err();
        assert!(error.to_string().contains(expect), "{error}");
    }
    let error = Pipeline::new(&kernels)
        .run(&[&a], &mut [&mut short], body)
        .unwrap_err();
    assert!(error.to_string().contains("differ in length"), "{error}");
    let error = Pipeline::new(&kernels)
        .run(&[&a], &mut [], body)
        .unwrap_err();
    assert!(error.to_string().contains("no outputs"), "{error}");
}
