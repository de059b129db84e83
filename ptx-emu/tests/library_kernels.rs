//! The library's real kernels (gpu-kernels' PTX) run through the emulator and compared with
//! CPU references computed in f64.

mod support;

use support::*;

#[test]
fn vector_add_and_saxpy() {
    let d = Device::new();
    let n = 10_000;
    let (a, b) = (random_f32(1, n), random_f32(2, n));
    let (ba, bb, out) = (d.upload(&a), d.upload(&b), d.zeros::<f32>(n));
    let grid = [(n as u32).div_ceil(256), 1, 1];
    let stats = d
        .launch(
            library(),
            "vector_add",
            grid,
            [256, 1, 1],
            0,
            &[Arg::Slice(ba), Arg::Slice(bb), Arg::Slice(out)],
        )
        .unwrap();
    let want: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| *x as f64 + *y as f64)
        .collect();
    assert_close(&d.download(out), &want, 1e-7, "vector_add");
    assert!(stats.instructions > n as u64 * 5, "{stats:?}");

    let alpha = 1.5f32;
    d.launch(
        library(),
        "saxpy",
        grid,
        [256, 1, 1],
        0,
        &[value(alpha), Arg::Slice(ba), Arg::Slice(out)],
    )
    .unwrap();
    let want: Vec<f64> = a
        .iter()
        .zip(&want)
        .map(|(x, y)| alpha as f64 * *x as f64 + y)
        .collect();
    assert_close(&d.download(out), &want, 1e-6, "saxpy");
}

/// dot_partial then sum_partial (the library's two-pass dot product), as `ops::dot` launches them.
#[test]
fn dot_and_sum_partials() {
    let d = Device::new();
    let n = 50_001;
    let (a, b) = (random_f32(3, n), random_f32(4, n));
    let blocks = 24u32;
    let (ba, bb, partial) = (d.upload(&a), d.upload(&b), d.zeros::<f32>(blocks as usize));
    d.launch(
        library(),
        "dot_partial",
        [blocks, 1, 1],
        [256, 1, 1],
        0,
        &[Arg::Slice(ba), Arg::Slice(bb), Arg::Slice(partial)],
    )
    .unwrap();
    let total = d.zeros::<f32>(1);
    d.launch(
        library(),
        "sum_partial",
        [1, 1, 1],
        [32, 1, 1],
        0,
        &[Arg::Slice(partial), Arg::Slice(total)],
    )
    .unwrap();
    let want: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let l1: f64 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (*x as f64 * *y as f64).abs())
        .sum();
    let got = d.download::<f32>(total)[0] as f64;
    assert!(
        (got - want).abs() <= 1e-5 * l1,
        "dot: got {got}, want {want}"
    );
}

#[test]
fn transpose_tiled_and_naive() {
    let d = Device::new();
    let (rows, cols) = (70u32, 45u32);
    let input = random_f32(5, (rows * cols) as usize);
    let (bi, out) = (d.upload(&input), d.zeros::<f32>(input.len()));
    let want: Vec<f32> = (0..cols * rows)
        .map(|i| input[((i % rows) * cols + i / rows) as usize])
        .collect();
    let grid = [cols.div_ceil(32), rows.div_ceil(32), 1];
    let args = [Arg::Slice(bi), Arg::Slice(out), value(rows), value(cols)];
    d.launch(library(), "transpose_tiled", grid, [32, 8, 1], 0, &args)
        .unwrap();
    assert_eq!(d.download::<f32>(out), want, "transpose_tiled");
    d.memory.fill(out.addr, &[0], out.len * 4).unwrap();
    d.launch(
        library(),
        "transpose_naive",
        [cols.div_ceil(16), rows.div_ceil(16), 1],
        [16, 16, 1],
        0,
        &args,
    )
    .unwrap();
    assert_eq!(d.download::<f32>(out), want, "transpose_naive");
}

#[test]
fn matmul_naive_tiled_and_blocked() {
    let d = Device::new();
    let (m, n, k) = (67u32, 130u32, 33u32);
    let (a, b) = (
        random_f32(6, (m * k) as usize),
        random_f32(7, (k * n) as usize),
    );
    let (ba, bb, c) = (d.upload(&a), d.upload(&b), d.zeros::<f32>((m * n) as usize));
    let want: Vec<f64> = (0..m * n)
        .map(|i| {
            (0..k)
                .map(|p| a[(i / n * k + p) as usize] as f64 * b[(p * n + i % n) as usize] as f64)
                .sum()
        })
        .collect();
    let args = [
        Arg::Slice(ba),
        Arg::Slice(bb),
        Arg::Slice(c),
        value(m),
        value(n),
        value(k),
    ];
    for (kernel, grid, block) in [
        (
            "matmul_naive",
            [n.div_ceil(16), m.div_ceil(16), 1],
            [16, 16, 1],
        ),
        (
            "matmul_tiled",
            [n.div_ceil(16), m.div_ceil(16), 1],
            [16, 16, 1],
        ),
        (
            "matmul_blocked",
            [n.div_ceil(128), m.div_ceil(128), 1],
            [256, 1, 1],
        ),
    ] {
        d.memory.fill(c.addr, &[0], c.len * 4).unwrap();
        d.launch(library(), kernel, grid, block, 0, &args)
            .unwrap_or_else(|f| panic!("{kernel}: {f}"));
        assert_close(&d.download(c), &want, 1e-5 * k as f64, kernel);
    }
}

