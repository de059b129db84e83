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
