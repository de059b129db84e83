//! `let` without a value (`let (n, s, w, e);`, assigned later) on the split path.
//!
//! Each such `let` is first cut into one `let` per name (`let n; let s; ...`, the same
//! variables). Where a region ends, the code generator asks what each of those names holds
//! ([`state_after`]):
//!
//! - [`State::Assigned`]: assigned on every path through the region (by our rules below, which
//!   are a subset of Rust's definite assignment): carried in slots like any other variable;
//! - [`State::Unassigned`]: not named at all since its `let` (or since it came in unassigned):
//!   nothing is carried; the next region that names it declares it again, `let n;`, with the
//!   `let`'s type and mutability (its `let` is dropped from a region that does not name it
//!   afterwards, where it could not infer its type);
//! - [`State::Unsure`]: named, but not assigned on every path by our rules: the kernel stays on
//!   coroutines if a later region names it.
//!
//! Why that is sound, and never a different answer: the kernel's own body passed Rust's
//! definite-assignment check (its coroutine and GPU copies are compiled from it). A value is
//! carried only where our rules say it is assigned on every path, which Rust's check then says
//! too (the slot's write at the region's end would not compile otherwise: the compiler checks
//! our claim). A name declared again holds nothing at a point where Rust's check says it is
//! not definitely assigned in the original (never named since its `let`; or after a split
//! loop that names it, where Rust's check merges the path that skips the loop); there the
//! original cannot read the old value before assigning a new one on every path, so the
//! generated region, whose code between the points is the original's, reads only what it
//! assigned itself, and the compiler checks that too (a read of `n` before it is assigned
//! would not compile). So the slots hold plain values (no `Option`, no `MaybeUninit`), and
//! what our rules cannot follow is a fallback to coroutines, never a wrong value.

use super::names::{idents_of, pattern_names};
use quote::ToTokens;
use std::collections::BTreeSet;
use syn::{Expr, Pat, Stmt};

/// What a name declared by a `let` without a value holds at a point (see the module's docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum State {
    /// Never named since its `let`: holds nothing.
    Unassigned,
    /// Assigned on every path (or bound again with a value).
    Assigned,
    /// Named, but maybe not assigned.
    Unsure,
}

