//! ndarray views as kernel arguments (the `ndarray` feature, issue 33): `ArrayView2`/`ArrayView3`
//! as `Array2`/`Array3` inputs and `ArrayViewMut2`/`ArrayViewMut3` as `Out2`/`Out3` outputs, with
//! their shapes and without a copy, on the CPU executor and on a GPU (the PTX emulator in CI),
//! against ndarray's own transpose and indexing; other layouts are a clear error, and
//! `as_standard_layout` the one copy that fixes an input. (`cargo test --workspace` has the
//! feature: the root's dev-dependency on ferrocuda-host asks for it.)

mod support;

use ferrocuda::kernels::transpose_2d::transpose_2d_naive;
use ferrocuda::ndarray::{s, Array, Array2, Array3, ShapeBuilder};
use ferrocuda::{launch, Error, Module};
use test_kernels::arrays::map_3d;

/// A `rows × cols` matrix of random values.
fn random_matrix(rows: usize, cols: usize) -> Array2<f32> {
    let (mut rng, _) = support::rng();
    Array::from_shape_vec((rows, cols), support::random_f32(&mut rng, rows * cols)).unwrap()
}

/// `a`'s transpose by the kernel, from an ndarray view into an ndarray.
fn transpose(module: &Module, a: ferrocuda::Array2<'_, f32>) -> ferrocuda::Result<Array2<f32>> {
    let [rows, cols] = a.shape();
    let mut out = Array2::from_elem((cols, rows), f32::NAN);
    launch!(
        module,
        transpose_2d_naive[(cols.div_ceil(32), rows.div_ceil(8)), (32, 8)](
            a,
            ferrocuda::Out2::try_from(out.view_mut())?
        )
    )?;
    Ok(out)
}

#[test]
fn standard_layout_views_are_kernel_arguments_with_their_shapes() {
    for module in support::on_every_device("standard_layout_views", &ferrocuda::KERNELS) {
        for (rows, cols) in [(1, 1), (3, 70), (33, 65)] {
            let a = random_matrix(rows, cols);
            let view = ferrocuda::Array2::try_from(a.view()).unwrap();
            assert_eq!((view.shape(), view.strides()), ([rows, cols], [cols, 1]));
            let out = transpose(&module, view).unwrap();
            assert_eq!(out, a.t(), "{} {rows} × {cols}", module.device());
        }
        // A view of whole rows is contiguous too: lent as it is.
        let a = random_matrix(10, 7);
        let rows = a.slice(s![2..5, ..]);
        let out = transpose(&module, ferrocuda::Array2::try_from(rows).unwrap()).unwrap();
        assert_eq!(out, rows.t());
    }
}

#[test]
fn three_dimensional_views_map_each_coordinate() {
    let ptx = support::test_kernels();
    for module in support::on_every_device("three_dimensional_views", ptx) {
        let (planes, rows, cols) = (3, 17, 40);
        let (mut rng, seed) = support::rng();
        let a = Array::from_shape_vec(
            (planes, rows, cols),
            support::random_f32(&mut rng, planes * rows * cols),
        )
        .unwrap();
        let mut out = Array3::from_elem((planes, rows, cols), f32::NAN);
        launch!(
            module,
            map_3d[(cols.div_ceil(16), rows.div_ceil(8), planes), (16, 8)](
                ferrocuda::Array3::try_from(a.view()).unwrap(),
                ferrocuda::Out3::try_from(out.view_mut()).unwrap()
            )
        )
        .unwrap();
        for ((p, r, c), &got) in out.indexed_iter() {
            let mark = p as f32 - r as f32 / 8.0 + c as f32 / 64.0;
            assert_eq!(
                got,
                2.0 * a[(p, r, c)] + mark,
                "({p}, {r}, {c}) seed={seed}"
            );
        }
    }
}

#[test]
fn other_layouts_are_errors_that_say_how_to_copy_once() {
    let a = random_matrix(6, 4);
    fn bad_shape(result: ferrocuda::Result<ferrocuda::Array2<'_, f32>>) -> String {
        match result {
            Err(error @ Error::BadShape { .. }) => error.to_string(),
            Err(other) => panic!("expected BadShape, got {other}"),
            Ok(_) => panic!("a view not in standard layout was lent"),
        }
    }
    // Transposed, some columns, every other column, every other row, column-major.
    let fortran = Array2::<f32>::zeros((6, 4).f());
    for view in [
        a.t(),
        a.slice(s![.., 1..3]),
        a.slice(s![.., ..;2]),
        a.slice(s![..;2, ..]),
        fortran.view(),
    ] {
        let message = bad_shape(ferrocuda::Array2::try_from(view));
        assert!(
            message.contains("not in standard layout") && message.contains("as_standard_layout"),
            "{message}"
        );
    }
    let message = bad_shape(ferrocuda::Array2::try_from(a.t()));
    assert!(message.contains("strides [1, 4]"), "{message}");

    // Outputs likewise.
    let mut out = Array2::<f32>::zeros((4, 6));
    let error = ferrocuda::Out2::try_from(out.view_mut().reversed_axes()).err();
    let message = error.expect("a transposed output refused").to_string();
    assert!(
        message.starts_with("Out2::try_from(ArrayViewMut2)") && message.contains("assign"),
        "{message}"
    );

    // The one copy on purpose: `as_standard_layout`, then the kernel transposes it back.
    let module = ferrocuda::Device::cpu().load(&ferrocuda::KERNELS).unwrap();
    let standard = a.t().as_standard_layout().into_owned();
    let back = transpose(
        &module,
        ferrocuda::Array2::try_from(standard.view()).unwrap(),
    )
    .unwrap();
    assert_eq!(back, a);
    // An empty view is standard.
    let empty = Array2::<f32>::zeros((0, 3));
    assert_eq!(
        ferrocuda::Array2::try_from(empty.view()).unwrap().shape(),
        [0, 3]
    );
}
