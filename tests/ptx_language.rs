//! The PTX of test-kernels' `lang` module (tests/kernel_language.rs runs the same kernels on
//! the CPU): each kernel is an `.entry` whose parameters match the host's packing, and ptxas
//! assembles it for sm_70, sm_80 and sm_90.

mod support;

use support::ptx::{assemble_everywhere, packed};

#[test]
fn the_language_kernels_build_to_ptx_that_ptxas_assembles() {
    // test-kernels' `lang` module: parameters named like the generated code's variables, f32
    // methods through the prelude, a padded [[f32; 33]; 32] tile, a kernel-body `const` as a
    // shared size and a `#[pod]` struct by value. Each was a host-only success or a PTX-only
    // failure before.
    use test_kernels::lang::{
        apply_affine, local_const_shared, math_methods, named_like_internals, transpose_padded,
        Affine,
    };
    let ptx = support::test_kernels();
    let info = ptx.info();
    let (x, mut out) = (vec![0.0f32; 3], vec![0.0f32; 3]);
    let map = Affine {
        scale: 1.0,
        offset: 0.0,
        low: 0.0,
        high: 1.0,
        tag: 0,
    };
    let cases = [
        (
            "named_like_internals",
            packed(&named_like_internals, (1u32, &x, &mut out, 1.0f32, 2u32)),
        ),
        ("math_methods", packed(&math_methods, (&x, &mut out))),
        (
            "transpose_padded",
            packed(&transpose_padded, (&x, &mut out, 1u32, 3u32)),
        ),
        (
            "local_const_shared",
            packed(&local_const_shared, (&x, &mut out)),
        ),
        ("apply_affine", packed(&apply_affine, (&x, map, &mut out))),
    ];
    for (name, host) in &cases {
        let entry = info
            .entry(name)
            .unwrap_or_else(|| panic!("{name} not in the test-kernels PTX"));
        assert_eq!(
            *host, entry.param_sizes,
            "{name}: host packing vs PTX .entry"
        );
    }
    // The pod struct is one 20-byte parameter.
    assert_eq!(info.entry("apply_affine").unwrap().param_sizes[2], 20);
    // The methods are ferrocuda's math, not calls to a libm PTX does not have.
    let source = ptx.source();
    let start = source.find(".entry math_methods(").unwrap();
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    for op in ["fma.rn.f32", "sqrt.rn.f32"] {
        assert!(body.contains(op), "math_methods lacks {op}");
    }
    for call in body.lines().filter(|l| l.contains("call")) {
        assert!(call.contains("panic"), "math_methods: {call}");
    }
    for (arch, report) in assemble_everywhere("test-kernels-lang", source) {
        let shared = |name: &str| report.kernel(name).unwrap().shared_bytes;
        assert_eq!(shared("transpose_padded"), 32 * 33 * 4, "{arch}");
        assert_eq!(shared("local_const_shared"), 32 * 4, "{arch}");
        assert_eq!(shared("named_like_internals"), 32 * 4, "{arch}");
        for (name, _) in &cases {
            let kernel = report.kernel(name).unwrap();
            assert_eq!(
                kernel.spill_store_bytes + kernel.spill_load_bytes,
                0,
                "{arch} {name}"
            );
        }
    }
    // The transpose reads and writes its tile with ld.shared/st.shared, element by element.
    let start = source.find(".entry transpose_padded(").unwrap();
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    assert!(body.contains("ld.shared.b32") && body.contains("st.shared.b32"));
}

#[test]
fn the_array_kernels_build_to_ptx_that_ptxas_assembles_and_read_through_the_read_only_cache() {
    // test-kernels' `arrays` module (tests/arrays.rs runs them): 3D views, a 2D input beside a
    // 1D output, a 2D output beside scalars.
    use ferrocuda::{Array2, Array3, Out2, Out3};
    use test_kernels::arrays::{map_3d, row_sums, write_at_2d};
    let ptx = support::test_kernels();
    let info = ptx.info();
    let (x, mut out) = (vec![0.0f32; 6], vec![0.0f32; 6]);
    let (y, mut sums) = (vec![0.0f64; 6], vec![0.0f64; 2]);
    let mut marks = vec![0u32; 6];
    let cases = [
        (
            "map_3d",
            packed(
                &map_3d,
                (
                    Array3::new(&x, 1, 2, 3).unwrap(),
                    Out3::new(&mut out, 1, 2, 3).unwrap(),
                ),
            ),
        ),
        (
            "row_sums",
            packed(&row_sums, (Array2::new(&y, 2, 3).unwrap(), &mut sums)),
        ),
        (
            "write_at_2d",
            packed(
                &write_at_2d,
                (Out2::new(&mut marks, 2, 3).unwrap(), 0u32, 0u32),
            ),
        ),
    ];
    // (pointer, length) + 3 extents + 2 strides per 3D view; + 2 extents + 1 stride per 2D one.
    assert_eq!(cases[0].1, [8; 2 * 7]);
    assert_eq!(cases[1].1, [8; 5 + 2]);
    assert_eq!(cases[2].1, [8, 8, 8, 8, 8, 4, 4]);
    for (name, host) in &cases {
        let entry = info.entry(name).unwrap();
        assert_eq!(
            *host, entry.param_sizes,
            "{name}: host packing vs PTX .entry"
        );
    }
    let source = ptx.source();
    for name in ["map_3d", "row_sums"] {
        let start = source.find(&format!(".entry {name}(")).unwrap();
        let body = &source[start..];
        let body = &body[..body.find("\n}").unwrap()];
        assert!(
            body.contains("ld.global.nc."),
            "{name} reads its input through the cache"
        );
        assert!(!body.contains(".local"), "{name} uses local memory");
    }
    for (arch, report) in assemble_everywhere("test-kernels-arrays", source) {
        for (name, _) in &cases {
            let kernel = report.kernel(name).unwrap();
            assert_eq!(
                kernel.spill_store_bytes + kernel.spill_load_bytes,
                0,
                "{arch} {name}"
            );
            assert_eq!(kernel.stack_frame_bytes, 0, "{arch} {name}");
        }
    }
}
