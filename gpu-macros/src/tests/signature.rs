//! Parameters: which signatures a PTX entry can have, and how each kind of parameter crosses.

use super::support::{error_of, expand_str};

#[test]
fn slices_outputs_and_scalars_become_ptx_parameters_in_order() {
    let code = expand_str(
        "same_len(x, y)",
        "pub fn saxpy(alpha: f32, x: &[f32], y: Out<f32>) { let _ = (alpha, x, y); }",
    )
    .unwrap();
    // PTX entry: scalar, then (pointer, length) pairs.
    assert!(code.contains(
        "pub unsafe extern \"ptx-kernel\" fn saxpy (alpha : f32 , __ferrocuda_x_ptr : :: ferrocuda_std :: __private :: KernelInput < f32 > , \
         __ferrocuda_x_len : usize , __ferrocuda_y_ptr : * mut f32 , __ferrocuda_y_len : usize)"
    ), "{code}");
    // Host handle: markers in order, same_len as parameter indices, CPU entry reading the
    // same PTX parameter positions (0 = alpha, 1..2 = x, 3..4 = y).
    assert!(code.contains(
        "Kernel < (:: ferrocuda_std :: abi :: Scalar < f32 > , :: ferrocuda_std :: abi :: Slice < f32 > , \
         :: ferrocuda_std :: abi :: Output < f32 > ,) >"
    ), "{code}");
    assert!(code.contains("& [& [1usize , 2usize]]"), "{code}");
    assert!(
        code.contains("read_param :: < u64 > (params , 3usize)"),
        "{code}"
    );
    assert!(
        code.contains("read_param :: < f32 > (params , 0usize)"),
        "{code}"
    );
}

#[test]
fn signatures_a_ptx_entry_cannot_have_are_refused_with_the_fix() {
    let cases = [
        (
            "pub fn k(x: &mut [f32]) {}",
            "outputs are `ferrocuda_std::Out<T>`",
        ),
        ("pub fn k(x: &f32) {}", "must be a slice"),
        (
            "pub fn k(x: *mut f32) {}",
            "raw pointer parameters are not supported",
        ),
        ("pub fn k<T: Copy>(x: &[T]) {}", "cannot be generic"),
        ("pub fn k(x: &[f32]) -> f32 { 0.0 }", "returns nothing"),
        ("pub unsafe fn k(x: &[f32]) {}", "cannot be `unsafe fn`"),
        ("pub fn k((a, b): (f32, f32)) {}", "plain names"),
        ("pub fn k(x: Out<f32, f64>) {}", "one element type"),
        // Lifetimes that would let a launch's buffers outlive it.
        (
            "pub fn k(x: &'static [u32]) {}",
            "cannot name a lifetime (`'static`)",
        ),
        (
            "pub fn k(x: Out<'static, u32>) {}",
            "cannot name a lifetime (`'static`)",
        ),
        (
            "pub fn k(x: ferrocuda_std::Out<'a, u32>) {}",
            "cannot name a lifetime (`'a`)",
        ),
        (
            "pub fn k(x: &[Wrapper<'a>]) {}",
            "cannot name a lifetime (`'a`)",
        ),
        (
            "pub fn k<'a>(x: &[u32]) {}",
            "cannot have lifetime parameters",
        ),
    ];
    for (item, expected) in cases {
        let message = error_of("", item);
        assert!(message.contains(expected), "{item}: {message}");
    }
}

#[test]
fn elided_lifetimes_are_accepted() {
    assert!(expand_str(
        "",
        "pub fn k(x: &'_ [u32], y: Out<'_, u32>, z: Out<u32>) {}"
    )
    .is_ok());
}

#[test]
fn arrays_cross_as_pointer_length_extents_and_all_but_the_last_stride() {
    let code = expand_str(
        "",
        "pub fn t(a: Array2<f32>, out: Out3<'_, u16>) { let _ = (a, out); }",
    )
    .unwrap();
    assert!(code.contains(
        "fn t (__ferrocuda_a_ptr : :: ferrocuda_std :: __private :: KernelInput < f32 > , __ferrocuda_a_len : usize , \
         __ferrocuda_a_extent0 : usize , __ferrocuda_a_extent1 : usize , __ferrocuda_a_stride0 : usize , \
         __ferrocuda_out_ptr : * mut u16 , __ferrocuda_out_len : usize , __ferrocuda_out_extent0 : usize , \
         __ferrocuda_out_extent1 : usize , __ferrocuda_out_extent2 : usize , __ferrocuda_out_stride0 : usize , \
         __ferrocuda_out_stride1 : usize)"
    ), "{code}");
    // The last axis is contiguous: its stride is the literal 1, not a parameter.
    assert!(
        code.contains(
            "[__ferrocuda_a_extent0 , __ferrocuda_a_extent1] , [__ferrocuda_a_stride0 , 1]"
        ),
        "{code}"
    );
    assert!(
        code.contains("ArrayInput < f32 , 2usize > , :: ferrocuda_std :: abi :: ArrayOutput < u16 , 3usize > ,"),
        "{code}"
    );
    // The CPU entry reads out's last stride from PTX parameter 5 + 6 = 11.
    assert!(
        code.contains("read_param :: < u64 > (params , 11usize)"),
        "{code}"
    );
    assert!(
        !code.contains("read_param :: < u64 > (params , 12usize)"),
        "{code}"
    );
    let message = error_of("same_len(a, b)", "pub fn k(a: Array2<f32>, b: &[f32]) {}");
    assert!(message.contains("`a` is a 2D array"), "{message}");
    assert!(
        error_of("", "pub fn k(a: Array2<f32, u8>) {}").contains("`Array2` takes one element type")
    );
}

#[test]
fn a_signature_longer_than_launch_passes_is_refused_naming_the_limit() {
    let params = |n: usize| {
        (0..n)
            .map(|i| format!("p{i}: u32"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let at_limit = format!("pub fn k({}, out: Out<u32>) {{}}", params(31));
    assert!(expand_str("", &at_limit).is_ok());
    let over = format!("pub fn k({}, out: Out<u32>) {{}}", params(32));
    let error = error_of("", &over);
    assert!(
        error.contains("takes 33 parameters") && error.contains("at most 32"),
        "{error}"
    );
    // A cooperative kernel's `Grid` is not passed by the caller, so it does not count.
    let cooperative = format!("pub fn k({}, out: Out<u32>, grid: Grid) {{}}", params(31));
    assert!(expand_str("", &cooperative).is_ok());
}

#[test]
fn bool_parameters_cross_as_a_byte_and_bool_elements_say_what_to_use() {
    let code = expand_str(
        "",
        "pub fn k(flag: bool, out: Out<u32>) { let _ = (flag, out); }",
    )
    .unwrap();
    assert!(code.contains("flag : u8"), "{code}");
    assert!(code.contains("let flag : bool = flag != 0"), "{code}");
    assert!(code.contains(":: ferrocuda_std :: abi :: Bool"), "{code}");
    for signature in ["pub fn k(x: &[bool]) {}", "pub fn k(out: Out<bool>) {}"] {
        let error = error_of("", signature);
        assert!(
            error.contains("`bool` is not an element type") && error.contains("`u8`"),
            "{error}"
        );
    }
}
