//! Issue 30, point 7: kernels that index in `i32` and `u32` as CUDA code does, and update their
//! own element with `*out.at(i) += v`, on the CPU executor (both paths: scripts/test.sh runs
//! this again on coroutines) and on a GPU (the PTX emulator in CI), against an f64 reference; a
//! negative index is an error that says so.

mod support;

use ferrocuda::{launch, Error};
use test_kernels::porting::{
    read_shifted_i32, smooth_i32, transpose_tiles_i32, with_flags, SMOOTH_BLOCK, TILE,
};

#[test]
fn i32_and_u32_indices_and_in_place_updates_match_the_reference() {
    for module in support::on_every_device(
        "i32_and_u32_indices_and_in_place_updates_match_the_reference",
        support::test_kernels(),
    ) {
        let (mut rng, seed) = support::rng();
        for n in [1usize, 127, 128, 1000] {
            let x = support::random_f32(&mut rng, n);
            let before = support::random_f32(&mut rng, n + 3);
            let mut out = before.clone();
            let blocks = (n as u32).div_ceil(SMOOTH_BLOCK);
            launch!(module, smooth_i32[blocks, SMOOTH_BLOCK](&x, &mut out, n as i32)).unwrap();
            let at = |i: isize| match usize::try_from(i) {
                Ok(i) if i < n => x[i] as f64,
                _ => 0.0,
            };
            for i in 0..n + 3 {
                let want = match i < n {
                    true => {
                        before[i] as f64
                            + 2.0 * at(i as isize)
                            + at(i as isize - 1)
                            + at(i as isize + 1)
                    }
                    false => before[i] as f64, // past n: untouched
                };
                let bound = 4.0 * f32::EPSILON as f64 * (want.abs() + 400.0);
                assert!(
                    (out[i] as f64 - want).abs() <= bound,
                    "{}: n={n} i={i} seed={seed}: {} vs {want}",
                    module.device(),
                    out[i]
                );
            }
        }
    }
}

#[test]
fn a_negative_i32_index_is_an_error_saying_it_was_negative() {
    let module = ferrocuda::Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    let x = vec![1.0f32; 64];
    let mut out = vec![0.0f32; 64];
    launch!(module, read_shifted_i32[1, 64](&x, &mut out, 0)).unwrap();
    assert_eq!(out, x);
    let error = launch!(module, read_shifted_i32[1, 64](&x, &mut out, -1)).unwrap_err();
    let Error::KernelPanicked {
        thread, message, ..
    } = &error
    else {
        panic!("{error}");
    };
    assert_eq!(thread.x, 0, "{error}");
    assert!(message.contains("a negative index (-1)"), "{message}");
}

/// Issue 30, point 7: 2D shared tiles indexed in `i32` (`Shared::get2`/`set2`), on every device,
/// against the transpose done on the host; a negative tile row is an error that says so.
#[test]
fn i32_indexed_shared_tiles_transpose_and_a_negative_row_is_reported() {
    const TEST: &str = "i32_indexed_shared_tiles_transpose_and_a_negative_row_is_reported";
    let (tiles_x, tiles_y) = (3usize, 2usize);
    let width = tiles_x * TILE;
    let x = support::random_f32(&mut support::rng().0, width * tiles_y * TILE);
    let mut want = vec![0.0f32; x.len()];
    for (k, w) in want.iter_mut().enumerate() {
        let (row, col) = (k / width, k % width);
        let (r0, c0) = (row - row % TILE, col - col % TILE);
        *w = x[(r0 + col % TILE) * width + c0 + row % TILE];
    }
    let grid = (tiles_x as u32, tiles_y as u32);
    for module in support::on_every_device(TEST, support::test_kernels()) {
        let mut out = vec![0.0f32; x.len()];
        launch!(module, transpose_tiles_i32[grid, (TILE, TILE)](&x, &mut out, width as i32, 0))
            .unwrap();
        assert_eq!(out, want, "{}", module.device());
    }
    let module = ferrocuda::Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    let mut out = vec![0.0f32; x.len()];
    let error =
        launch!(module, transpose_tiles_i32[grid, (TILE, TILE)](&x, &mut out, width as i32, -1))
            .unwrap_err();
    let Error::KernelPanicked { message, .. } = &error else {
        panic!("{error}");
    };
    assert!(
        message.contains("the rows of a shared array") && message.contains("a negative index (-1)"),
        "{message}"
    );
}

/// Issue 30, point 5: `bool` parameters (one byte each, made a `bool` by `!= 0`), on every
/// device and CPU path.
#[test]
fn bool_parameters_reach_the_kernel() {
    for module in
        support::on_every_device("bool_parameters_reach_the_kernel", support::test_kernels())
    {
        let x = support::random_f32(&mut support::rng().0, 300);
        for (negate, apply) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut out = vec![0.0f32; x.len()];
            launch!(module, with_flags[3, 128](&x, negate, 2.0, apply, &mut out)).unwrap();
            let want: Vec<f32> = x
                .iter()
                .map(|&v| match (negate, apply) {
                    (_, false) => v,
                    (true, true) => -v * 2.0,
                    (false, true) => v * 2.0,
                })
                .collect();
            assert_eq!(
                out,
                want,
                "{}: negate={negate} apply={apply}",
                module.device()
            );
        }
    }
}

/// Issue 30, point 4: two kernels of one name in different modules (`name = "..."` gives one
/// another PTX entry), each launched by its path, on every device.
#[test]
fn kernels_of_one_name_in_two_modules_are_launched_by_their_paths() {
    for module in support::on_every_device(
        "kernels_of_one_name_in_two_modules_are_launched_by_their_paths",
        support::test_kernels(),
    ) {
        let x: Vec<f32> = (0..65).map(|i| i as f32).collect();
        let mut out = vec![0.0f32; 64];
        launch!(module, test_kernels::porting::add_next[1, 64](&x[..64], &mut out)).unwrap();
        assert!(
            out.iter().zip(&x).all(|(&o, &v)| o == v + 1.0),
            "{}: {out:?}",
            module.device()
        );
        launch!(module, test_kernels::add_next[1, 64](&x, &mut out)).unwrap();
        assert!(
            out.iter().enumerate().all(|(i, &o)| o == x[i] + x[i + 1]),
            "{}",
            module.device()
        );
    }
    assert_eq!(
        test_kernels::porting::add_next.info().name,
        "porting_add_next"
    );
    assert_eq!(test_kernels::add_next.info().name, "add_next");
}
