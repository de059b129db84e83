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
    d.launch(library(), "dot_partial", [blocks, 1, 1], [256, 1, 1], 0, &[Arg::Slice(ba), Arg::Slice(bb), Arg::Slice(partial)]).unwrap();
    let total = d.zeros::<f32>(1);
    d.launch(library(), "sum_partial", [1, 1, 1], [32, 1, 1], 0, &[Arg::Slice(partial), Arg::Slice(total)]).unwrap();
    let want: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let l1: f64 = a.iter().zip(&b).map(|(x, y)| (*x as f64 * *y as f64).abs()).sum();
    let got = d.download::<f32>(total)[0] as f64;
    assert!((got - want).abs() <= 1e-5 * l1, "dot: got {got}, want {want}");
}

#[test]
fn transpose_tiled_and_naive() {
    let d = Device::new();
    let (rows, cols) = (70u32, 45u32);
    let input = random_f32(5, (rows * cols) as usize);
    let (bi, out) = (d.upload(&input), d.zeros::<f32>(input.len()));
    let want: Vec<f32> = (0..cols * rows).map(|i| input[((i % rows) * cols + i / rows) as usize]).collect();
    let grid = [cols.div_ceil(32), rows.div_ceil(32), 1];
    let args = [Arg::Slice(bi), Arg::Slice(out), value(rows), value(cols)];
    d.launch(library(), "transpose_tiled", grid, [32, 8, 1], 0, &args).unwrap();
    assert_eq!(d.download::<f32>(out), want, "transpose_tiled");
    d.memory.fill(out.addr, &[0], out.len * 4).unwrap();
    d.launch(library(), "transpose_naive", [cols.div_ceil(16), rows.div_ceil(16), 1], [16, 16, 1], 0, &args).unwrap();
    assert_eq!(d.download::<f32>(out), want, "transpose_naive");
}

#[test]
fn matmul_naive_tiled_and_blocked() {
    let d = Device::new();
    let (m, n, k) = (67u32, 130u32, 33u32);
    let (a, b) = (random_f32(6, (m * k) as usize), random_f32(7, (k * n) as usize));
    let (ba, bb, c) = (d.upload(&a), d.upload(&b), d.zeros::<f32>((m * n) as usize));
    let want: Vec<f64> = (0..m * n)
        .map(|i| (0..k).map(|p| a[(i / n * k + p) as usize] as f64 * b[(p * n + i % n) as usize] as f64).sum())
        .collect();
    let args = [Arg::Slice(ba), Arg::Slice(bb), Arg::Slice(c), value(m), value(n), value(k)];
    for (kernel, grid, block) in [
        ("matmul_naive", [n.div_ceil(16), m.div_ceil(16), 1], [16, 16, 1]),
        ("matmul_tiled", [n.div_ceil(16), m.div_ceil(16), 1], [16, 16, 1]),
        ("matmul_blocked", [n.div_ceil(128), m.div_ceil(128), 1], [256, 1, 1]),
    ] {
        d.memory.fill(c.addr, &[0], c.len * 4).unwrap();
        d.launch(library(), kernel, grid, block, 0, &args).unwrap_or_else(|f| panic!("{kernel}: {f}"));
        assert_close(&d.download(c), &want, 1e-5 * k as f64, kernel);
    }
}