/// `let` without a value cut into one `let` per name, each with its type if the pattern had
/// one (`let (a, b): (f32, u32);` is `let a: f32; let b: u32;`); `Err` for a pattern this
/// cannot cut (`ref`, struct or slice patterns).
pub(super) fn normalize(local: &syn::Local) -> Result<Vec<Stmt>, String> {
    fn cut(pat: &Pat, ty: Option<&syn::Type>, out: &mut Vec<(Pat, Option<syn::Type>)>) -> bool {
        match (pat, ty) {
            (Pat::Ident(p), _) if p.by_ref.is_none() && p.subpat.is_none() => {
                out.push((pat.clone(), ty.cloned()));
                true
            }
            (Pat::Wild(_), _) => true,
            (Pat::Paren(p), _) => cut(&p.pat, ty, out),
            (Pat::Type(t), None) => cut(&t.pat, Some(&t.ty), out),
            (Pat::Tuple(t), None) => t.elems.iter().all(|p| cut(p, None, out)),
            (Pat::Tuple(t), Some(syn::Type::Tuple(types)))
                if t.elems.len() == types.elems.len() =>
            {
                t.elems
                    .iter()
                    .zip(&types.elems)
                    .all(|(p, ty)| cut(p, Some(ty), out))
            }
            (Pat::Tuple(t), Some(syn::Type::Paren(ty))) => {
                cut(&Pat::Tuple(t.clone()), Some(&ty.elem), out)
            }
            _ => false,
        }
    }
    let mut names = Vec::new();
    if !cut(&local.pat, None, &mut names) {
        return Err("a `let` without a value of a pattern #[kernel] cannot cut into names".into());
    }
    let attrs = &local.attrs;
    Ok(names
        .into_iter()
        .map(|(pat, ty)| match ty {
            Some(ty) => syn::parse_quote!(#(#attrs)* let #pat: #ty;),
            None => syn::parse_quote!(#(#attrs)* let #pat;),
        })
        .collect())
}

/// The name a `let` without a value declares, if `stmt` is one of one name (as [`normalize`]
/// leaves them).
pub(super) fn declares_unassigned(stmt: &Stmt) -> Option<String> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    if local.init.is_some() {
        return None;
    }
    let pat = match &local.pat {
        Pat::Type(t) => &*t.pat,
        pat => pat,
    };
    match pat {
        Pat::Ident(p) => Some(p.ident.to_string()),
        _ => None,
    }
}

/// Whether `stmt` names `name` anywhere (an identifier token, macros' tokens included).
pub(super) fn mentions(stmt: &Stmt, name: &str) -> bool {
    let mut idents = BTreeSet::new();
    idents_of(stmt.to_token_stream(), &mut idents);
    idents.contains(name)
}

/// What `name` holds after `stmts`, starting from `start` (`None`: bound with a value, or not
/// at all, before them). A `let` of the name decides anew: without a value it is
/// [`State::Unassigned`], with one [`State::Assigned`].
pub(super) fn state_after(stmts: &[Stmt], name: &str, start: Option<State>) -> Option<State> {
    let mut state = start;
    for stmt in stmts {
        if let Stmt::Local(local) = stmt {
            let mut bound = Vec::new();
            pattern_names(&local.pat, &mut bound);
            if bound.iter().any(|b| b == name) {
                state = Some(match declares_unassigned(stmt) {
                    Some(_) => State::Unassigned,
                    None => State::Assigned,
                });
                continue;
            }
        }
        state = match state {
            Some(State::Unassigned | State::Unsure) if stmt_assigns(stmt, name) => {
                Some(State::Assigned)
            }
            Some(State::Unassigned) if mentions(stmt, name) => Some(State::Unsure),
            state => state,
        };
    }
    state
}

/// Whether every path through `stmt` that goes on to the next statement assigns `name` (the
/// variable declared before it: a nested `let` of the name ends the search). A subset of Rust's
/// definite assignment: assignments (also in a tuple), blocks, `if` with `else` and `match`
/// whose branches all do, and branches that leave (`return`, `break`, `continue`, `panic!`).
fn stmt_assigns(stmt: &Stmt, name: &str) -> bool {
    match stmt {
        Stmt::Expr(expr, _) => assigns(expr, name),
        Stmt::Macro(mac) => diverging_macro(&mac.mac),
        Stmt::Local(local) => local
            .init
            .as_ref()
            .is_some_and(|init| assigns(&init.expr, name)),
        Stmt::Item(_) => false,
    }
}

fn block_assigns(block: &syn::Block, name: &str) -> bool {
    for stmt in &block.stmts {
        if stmt_assigns(stmt, name) {
            return true;
        }
        if let Stmt::Local(local) = stmt {
            let mut bound = Vec::new();
            pattern_names(&local.pat, &mut bound);
            if bound.iter().any(|b| b == name) {
                // Another variable of that name from here on.
                return false;
            }
        }
    }
    false
}

fn binds(pat: &Pat, name: &str) -> bool {
    let mut bound = Vec::new();
    pattern_names(pat, &mut bound);
    bound.iter().any(|b| b == name)
}

fn assigns(expr: &Expr, name: &str) -> bool {
    match expr {
        Expr::Assign(a) => place_assigns(&a.left, name) || assigns(&a.right, name),
        Expr::Block(b) if b.label.is_none() => block_assigns(&b.block, name),
        Expr::Unsafe(u) => block_assigns(&u.block, name),
        Expr::Paren(p) => assigns(&p.expr, name),
        Expr::Group(g) => assigns(&g.expr, name),
        Expr::Let(l) => assigns(&l.expr, name),
        Expr::If(i) => {
            let then_counts = !matches!(&*i.cond, Expr::Let(l) if binds(&l.pat, name));
            assigns(&i.cond, name)
                || then_counts
                    && block_assigns(&i.then_branch, name)
                    && i.else_branch
                        .as_ref()
                        .is_some_and(|(_, e)| assigns(e, name))
        }
        Expr::Match(m) => {
            assigns(&m.expr, name)
                || !m.arms.is_empty()
                    && m.arms
                        .iter()
                        .all(|arm| !binds(&arm.pat, name) && assigns(&arm.body, name))
        }
        // They leave: no path through them goes on.
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => true,
        Expr::Macro(m) => diverging_macro(&m.mac),
        _ => false,
    }
}

/// Whether the place `left` of an assignment is `name` or a tuple or array with it.
fn place_assigns(left: &Expr, name: &str) -> bool {
    match left {
        Expr::Path(p) => p.path.is_ident(name),
        Expr::Paren(p) => place_assigns(&p.expr, name),
        Expr::Tuple(t) => t.elems.iter().any(|e| place_assigns(e, name)),
        Expr::Array(a) => a.elems.iter().any(|e| place_assigns(e, name)),
        _ => false,
    }
}

fn diverging_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "panic" | "unreachable" | "todo" | "unimplemented"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmts(code: &str) -> Vec<Stmt> {
        syn::parse_str::<syn::Block>(&format!("{{ {code} }}"))
            .unwrap()
            .stmts
    }

    #[test]
    fn assignments_on_every_path_assign_and_the_rest_is_unsure() {
        let cases = [
            ("x = 1;", State::Assigned),
            ("(a, x) = f();", State::Assigned),
            ("if c { x = 1; } else { x = 2; }", State::Assigned),
            (
                "if c { x = 1; } else if d { x = 2; } else { return; }",
                State::Assigned,
            ),
            ("match k { 0 => x = 1, _ => { x = 2; } }", State::Assigned),
            ("if c { x = 1; } else { panic!(\"no\"); }", State::Assigned),
            ("{ if c { return; } x = 1; }", State::Assigned),
            ("if c { x = 1; }", State::Unsure),
            ("if c { x = 1; } else { f(); }", State::Unsure),
            ("while c { x = 1; }", State::Unsure),
            ("{ let x = 2; x = 1; }", State::Unsure),
            ("match k { Some(x) => x = 1, None => x = 2 }", State::Unsure),
            ("'a: { if c { break 'a; } x = 1; }", State::Unsure),
            ("y = 1;", State::Unassigned),
            ("if c { x = 1; } x = 3;", State::Assigned),
        ];
        for (code, want) in cases {
            let got = state_after(&stmts(code), "x", Some(State::Unassigned));
            assert_eq!(got, Some(want), "{code}");
        }
    }

    #[test]
    fn a_let_of_the_name_decides_anew() {
        assert_eq!(
            state_after(&stmts("let x = 1;"), "x", Some(State::Unassigned)),
            Some(State::Assigned)
        );
        assert_eq!(
            state_after(&stmts("x = 1; let x: u32;"), "x", Some(State::Unassigned)),
            Some(State::Unassigned)
        );
        assert_eq!(state_after(&stmts("x = 1;"), "x", None), None);
    }

    #[test]
    fn a_let_without_a_value_is_cut_into_one_let_per_name() {
        let cut = |code: &str| {
            let Stmt::Local(local) = syn::parse_str::<Stmt>(code).unwrap() else {
                panic!("a let")
            };
            normalize(&local).map(|stmts| {
                stmts
                    .iter()
                    .map(|s| s.to_token_stream().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        };
        assert_eq!(
            cut("let (n, s, w, e);").unwrap(),
            "let n ; let s ; let w ; let e ;"
        );
        assert_eq!(
            cut("let (mut a, b): (f32, u32);").unwrap(),
            "let mut a : f32 ; let b : u32 ;"
        );
        assert_eq!(cut("let x: f32;").unwrap(), "let x : f32 ;");
        assert!(cut("let S { a, b };").is_err());
        assert!(cut("let ref a;").is_err());
    }
}
