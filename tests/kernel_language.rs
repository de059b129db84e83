//! The language surface of kernels, on the CPU executor in checked mode (and on a GPU when there
//! is one), against references:
//! parameter names the generated code also uses, `f32` methods through the prelude, padded 2D
//! shared tiles, a kernel-body `const` as a shared size, and a `#[pod]` struct by value.
//! tests/ptx.rs checks that the same kernels build to PTX that ptxas assembles.

mod support;

use ferrocuda::{launch, Module};
use ferrocuda_std::math;
use test_kernels::lang::{
    apply_affine, local_const_shared, math_methods, named_like_internals, transpose_padded, Affine,
    METHOD_OUTPUTS, NAMED_BLOCK, TILE,
};

fn modules(test: &str) -> Vec<Module> {
    support::on_every_device(test, support::test_kernels())
}

/// Element `i` of a launch over blocks of `NAMED_BLOCK` that mirror each block: the input index
/// whose value lands at `i`.
fn mirror(i: usize) -> usize {
    let b = NAMED_BLOCK as usize;
    i - i % b + (b - 1 - i % b)
}

#[test]
fn parameters_named_block_params_grid_args_address_work() {
    for module in modules("parameters_named_block_params_grid_args_address_work") {
        parameters_named_block_params_grid_args_address_work_on(&module);
    }
}

fn parameters_named_block_params_grid_args_address_work_on(module: &Module) {
    let (mut rng, seed) = support::rng();
    for n in [1usize, 31, 32, 100] {
        // The caller's variables carry the same names, through `launch!`.
        let params = support::random_f32(&mut rng, n);
        let mut grid = vec![f32::NAN; n];
        let (block, args, address) = (3u32, 0.5f32, 7u32);
        let blocks = n.div_ceil(NAMED_BLOCK as usize);
        launch!(
            module,
            named_like_internals[blocks, NAMED_BLOCK](block, &params, &mut grid, args, address)
        )
        .unwrap();
        for (i, &got) in grid.iter().enumerate() {
            let j = mirror(i);
            let value = if j < n {
                params[j] * args + block as f32
            } else {
                0.0
            };
            assert_eq!(got, value + address as f32, "n={n} i={i} seed={seed}");
        }
    }
}

#[test]
fn f32_methods_from_the_prelude_run_on_every_device() {
    for module in modules("f32_methods_from_the_prelude_run_on_every_device") {
        f32_methods_from_the_prelude_run_on_every_device_on(&module);
    }
}

fn f32_methods_from_the_prelude_run_on_every_device_on(module: &Module) {
    let x: Vec<f32> = vec![0.5, 1.0, 2.5, 10.0, 0.001, 37.25, 1e-30, 88.0];
    let mut out = vec![f32::NAN; METHOD_OUTPUTS * x.len()];
    launch!(module, math_methods[1, 32](&x, &mut out)).unwrap();
    for (i, &v) in x.iter().enumerate() {
        let got = &out[METHOD_OUTPUTS * i..METHOD_OUTPUTS * (i + 1)];
        // ferrocuda-std's default tier on both (`#[kernel]` routes the methods to
        // `math::DeviceMath`, tests/math_methods.rs); on the GPU exp, exp2 use `ex2.approx`:
        // within 3 ULP of the f64 reference.
        let v64 = v as f64;
        for (k, reference) in [(0, v64.exp()), (1, v64.exp2()), (2, v64.ln())] {
            let ulp = f32::EPSILON as f64 * reference.abs().max(f32::MIN_POSITIVE as f64);
            assert!(
                (got[k] as f64 - reference).abs() <= 3.0 * ulp,
                "{k} of {v}: {} vs {reference}",
                got[k]
            );
        }
        // Correctly rounded everywhere, or the trait's own and free of approximate
        // instructions on both targets: the same bits as the functions.
        let exact = [
            math::sqrt(v),
            math::fma(v, v, v),
            math::sinpi(v),
            math::cospi(v),
        ];
        for (k, want) in exact.iter().enumerate() {
            assert_eq!(got[3 + k].to_bits(), want.to_bits(), "{} of {v}", 3 + k);
        }
        // normal_cdf: the default tier, within its GPU bound (6 ULP) of the reference.
        let phi = 0.5 * libm::erfc(-v64 / std::f64::consts::SQRT_2);
        let ulp = f32::EPSILON as f64 * phi.abs().max(f32::MIN_POSITIVE as f64);
        assert!(
            (got[7] as f64 - phi).abs() <= 6.0 * ulp,
            "normal_cdf({v}): {} vs {phi}",
            got[7]
        );
    }
}

