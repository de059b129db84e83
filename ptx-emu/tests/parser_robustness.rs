//! Random bytes and mutated real PTX at the parser: an error (with a line) or a module, never a
//! panic.

mod support;

use ferrocuda_ptx_emu::Module;
use proptest::prelude::*;

/// A small real kernel to mutate (the library's vector_add, with the module header).
fn seed_ptx() -> &'static str {
    static SEED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let ptx = support::library_ptx();
        let start = ptx.find(".visible .entry vector_add(").expect("vector_add");
        let end = start + ptx[start..].find("\n}\n").expect("end") + 3;
        let header_end = ptx.find(".shared").unwrap_or(start);
        format!("{}{}", &ptx[..header_end], &ptx[start..end])
    })
}

/// 400 cases, or `PROPTEST_CASES` (as the host's property tests take it, e.g. for Miri).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

fn parse_all_the_way(text: &str) {
    if let Ok(module) = Module::parse(text) {
        for name in module.kernel_names() {
            let info = module.kernel(&name).expect("a listed kernel exists");
            assert!(info.max_threads_per_block <= 1024);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        parse_all_the_way(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_ptx_never_panics(edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..8)) {
        let mut text: Vec<u8> = seed_ptx().as_bytes().to_vec();
        for (at, kind, byte) in edits {
            let i = at.index(text.len().max(1));
            let alphabet = b" \n;,.%[]{}()+-@!0123456789abcdefgrxyzLBB$_";
            let printable = alphabet[byte as usize % alphabet.len()];
            match kind {
                0 if !text.is_empty() => { text.remove(i.min(text.len() - 1)); }
                1 => text.insert(i.min(text.len()), printable),
                2 if !text.is_empty() => { let j = i.min(text.len() - 1); text[j] = printable; }
                _ => text.truncate(i),
            }
        }
        parse_all_the_way(&String::from_utf8_lossy(&text));
    }

    #[test]
    fn every_truncation_of_real_ptx_is_an_error_or_a_module(cut in 0usize..4000) {
        let seed = seed_ptx();
        let cut = cut.min(seed.len());
        parse_all_the_way(&seed[..seed.floor_char_boundary(cut)]);
    }
}

#[test]
fn errors_say_where() {
    let error =
        Module::parse(".version 7.0\n.target sm_70\n.visible .entry k()\n{\nfrobnicate [%r1;\n}\n")
            .err()
            .expect("an error");
    assert_eq!(error.line, 5, "{error}");
    let error = Module::parse(".version 7.0\n.visible .entry k()\n{\nbra $nowhere;\n}\n")
        .err()
        .expect("an error");
    assert!(error.to_string().contains("no label $nowhere"), "{error}");
    let error = Module::parse(".visible .entry k()\n{\nadd.s32 %r1, %r2, %r3;\n}\n")
        .err()
        .expect("an error");
    assert!(
        error.to_string().contains("%r1 is not a declared register"),
        "{error}"
    );
}

/// Runs `f` on a thread with a small stack (256 KiB), so that parsing that recursed per level of
/// input nesting would overflow it (and abort the whole test process) at depths far below what
/// the input gives.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("no panic")
}

const KERNEL_HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n";

/// Issue 29 (E1): 30,000 nested `{ }` scopes overflowed the parser's stack (one recursion per
/// scope): SIGABRT of the host process from cuModuleLoadData. Scopes are counted now.
#[test]
fn thirty_thousand_nested_scopes_parse_without_recursion() {
    let depth = 30_000;
    let text = format!(
        "{KERNEL_HEAD}{}\tret;\n{}}}\n",
        "{\n".repeat(depth),
        "}\n".repeat(depth)
    );
    let module = on_a_small_stack(move || Module::parse(&text).map(|m| m.kernel_names()));
    assert_eq!(module.expect("nested scopes are valid PTX"), ["k"]);
    // Unbalanced either way is an error with a line, not a crash.
    let open = format!("{KERNEL_HEAD}{}\tret;\n}}\n", "{\n".repeat(depth));
    let error = on_a_small_stack(move || Module::parse(&open).err()).expect("an error");
    assert!(error.to_string().contains("end of PTX"), "{error}");
}

/// The other places where input nests brackets (vector operands, addresses, call argument
/// lists, initialisers, parameter lists): deeply nested, each is an error, never a recursion
/// per level.
#[test]
fn deeply_nested_operands_and_initialisers_are_errors() {
    let depth = 100_000;
    let cases = [
        (
            "vector",
            format!(
                "{KERNEL_HEAD}.reg .b32 %r<2>;\nmov.b64 {}%r1{}, 0;\n}}\n",
                "{".repeat(depth),
                "}".repeat(depth)
            ),
        ),
        (
            "address",
            format!(
                "{KERNEL_HEAD}.reg .b32 %r<2>;\nld.global.u32 %r1, {}0{};\n}}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        ),
        (
            "call",
            format!(
                "{KERNEL_HEAD}call f, {}0{};\n}}\n",
                "(".repeat(depth),
                ")".repeat(depth)
            ),
        ),
        (
            "initialiser",
            format!(
                ".version 7.0\n.target sm_70\n.global .u32 g[2] = {}1{};\n",
                "{".repeat(depth),
                "}".repeat(depth)
            ),
        ),
        (
            "parameters",
            format!(
                ".version 7.0\n.target sm_70\n.visible .entry k{}{}\n{{\nret;\n}}\n",
                "(".repeat(depth),
                ")".repeat(depth)
            ),
        ),
        (
            "vector in a scope",
            format!(
                "{KERNEL_HEAD}{}mov.b64 {}%r1, 0;\n}}\n",
                "{\n".repeat(depth),
                "{".repeat(depth)
            ),
        ),
    ];
    for (what, text) in cases {
        let outcome = on_a_small_stack(move || Module::parse(&text).map(|_| ()));
        assert!(outcome.is_err(), "{what}: parsed");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases().min(64)))]

    /// Random runs of brackets, thousands deep, inside a kernel body: an error or a module,
    /// never a stack overflow.
    #[test]
    fn random_deep_brackets_never_overflow(runs in proptest::collection::vec((0u8..6, 1usize..20_000), 1..6)) {
        let mut text = String::from(KERNEL_HEAD);
        for (kind, count) in runs {
            let piece = ["{", "}", "[", "]", "(", "{\n.reg .b32 %r<1>;\n"][kind as usize];
            text.push_str(&piece.repeat(count));
        }
        text.push_str("\n}\n");
        on_a_small_stack(move || parse_all_the_way(&text));
    }
}
