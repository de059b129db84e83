//! The expansion, checked on its tokens (the end-to-end checks are the workspace's tests).

use crate::kernel::expand;
use crate::options::KernelOptions;
use syn::ItemFn;

fn expand_str(attr: &str, item: &str) -> syn::Result<String> {
    let options: KernelOptions = syn::parse_str(attr)?;
    let function: ItemFn = syn::parse_str(item)?;
    expand(options, function).map(|tokens| tokens.to_string())
}

fn error_of(attr: &str, item: &str) -> String {
    match expand_str(attr, item) {
        Ok(_) => panic!("expected an error for {item}"),
        Err(error) => error.to_string(),
    }
}

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
fn dynamic_shared_calls_in_the_body_borrow_the_block_scope() {
    let code = expand_str(
        "",
        "pub fn k(out: Out<f32>) { let a = dynamic_shared::<u32>(); let b: Shared<f32> = ferrocuda_std::dynamic_shared(); }",
    )
    .unwrap();
    // Once for the PTX body, once for the host's coroutine body, twice for each of its three
    // elementwise functions (the first thread's copy and the loop's; for checked launches, for
    // unchecked ones, and the latter's AVX2/FMA twin), and the coroutine body's AVX2/FMA twin.
    assert_eq!(
        code.matches("dynamic_shared :: < u32 > (__ferrocuda_scope)")
            .count(),
        9,
        "{code}"
    );
    assert_eq!(
        code.matches("ferrocuda_std :: dynamic_shared (__ferrocuda_scope)")
            .count(),
        9,
        "{code}"
    );
    // On the host, each handle takes its function's checked-mode constant, as `shared!`'s do
    // (all but the PTX body's two).
    assert_eq!(
        code.matches("(__ferrocuda_scope) . __checks_if (__FERROCUDA_SHARED_CHECKS)")
            .count(),
        16,
        "{code}"
    );
}

#[test]
fn host_accesses_through_a_handle_take_the_functions_checked_mode_constant() {
    let code = expand_str(
        "",
        "pub fn k(out: Out<f32>) { let a = dynamic_shared::<u32>(); let t = shared!([f32; 4]); \
         let n = a.len(); let f = move |i: usize| a.atomic_add(i, 1); f(0); t.set(0, 1.0); \
         fn helper(a: &[u32]) -> u32 { a.len() as u32 + a.iter().sum::<u32>() } }",
    )
    .unwrap();
    // `a.atomic_add` (in the closure) and `t.set`, in each host function (the coroutine body,
    // its AVX2/FMA twin, the three elementwise copies' two functions each): 8 × 2.
    assert_eq!(
        code.matches("ferrocuda_std :: Shared :: __checks_if (a , __FERROCUDA_SHARED_CHECKS) . atomic_add (i , 1)")
            .count(),
        8,
        "{code}"
    );
    assert_eq!(
        code.matches("ferrocuda_std :: Shared :: __checks_if (t , __FERROCUDA_SHARED_CHECKS) . set (0 , 1.0)")
            .count(),
        8,
        "{code}"
    );
    // `len()` stays as written (it keeps a `let` block-uniform), the PTX body is untouched, and
    // the nested function's own `a` is no handle.
    assert!(
        !code.contains("__checks_if (a , __FERROCUDA_SHARED_CHECKS) . len"),
        "{code}"
    );
    assert!(
        !code.contains("__checks_if (a , __FERROCUDA_SHARED_CHECKS) . iter"),
        "{code}"
    );
    assert!(code.contains("a . atomic_add (i , 1)"), "{code}");
}

