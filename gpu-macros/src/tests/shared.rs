//! `shared!` arrays and dynamic shared memory: their PTX symbols, host sites and the block scope.

use super::support::{error_of, expand_str};

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
