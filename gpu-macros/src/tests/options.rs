//! The `#[kernel(...)]` options: `same_len`, `len`, `index32`, `transposed`, `name`.

use super::support::{error_of, expand_str};

#[test]
fn same_len_must_name_slices_or_outputs() {
    let item = "pub fn k(n: u32, x: &[f32], y: Out<f32>) {}";
    assert!(error_of("same_len(x, z)", item).contains("no kernel parameter named `z`"));
    assert!(error_of("same_len(n, x)", item).contains("`n` is not a slice or an output"));
    assert!(error_of("same_len(x)", item).contains("at least two"));
    assert!(error_of("same_size(x, y)", item).contains("unknown #[kernel] option"));
    assert!(expand_str("same_len(x, y)", item).is_ok());
}

#[test]
fn len_takes_a_slice_and_u32_factors_and_block_a_shape() {
    let item = "pub fn k(n: u32, m: u32, w: u64, x: &[f32], y: Out<f32>) {}";
    assert!(error_of("len(x = n * z)", item).contains("no kernel parameter named `z`"));
    assert!(error_of("len(n = m)", item).contains("`len` takes a `&[T]` or `Out<T>`"));
    assert!(error_of("len(x = n * w)", item).contains("`w` is not a `u32` parameter"));
    assert!(error_of("len(x = n * y)", item).contains("`y` is not a `u32` parameter"));
    assert!(error_of("len(x = n m)", item).contains("expected `len(x = a * b)`"));
    assert!(error_of("block(1, 2, 3, 4)", item).contains("1 to 3 constant sizes"));
    assert!(error_of("block(32), block(32)", item).contains("1 to 3 constant sizes"));
    // The launch gets the rules as parameter indices and the shape with missing sizes 1; the
    // entries get them as facts.
    let code = expand_str("len(y = n * m), block(32, 8)", item).unwrap();
    assert!(
        code.contains("with_len_products (& [:: ferrocuda_std :: abi :: LenProduct :: new (4usize , & [0usize , 1usize])])"),
        "{code}"
    );
    assert!(
        code.contains(
            "with_block (:: ferrocuda_std :: Dim3 :: new ((32) as u32 , (8) as u32 , (1) as u32))"
        ),
        "{code}"
    );
    assert!(
        code.contains(
            "y . len () as u64 == 1u64 . wrapping_mul (n as u64) . wrapping_mul (m as u64)"
        ),
        "{code}"
    );
    assert_eq!(
        code.matches("assert_unchecked (__ferrocuda_block ==")
            .count(),
        1,
        "{code}"
    );
}

#[test]
fn index32_takes_2d_and_3d_views_and_narrows_them_in_both_entries() {
    let item = "pub fn k(a: Array2<f32>, x: &[f32], out: Out3<u8>, n: u32) {}";
    for not_a_view in ["x", "n"] {
        let message = error_of(&format!("index32({not_a_view})"), item);
        assert!(
            message.contains("`index32` takes 2D and 3D views"),
            "{message}"
        );
    }
    assert!(error_of("index32()", item).contains("needs at least one 2D or 3D view"));
    assert!(error_of("index32(b)", item).contains("no kernel parameter named `b`"));
    let code = expand_str("index32(a, out)", item).unwrap();
    // The launch checks parameters 0 and 2; the PTX and the CPU entry each narrow both views.
    assert!(
        code.contains("with_index32 (& [0usize , 2usize])"),
        "{code}"
    );
    for view in ["a", "out"] {
        let narrow = format!("{{ {view} . assume_index32 () }}");
        assert_eq!(code.matches(&narrow).count(), 2, "{view}: {code}");
    }
    assert!(!expand_str("", item).unwrap().contains("assume_index32"));
}

#[test]
fn transposed_takes_two_2d_views_and_states_their_shapes_in_both_entries() {
    let item = "pub fn k(a: Array2<f32>, x: &[f32], out: Out2<f32>, c: Out3<u8>, n: u32) {}";
    for (option, not_2d) in [
        ("transposed(out, x)", "x"),
        ("transposed(n, a)", "n"),
        ("transposed(c, a)", "c"),
    ] {
        let message = error_of(option, item);
        assert!(
            message.contains(&format!(
                "`transposed` takes 2D views (`Array2<T>`, `Out2<T>`), and `{not_2d}` is not one"
            )),
            "{option}: {message}"
        );
    }
    for wrong in ["transposed(out)", "transposed(out, a, x)", "transposed()"] {
        let message = error_of(wrong, item);
        assert!(
            message.contains("`transposed` takes two 2D views"),
            "{wrong}: {message}"
        );
    }
    assert!(error_of("transposed(out, b)", item).contains("no kernel parameter named `b`"));
    let code = expand_str("transposed(out, a)", item).unwrap();
    // The launch checks the pair (parameters 2 and 0); the PTX entry, the CPU entry and the
    // elementwise path's three split functions (checked, unchecked, AVX2) each state the fact.
    assert!(
        code.contains("with_transposed (& [(2usize , 0usize)])"),
        "{code}"
    );
    let fact = "assert_unchecked (out . rows () == a . cols () && out . cols () == a . rows () ,)";
    assert_eq!(code.matches(fact).count(), 5, "{code}");
    let plain = expand_str("", item).unwrap();
    assert!(!plain.contains("with_transposed") && !plain.contains("out . rows ()"));
}

#[test]
fn name_sets_the_ptx_entry_and_must_be_an_identifier() {
    let code = expand_str(
        "name = \"stats_mean\"",
        "pub fn mean(out: Out<f32>) { let _ = out; }",
    )
    .unwrap();
    assert!(
        code.contains("extern \"ptx-kernel\" fn stats_mean"),
        "{code}"
    );
    assert!(code.contains("const mean"), "{code}");
    assert!(error_of("name = \"not an ident\"", "pub fn k() {}").contains("Rust identifier"));
    assert!(error_of("name = \"a\", name = \"b\"", "pub fn k() {}").contains("twice"));
    let generic = error_of(
        "instances(f32), name = \"x\"",
        "pub fn k<T: Number>(out: Out<T>) { let _ = out; }",
    );
    assert!(generic.contains("named per instance"), "{generic}");
}