#[test]
fn a_padded_2d_shared_tile_transposes_in_checked_mode() {
    for module in modules("a_padded_2d_shared_tile_transposes_in_checked_mode") {
        a_padded_2d_shared_tile_transposes_in_checked_mode_on(&module);
    }
}

fn a_padded_2d_shared_tile_transposes_in_checked_mode_on(module: &Module) {
    let (mut rng, seed) = support::rng();
    for (rows, cols, block_y) in [
        (1usize, 1usize, 8u32),
        (32, 32, 8),
        (45, 70, 8),
        (64, 33, 32),
    ] {
        let input = support::random_f32(&mut rng, rows * cols);
        let mut out = vec![f32::NAN; rows * cols];
        let grid = (cols.div_ceil(TILE), rows.div_ceil(TILE));
        launch!(
            module,
            transpose_padded[grid, (TILE, block_y)](&input, &mut out, rows as u32, cols as u32)
        )
        .unwrap();
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(
                    out[c * rows + r],
                    input[r * cols + c],
                    "{rows}x{cols} at ({r}, {c}) seed={seed}"
                );
            }
        }
    }
}

#[test]
fn a_const_of_the_kernel_body_sizes_a_shared_array() {
    for module in modules("a_const_of_the_kernel_body_sizes_a_shared_array") {
        a_const_of_the_kernel_body_sizes_a_shared_array_on(&module);
    }
}

fn a_const_of_the_kernel_body_sizes_a_shared_array_on(module: &Module) {
    let (mut rng, seed) = support::rng();
    for n in [5usize, 32, 96] {
        let x = support::random_f32(&mut rng, n);
        let mut out = vec![f32::NAN; n];
        launch!(
            module,
            local_const_shared[n.div_ceil(32), NAMED_BLOCK](&x, &mut out)
        )
        .unwrap();
        for (i, &got) in out.iter().enumerate() {
            let j = mirror(i);
            let want = if j < n { x[j] } else { 0.0 };
            assert_eq!(got, want, "n={n} i={i} seed={seed}");
        }
    }
}

#[test]
fn a_pod_struct_is_a_kernel_parameter_by_value() {
    for module in modules("a_pod_struct_is_a_kernel_parameter_by_value") {
        a_pod_struct_is_a_kernel_parameter_by_value_on(&module);
    }
}

fn a_pod_struct_is_a_kernel_parameter_by_value_on(module: &Module) {
    let x: Vec<f32> = (0..100).map(|i| i as f32 - 50.0).collect();
    let map = Affine {
        scale: 0.5,
        offset: 1.0,
        low: -10.0,
        high: 12.0,
        tag: 1000,
    };
    // `#[pod]` made it Copy (used twice below) and plain data.
    let copy = map;
    assert_eq!(bytemuck::bytes_of(&copy).len(), 20);
    let mut out = vec![f32::NAN; 2 * x.len()];
    launch!(module, apply_affine[1, 128](&x, map, &mut out)).unwrap();
    for (i, &v) in x.iter().enumerate() {
        let want = v.mul_add(map.scale, map.offset).clamp(map.low, map.high);
        assert_eq!(out[2 * i], want, "i={i}");
        assert_eq!(out[2 * i + 1], (i as u32 + map.tag) as f32, "i={i}");
    }
}