#[test]
fn each_shared_array_gets_its_own_ptx_symbol_and_host_site() {
    let code = expand_str(
        "",
        "pub fn k(out: Out<f32>) { let a = shared!([f32; 64]); let b = ferrocuda_std::shared!([u32; N]); }",
    )
    .unwrap();
    // nvptx: one `.shared` declaration per array, named after the kernel, and its address.
    assert!(
        code.contains(r#"".shared .align 16 .b8 __ferrocuda_shared_k_0[{size}];""#),
        "{code}"
    );
    assert!(
        code.contains(r#""cvta.shared.u64 {0}, __ferrocuda_shared_k_1;""#),
        "{code}"
    );
    assert!(code.contains("size_of :: < [u32 ; N] >"), "{code}");
    // host: the executor's arena, with the variable's name for reports.
    assert!(code.contains("index : 0usize , name : \"a\""), "{code}");
    assert!(
        code.contains("shared_array :: < u32 > (__ferrocuda_scope , & __FERROCUDA_SITE , N)"),
        "{code}"
    );
    // The user's own `shared` path is invoked once per array and body (the PTX entry's, the
    // host's coroutine body and its AVX2/FMA twin, and the two copies of each of the three
    // elementwise functions: checked, unchecked and the latter's twin), so its import counts as
    // used.
    assert_eq!(
        code.matches("shared ! (@ rewritten_by_kernel)").count(),
        18,
        "{code}"
    );
}

#[test]
fn a_shared_size_sees_the_kernel_body_s_consts_innermost_first() {
    let code = expand_str(
        "",
        "pub fn k(out: Out<f32>) { const N: usize = 8; const M: usize = N * 2; \
         { const N: usize = 4; let a = shared!([f32; N]); } let b = shared!([f32; M]); }",
    )
    .unwrap();
    // Array 0 sees the inner N (and M); array 1 the outer N and M.
    let module = |i: usize| {
        let start = code
            .find(&format!("mod __ferrocuda_shared_{i}"))
            .unwrap_or_else(|| panic!("no size module {i}: {code}"));
        let rest = &code[start..];
        rest[..rest.find("global_asm").unwrap()].to_string()
    };
    assert!(module(0).contains("const N : usize = 4 ;"), "{}", module(0));
    assert!(
        !module(0).contains("const N : usize = 8 ;"),
        "{}",
        module(0)
    );
    assert!(
        module(0).contains("const M : usize = N * 2 ;"),
        "{}",
        module(0)
    );
    assert!(module(1).contains("const N : usize = 8 ;"), "{}", module(1));
    assert!(
        !module(1).contains("const N : usize = 4 ;"),
        "{}",
        module(1)
    );
}

#[test]
fn shared_takes_an_array_type() {
    let message = error_of("", "pub fn k(out: Out<f32>) { let a = shared!(f32, 64); }");
    assert!(
        message.contains("`shared!` takes an array type"),
        "{message}"
    );
}

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
fn block_uniform_lets_are_hoisted_above_the_regions_and_per_thread_ones_carried() {
    let code = expand_str(
        "",
        "pub fn k(x: &[u32], out: Out<u32>) { \
            let tile = shared!([u32; 64]); \
            let n = thread::block_dim().x as usize; \
            let len = x.len() * 2; \
            let table = &TABLE.view(); \
            let t = thread::thread_idx().x as usize; \
            let half = n / 2; \
            let local = local_table().view(); \
            let copy = &x[t]; \
            tile.set(t, x[t]); \
            thread::sync_threads(); \
            out.set(t, tile.get((t + 1) % n) + (len + half) as u32 + table.get(0) + local.get(*copy as usize)); \
        }",
    )
    .unwrap();
    let split = &code[code.find("fn __ferrocuda_split").unwrap()..];
    let first_region = split.find("run_region").unwrap();
    // Uniform: the shared array, the block's size, a parameter's length times a constant, a
    // shared borrow of a constant table's view.
    for hoisted in [
        "let tile = {",
        "let n = thread :: block_dim () . x as usize ;",
        "let len = x . len () * 2 ;",
        "let table = & TABLE . view () ;",
    ] {
        let at = split
            .find(hoisted)
            .unwrap_or_else(|| panic!("{hoisted}: {split}"));
        assert!(
            at < first_region,
            "{hoisted} is not above the regions: {split}"
        );
    }
    // Per thread (the thread index), or maybe not uniform (a division, a call's `view()`, a
    // borrow of an element): carried.
    for carried in ["let t = ", "let half = ", "let local = ", "let copy = "] {
        let at = split
            .find(carried)
            .unwrap_or_else(|| panic!("{carried}: {split}"));
        assert!(at > first_region, "{carried} was hoisted: {split}");
    }
    // Each in slots of its own, filled by the first region and read by the second.
    let second_region = first_region + 1 + split[first_region + 1..].find("run_region").unwrap();
    // `t`, a function of the thread's position alone, has no slots: the second region computes
    // it again.
    assert!(!split.contains("__ferrocuda_slots_1 "), "{split}");
    let recomputed = "let t = { let __ferrocuda_value = __ferrocuda_tid . x as usize ;";
    assert!(
        split[second_region..].contains(recomputed),
        "{recomputed}: {split}"
    );
    // `half` (a division) in slots, moved out by the second region.
    let put = split
        .find("__ferrocuda_slots_2 . put (__ferrocuda_linear , half)")
        .unwrap_or_else(|| panic!("half is not stored: {split}"));
    assert!(put < second_region, "{split}");
    // Assembled, so that tests/safety_comments.rs does not take the text for a block.
    let (keyword, open) = ("unsafe", "{");
    let take = format!(
        "let mut half = {keyword} {open} __ferrocuda_slots_2 . take (__ferrocuda_linear) }}"
    );
    assert!(split[second_region..].contains(&take), "{take}: {split}");
}

/// The regions of `code`'s split function for checked launches, in order (the text from each
/// `run_region` to the next).
fn split_regions(code: &str) -> Vec<&str> {
    let split = &code[code.find("fn __ferrocuda_split (").unwrap()..];
    let split = &split[..split.find("fn __ferrocuda_split_").unwrap_or(split.len())];
    split.split("run_region").skip(1).collect()
}

#[test]
fn a_region_reads_only_the_carried_variables_it_names_and_writes_only_those_it_may_change() {
    let code = expand_str(
        "",
        "pub fn k(x: &[u32], out: Out<u32>) { \
            let t = thread::thread_idx().x as usize; \
            let mut sum = x[t]; \
            let far = x[t + 1]; \
            thread::sync_threads(); \
            sum += 1; \
            thread::sync_threads(); \
            let near = t * 2; \
            thread::sync_threads(); \
            out.set(t, sum + far + near as u32); \
        }",
    )
    .unwrap();
    let regions = split_regions(&code);
    assert_eq!(regions.len(), 4, "{code}");
    let reads = |region: &str, slots: &str| {
        region.contains(&format!("{slots} . take")) || region.contains(&format!("{slots} . get"))
    };
    let writes = |region: &str, slots: &str| region.contains(&format!("{slots} . put"));
    // sum and far get slots 2 and 3 in the first region; t (a function of the thread's
    // position alone) and near (arithmetic of t) none: a region that reads them computes them.
    let (t, sum, far, near) = (
        "__ferrocuda_slots_1",
        "__ferrocuda_slots_2",
        "__ferrocuda_slots_3",
        "__ferrocuda_slots_4",
    );
    let computes = |region: &str, name: &str| region.contains(&format!("let {name} = {{"));
    assert!(writes(regions[0], sum) && writes(regions[0], far));
    assert!(!code.contains(t) && !code.contains(near), "{code}");
    // `sum += 1`: sum only; t and far stay where they are.
    assert!(
        reads(regions[1], sum) && writes(regions[1], sum),
        "{}",
        regions[1]
    );
    for other in [t, far, near] {
        assert!(
            !reads(regions[1], other) && !writes(regions[1], other),
            "{}",
            regions[1]
        );
    }
    // `let near = t * 2`: computes t again; stores nothing.
    assert!(computes(regions[2], "t"), "{}", regions[2]);
    assert!(!regions[2].contains(". put"), "{}", regions[2]);
    // The last computes near (from t) and t again; sum (`mut`) and far (an element of a
    // slice) are moved out of their slots.
    assert!(computes(regions[3], "near") && computes(regions[3], "t"));
    for (slots, how) in [(sum, "take"), (far, "take")] {
        let read = format!("{slots} . {how}");
        assert!(regions[3].contains(&read), "{read}: {}", regions[3]);
    }
    assert!(
        !reads(regions[2], sum) && !reads(regions[2], far),
        "{}",
        regions[2]
    );
    // The last region reads everything it uses and writes nothing back.
    for slots in [sum, far] {
        assert!(
            reads(regions[3], slots) && !writes(regions[3], slots),
            "{}",
            regions[3]
        );
    }
}

/// The split function for checked launches of `body` (a kernel `k(x: &[u32], out: Out<u32>)`),
/// if it is split.
fn split_of(body: &str) -> Option<String> {
    let code = expand_str(
        "",
        &format!("pub fn k(x: &[u32], out: Out<u32>, rounds: u32) {{ {body} }}"),
    )
    .unwrap();
    let split = &code[code.find("fn __ferrocuda_split (")?..];
    Some(split[..split.find("fn __ferrocuda_split_").unwrap_or(split.len())].to_string())
}

#[test]
fn block_uniform_variables_and_loops_are_the_block_s_with_no_slots_and_no_votes() {
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let n = thread::block_dim().x as usize; \
         let mut offset = 1; \
         let mut sum = 0u32; \
         while offset < n { \
             thread::sync_threads(); \
             sum += x[t] + offset as u32; \
             thread::sync_threads(); \
             offset *= 2; \
         } \
         for k in 0..rounds { \
             thread::sync_threads(); \
             sum += k; \
         } \
         out.set(t, sum);",
    )
    .unwrap();
    let first_region = split.find("run_region").unwrap();
    let hoisted = split.find("let mut offset = 1 ;").expect(&split);
    assert!(hoisted < first_region, "{split}");
    for uniform in [
        "while __ferrocuda_regions . running () && (offset < n) {",
        "if __ferrocuda_regions . running () { offset *= 2 ; }",
        "for k in 0 .. rounds {",
    ] {
        assert!(split.contains(uniform), "{uniform}: {split}");
    }
    // No trip decision, and `sum` (first bound to a uniform value, then changed by each
    // thread's `x[t]`) stays per thread.
    assert!(!split.contains("vote"), "{split}");
    assert!(split.contains("sum += x [t] + offset as u32 ;"), "{split}");
}

#[test]
fn a_variable_a_thread_may_change_on_its_own_stays_per_thread() {
    // Each changes `offset` in a way the block cannot make once for all its threads.
    for change in [
        "if t > 0 { offset *= 2; } else { offset *= 2; }",
        "if t > 0 { offset /= 2; } offset += 2;",
        "offset.add_assign(offset);",
        "offset = offset * 2 + t;",
        "debug_assert!({ offset *= 2; true });",
    ] {
        let split = split_of(&format!(
            "let t = thread::thread_idx().x as usize; \
             let n = thread::block_dim().x as usize; \
             let mut offset = 1; \
             while offset < n {{ \
                 thread::sync_threads(); \
                 {change} \
             }} \
             out.set(t, offset as u32);"
        ))
        .unwrap();
        assert!(split.contains("vote"), "{change}: {split}");
        let (bound, first_region) = (split.find("let mut offset = 1 ;"), split.find("run_region"));
        assert!(bound > first_region, "{change}: {split}");
    }
    // Loops over a per-thread value vote each trip.
    let split = split_of(
        "let t = thread::thread_idx().x; \
         for k in 0..t % 2 + rounds { thread::sync_threads(); out.set(k as usize, k); }",
    )
    .unwrap();
    assert!(split.contains("vote"), "{split}");
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

#[test]
fn a_break_or_continue_out_of_a_split_loop_parks_the_thread_and_the_block_jumps() {
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let mut acc = x[t]; \
         'outer: for i in 0..rounds { \
             thread::sync_threads(); \
             if acc == 3 { break; } \
             for j in 0..rounds { \
                 thread::sync_threads(); \
                 match j { 2 => continue 'outer, _ => {} } \
                 acc += j; \
             } \
             acc += i; \
         } \
         out.set(t, acc);",
    )
    .expect("split");
    // The `break` (code 1: depth 0) and the labelled `continue` (code 0) leave the region.
    assert!(
        split.contains("leave (__ferrocuda_linear , 1u32"),
        "{split}"
    );
    assert!(
        split.contains("leave (__ferrocuda_linear , 0u32"),
        "{split}"
    );
    // The block jumps where every thread went, and the loop lets them run again.
    assert!(
        split.contains("match __ferrocuda_regions . left ()"),
        "{split}"
    );
    assert!(
        split.contains("1u32 => continue '__ferrocuda_loop_"),
        "{split}"
    );
    assert!(
        split.contains("2u32 => break '__ferrocuda_loop_"),
        "{split}"
    );
    assert!(split.contains("next_trip (0u32)") && split.contains("after_loop (0u32)"));
    // A leaving thread puts `acc`, which the loop's head carries, back in its slot.
    let leave = split.find("'__ferrocuda_leave : {").expect(&split);
    assert!(
        split[leave..].contains(". put (__ferrocuda_linear , acc)"),
        "{split}"
    );
    // `acc += j` in a loop a thread may leave is not taken for the block's.
    assert!(!split.contains("running () { acc"), "{split}");
    // A block-uniform `break` at a region's start (hotspot's) is the block's: no thread tests
    // it, the block jumps.
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let mut acc = x[t]; \
         for i in 0..rounds { \
             thread::sync_threads(); \
             if i == rounds - 1 { break; } \
             acc += i; \
             thread::sync_threads(); \
         } \
         out.set(t, acc);",
    )
    .expect("split");
    assert!(
        split.contains("if __ferrocuda_regions . running () && (i == rounds - 1)")
            && split.contains("leave_block (1u32"),
        "{split}"
    );
    assert!(!split.contains("leave (__ferrocuda_linear"), "{split}");
}

#[test]
fn a_let_without_a_value_is_declared_again_where_it_is_assigned_and_carried_after() {
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let (a, b); \
         thread::sync_threads(); \
         if t == 0 { a = x[0]; b = 1; } else { (a, b) = (x[t], 2); } \
         thread::sync_threads(); \
         out.set(t, a + b);",
    )
    .expect("split");
    let regions: Vec<&str> = split.split("run_region").skip(1).collect();
    assert_eq!(regions.len(), 3, "{split}");
    // Not in the first region (it names neither), declared in the second, read in the third.
    assert!(!regions[0].contains("let a"), "{}", regions[0]);
    assert!(
        regions[1].contains("let a ;") && regions[1].contains("let b ;"),
        "{}",
        regions[1]
    );
    assert!(regions[2].contains("let mut a = unsafe"), "{}", regions[2]);
    // Assigned on some paths only, and named after a barrier: coroutines, saying why.
    assert!(split_of(
        "let t = thread::thread_idx().x as usize; let mut a; if t == 0 { a = 1; } \
         thread::sync_threads(); a = 2; out.set(t, a);"
    )
    .is_none());
}