#[test]
fn every_instruction_of_our_kernels_is_implemented() {
    assert_eq!(library().unsupported(), Vec::<String>::new());
    assert_eq!(test_kernels().unsupported(), Vec::<String>::new());
    assert!(
        library().kernel_names().len() >= 20,
        "{:?}",
        library().kernel_names()
    );
}

#[test]
fn histogram_with_dynamic_shared_memory() {
    let d = Device::new();
    let (n, bins) = (20_000, 37usize);
    let x = random_f32(8, n);
    let (lo, hi) = (-0.9f32, 0.8f32);
    let (bx, counts) = (d.upload(&x), d.zeros::<u32>(bins));
    let args = [Arg::Slice(bx), Arg::Slice(counts), value(lo), value(hi)];
    d.launch(
        library(),
        "histogram",
        [8, 1, 1],
        [256, 1, 1],
        (bins * 4) as u32,
        &args,
    )
    .unwrap();
    let mut want = vec![0u32; bins];
    for v in x {
        if let Some(bin) = ferrocuda_kernels::histogram::bin_of(v, lo, hi, bins) {
            want[bin] += 1;
        }
    }
    assert_eq!(d.download::<u32>(counts), want);
    // Too little dynamic shared memory for the bins: the kernel's own bounds check (it reads
    // %dynamic_smem_size) traps; not a silent wrong count.
    let fault = d
        .launch(library(), "histogram", [8, 1, 1], [256, 1, 1], 64, &args)
        .unwrap_err();
    assert_eq!(fault.kind, ferrocuda_ptx_emu::FaultKind::Trap, "{fault}");
}

#[test]
fn black_scholes_matches_the_host_build_of_the_same_function() {
    let d = Device::new();
    let n = 3000;
    let spot: Vec<f32> = random_f32(9, n).iter().map(|v| 100.0 + 50.0 * v).collect();
    let strike: Vec<f32> = random_f32(10, n).iter().map(|v| 100.0 + 40.0 * v).collect();
    let years: Vec<f32> = random_f32(11, n).iter().map(|v| 1.0 + 0.9 * v).collect();
    let (rate, vol) = (0.03f32, 0.25f32);
    let (bs, bk, by) = (d.upload(&spot), d.upload(&strike), d.upload(&years));
    let (call, put) = (d.zeros::<f32>(n), d.zeros::<f32>(n));
    let args = [
        Arg::Slice(bs),
        Arg::Slice(bk),
        Arg::Slice(by),
        value(rate),
        value(vol),
        Arg::Slice(call),
        Arg::Slice(put),
    ];
    d.launch(library(), "black_scholes", [4, 1, 1], [256, 1, 1], 0, &args)
        .unwrap();
    let (call, put) = (d.download::<f32>(call), d.download::<f32>(put));
    for i in 0..n {
        let (c, p) = ferrocuda_kernels::finance::black_scholes_prices(
            spot[i], strike[i], years[i], rate, vol,
        );
        assert!(
            (call[i] - c).abs() <= 1e-4 * c.abs().max(1.0),
            "call[{i}]: {} vs host {c}",
            call[i]
        );
        assert!(
            (put[i] - p).abs() <= 1e-4 * p.abs().max(1.0),
            "put[{i}]: {} vs host {p}",
            put[i]
        );
        // Put-call parity, independently of both builds: C - P = S - K e^{-rT}.
        let parity = spot[i] as f64 - strike[i] as f64 * (-(rate as f64) * years[i] as f64).exp();
        assert!(
            ((call[i] - put[i]) as f64 - parity).abs() < 2e-3 * spot[i] as f64,
            "parity at {i}"
        );
    }
}

