//! What must not compile: each case is code that reached undefined behaviour with safe code
//! before ferrocuda closed the hole (issue 11, S1–S4). Each case compiles a small crate, so there
//! are few of them; the expected errors are in the `.stderr` files beside them. `g1_*`: a generic
//! kernel launched for an instance that was not built (no PTX entry), whose error lists those
//! that were.

#[test]
fn unsound_code_does_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
