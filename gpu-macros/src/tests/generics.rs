//! Generic kernels: one entry per instance, named after its types.

use super::support::{error_of, expand_str};

#[test]
fn each_instance_is_an_entry_named_after_its_types() {
    let code = expand_str(
        "same_len(x, out), instances(f32, [u8; 4], f64 as wide)",
        "pub fn scale<T: Number>(x: &[T], k: T, out: Out<T>) { let _ = (x, k, out); }",
    )
    .unwrap();
    for entry in ["scale_f32", "scale_u8_4", "wide"] {
        assert!(
            code.contains(&format!("extern \"ptx-kernel\" fn {entry} (")),
            "{entry}: {code}"
        );
    }
    // The entry's parameters are the instance's types, and the body is called with them.
    assert!(code.contains("k : f64"), "{code}");
    assert!(code.contains("__ferrocuda_body :: < f32 >"), "{code}");
    // The host's handle function and one trait impl per instance.
    assert!(code.contains("const fn scale < T > ()"), "{code}");
    assert!(
        code.contains("impl ScaleInstance < [u8 ; 4] > for ()"),
        "{code}"
    );
    assert!(code.contains("(entry `wide`)"), "{code}");
}

#[test]
fn two_type_parameters_take_tuples() {
    let item = "pub fn convert<S: Number, D: Number>(x: &[S], out: Out<D>) {}";
    let code = expand_str("instances((f32, f64))", item).unwrap();
    assert!(code.contains("fn convert_f32_f64 ("), "{code}");
    assert!(
        code.contains("impl ConvertInstance < f32 , f64 > for ()"),
        "{code}"
    );
    let message = error_of("instances(f32)", item);
    assert!(message.contains("2 type parameters (S, D)"), "{message}");
}

#[test]
fn instances_are_refused_where_they_cannot_apply() {
    assert!(error_of("instances(f32)", "pub fn k(x: &[f32]) {}").contains("has none"));
    assert!(error_of("instances(f32, f32)", "pub fn k<T>(x: &[T]) {}").contains("repeats"));
    assert!(
        error_of("instances(f32, f64 as k_f32)", "pub fn k<T>(x: &[T]) {}").contains("repeats")
    );
    assert!(error_of("instances()", "pub fn k<T>(x: &[T]) {}").contains("at least one type"));
    assert!(error_of("", "pub fn k<T>(x: &[T]) where T: Copy {}").contains("cannot be generic"));
    assert!(
        error_of("instances(f32)", "pub fn k<T, const N: usize>(x: &[T]) {}")
            .contains("cannot have const parameters")
    );
}

#[test]
fn a_shared_array_of_a_type_parameter_is_sized_by_the_instance() {
    let code = expand_str(
        "instances(f64)",
        "pub fn k<T: Number>(out: Out<T>) { let a = shared!([T; 64]); }",
    )
    .unwrap();
    // The declaration's size is the instance's; the handle in the (generic) body is `T`'s.
    assert!(code.contains("size_of :: < [f64 ; 64] >"), "{code}");
    assert!(code.contains("__ferrocuda_shared_k_f64_0"), "{code}");
    assert!(code.contains("Shared :: < T > :: from_raw_parts"), "{code}");
}
