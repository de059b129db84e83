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

fn parse_all_the_way(text: &str) {
    if let Ok(module) = Module::parse(text) {
        for name in module.kernel_names() {
            let info = module.kernel(&name).expect("a listed kernel exists");
            assert!(info.max_threads_per_block <= 1024);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

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