#[test]
fn monte_carlo_pi_counts_exactly_what_the_host_counts() {
    let d = Device::new();
    let (samples, seed) = (100_001u64, 42u64);
    let hits = d.zeros::<u64>(1);
    d.launch(
        library(),
        "monte_carlo_pi",
        [6, 1, 1],
        [256, 1, 1],
        0,
        &[value(samples), value(seed), Arg::Slice(hits)],
    )
    .unwrap();
    let rng = ferrocuda_std::random::Philox4x32::from_seed(seed);
    let stream = ferrocuda_kernels::monte_carlo::PI_STREAM;
    let inside = ferrocuda_kernels::monte_carlo::in_quarter_disk;
    let want: u64 = (0..samples.div_ceil(2))
        .map(|i| {
            let [a, b, c, e] = rng.block_at(i, stream);
            inside(a, b) as u64 + (2 * i + 1 < samples && inside(c, e)) as u64
        })
        .sum();
    assert_eq!(d.download::<u64>(hits)[0], want);
    let pi = 4.0 * want as f64 / samples as f64;
    assert!((pi - std::f64::consts::PI).abs() < 0.02, "{pi}");
}

#[test]
fn statistics_partial_and_merge() {
    let d = Device::new();
    let n = 30_000;
    let x: Vec<f32> = random_f32(12, n).iter().map(|v| 3.0 + 2.0 * v).collect();
    let blocks = 10u32;
    let (bx, partial, out) = (
        d.upload(&x),
        d.zeros::<f64>(5 * blocks as usize),
        d.zeros::<f64>(5),
    );
    d.launch(
        library(),
        "statistics_partial",
        [blocks, 1, 1],
        [256, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Slice(partial)],
    )
    .unwrap();
    d.launch(
        library(),
        "statistics_merge",
        [1, 1, 1],
        [32, 1, 1],
        0,
        &[Arg::Slice(partial), Arg::Slice(out)],
    )
    .unwrap();
    let got = d.download::<f64>(out);
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    let m2: f64 = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
    let min = x.iter().copied().fold(f32::INFINITY, f32::min) as f64;
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    assert_eq!(got[0], n as f64);
    assert!(
        (got[1] - mean).abs() < 1e-9 * mean.abs(),
        "mean {} vs {mean}",
        got[1]
    );
    assert!((got[2] - m2).abs() < 1e-6 * m2, "M2 {} vs {m2}", got[2]);
    assert_eq!((got[3], got[4]), (min, max));
}

#[test]
fn group_by_shared_and_global() {
    let d = Device::new();
    let (n, k) = (20_000usize, 50usize);
    let keys: Vec<u32> = random_f32(13, n)
        .iter()
        .map(|v| ((v + 1.0) * 26.0) as u32)
        .collect(); // some >= k
    let values = random_f32(14, n);
    let mut want_count = vec![0u32; k];
    let mut want_sum = vec![0f64; k];
    let mut rejected = 0;
    for (&key, &v) in keys.iter().zip(&values) {
        if (key as usize) < k {
            want_count[key as usize] += 1;
            want_sum[key as usize] += v as f64;
        } else {
            rejected += 1;
        }
    }
    assert!(rejected > 0);
    for (kernel, shared) in [("group_by_shared", 16 * k as u32), ("group_by_global", 0)] {
        let (bk, bv) = (d.upload(&keys), d.upload(&values));
        let (count, sum, lowest, highest) = (
            d.zeros::<u32>(k),
            d.zeros::<f32>(k),
            d.zeros::<u32>(k),
            d.zeros::<u32>(k),
        );
        let reject = d.zeros::<u64>(4);
        let args = [
            Arg::Slice(bk),
            Arg::Slice(bv),
            Arg::Slice(count),
            Arg::Slice(sum),
            Arg::Slice(lowest),
            Arg::Slice(highest),
            Arg::Slice(reject),
        ];
        d.launch(library(), kernel, [8, 1, 1], [256, 1, 1], shared, &args)
            .unwrap_or_else(|f| panic!("{kernel}: {f}"));
        assert_eq!(d.download::<u32>(count), want_count, "{kernel} count");
        let sums: Vec<f32> = d.download(sum);
        assert_close(&sums, &want_sum, 1e-4, kernel);
        let (low, high) = (d.download::<u32>(lowest), d.download::<u32>(highest));
        for g in 0..k {
            let group = || {
                keys.iter()
                    .zip(&values)
                    .filter(|(&key, _)| key as usize == g)
                    .map(|(_, &v)| v)
            };
            let (min, max) = (
                group().fold(f32::INFINITY, f32::min),
                group().fold(f32::NEG_INFINITY, f32::max),
            );
            assert_eq!(
                ferrocuda_kernels::group_by::from_order_key(!low[g]),
                min,
                "{kernel} min of {g}"
            );
            assert_eq!(
                ferrocuda_kernels::group_by::from_order_key(high[g]),
                max,
                "{kernel} max of {g}"
            );
        }
    }
}
