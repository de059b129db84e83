//! Which `Out` parameters of an elementwise kernel each thread touches only at its own
//! `index_1d()`, and the rewriting of their uses onto the elementwise loop's plain-store handle
//! (`ferrocuda_std::__private::OwnedOut`; why that is sound is in its module's documentation).
//!
//! An output qualifies when every mention of its name in the body is one of `out.set(i, v)`,
//! `out.get(i)`, `out.len()`, `out.is_empty()`, outside closures, async blocks, nested items and
//! macro calls, with `i` either `thread::index_1d()` itself or a name bound exactly once in the
//! body, by a top-level `let i = thread::index_1d();`. The output is then never copied, moved,
//! passed to a function or given to a macro, and every access it gets is at the thread's own
//! index. The run-time side (a 1D launch, the index compared with the loop's own) is in
//! `OwnedOut`; this analysis only decides when to take that path.

use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, ExprMethodCall, Ident, Pat, Stmt};

/// The outputs among `outputs` (the kernel's 1D `Out` parameters) that qualify in `stmts`;
/// `params`: every parameter's name (a parameter is a binding of its name).
pub(crate) fn owned_outputs(stmts: &[Stmt], outputs: &[Ident], params: &[Ident]) -> Vec<Ident> {
    let mut bindings = BTreeMap::<String, usize>::new();
    for param in params {
        *bindings.entry(param.to_string()).or_default() += 1;
    }
    let mut count = CountBindings(&mut bindings);
    stmts.iter().for_each(|s| count.visit_stmt(s));
    let indices: BTreeSet<String> = stmts
        .iter()
        .filter_map(index_binding)
        .filter(|name| bindings.get(name) == Some(&1))
        .collect();
    let mut mentions = BTreeMap::<String, usize>::new();
    for stmt in stmts {
        count_idents(quote!(#stmt), &mut mentions);
    }
    outputs
        .iter()
        .filter(|out| {
            let name = out.to_string();
            let mut uses = Uses {
                name: &name,
                indices: &indices,
                accepted: 0,
            };
            stmts.iter().for_each(|s| uses.visit_stmt(s));
            let mentioned = mentions.get(&name).copied().unwrap_or(0);
            mentioned > 0 && uses.accepted == mentioned
        })
        .cloned()
        .collect()
}

/// The hygienic name of `out`'s handle in the elementwise loop.
pub(crate) fn handle_name(out: &Ident) -> Ident {
    Ident::new(&format!("__ferrocuda_owned_{out}"), Span::mixed_site())
}

/// Rewrites each use of an output of `owned` in `stmts` onto its handle, with `own` the running
/// thread's own index (an expression of the loop's variables).
pub(crate) fn rewrite(stmts: &[Stmt], owned: &[Ident], own: &TokenStream2) -> Vec<Stmt> {
    let names: BTreeSet<String> = owned.iter().map(ToString::to_string).collect();
    let mut rewrite = Rewrite { names, own };
    stmts
        .iter()
        .map(|stmt| {
            let mut stmt = stmt.clone();
            rewrite.visit_stmt_mut(&mut stmt);
            stmt
        })
        .collect()
}

/// `i` for a top-level `let i = thread::index_1d();` (or `let i: usize = ...`).
fn index_binding(stmt: &Stmt) -> Option<String> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let pat = match &local.pat {
        Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    let Pat::Ident(ident) = pat else { return None };
    let plain = ident.by_ref.is_none() && ident.mutability.is_none() && ident.subpat.is_none();
    let init = local.init.as_ref()?;
    (plain && init.diverge.is_none() && is_index_1d(&init.expr)).then(|| ident.ident.to_string())
}

/// Whether `expr` is `thread::index_1d()` or `ferrocuda_std::thread::index_1d()`.
fn is_index_1d(expr: &Expr) -> bool {
    let Expr::Call(call) = expr else { return false };
    let Expr::Path(path) = &*call.func else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    call.args.is_empty()
        && path.qself.is_none()
        && matches!(
            names.as_slice(),
            ["thread", "index_1d"] | ["ferrocuda_std", "thread", "index_1d"]
        )
}

/// `assert!`, `println!` and the other standard macros whose arguments are expressions: the
/// body sees no name they bind, and `#[kernel]` can look into them.
pub(crate) fn standard_expression_macro(mac: &syn::Macro) -> bool {
    let name = mac.path.segments.last().map(|s| s.ident.to_string());
    matches!(
        name.as_deref(),
        Some(
            "assert"
                | "assert_eq"
                | "assert_ne"
                | "debug_assert"
                | "debug_assert_eq"
                | "debug_assert_ne"
                | "panic"
                | "unreachable"
                | "matches"
                | "println"
        )
    )
}

/// Every name a pattern binds anywhere (closures' parameters and match arms too), counted.
struct CountBindings<'a>(&'a mut BTreeMap<String, usize>);

impl<'ast> Visit<'ast> for CountBindings<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        *self.0.entry(p.ident.to_string()).or_default() += 1;
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // A macro may bind any name it is given: count each identifier in it as a binding,
        // but for the standard ones that bind none (`assert!(i < n)`). Should one of those
        // be redefined to bind, the handle's run-time check stops the thread.
        if !standard_expression_macro(mac) {
            count_idents(mac.tokens.clone(), self.0);
        }
    }
}

/// Every identifier token in `tokens`, counted (macro bodies included).
fn count_idents(tokens: TokenStream2, into: &mut BTreeMap<String, usize>) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) => *into.entry(ident.to_string()).or_default() += 1,
            TokenTree::Group(group) => count_idents(group.stream(), into),
            _ => {}
        }
    }
}

/// `name.method(args)` with `name` a bare identifier and no turbofish.
fn receiver_is(call: &ExprMethodCall, name: &str) -> bool {
    let Expr::Path(path) = &*call.receiver else {
        return false;
    };
    path.qself.is_none()
        && path.attrs.is_empty()
        && path.path.get_ident().is_some_and(|i| i == name)
        && call.turbofish.is_none()
}

/// Counts the accepted uses of one output (outside closures, async blocks, items and macros,
/// which it does not enter: a mention there is never accepted).
struct Uses<'a> {
    name: &'a str,
    indices: &'a BTreeSet<String>,
    accepted: usize,
}

impl Uses<'_> {
    fn is_own_index(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Path(path) => {
                path.qself.is_none()
                    && path
                        .path
                        .get_ident()
                        .is_some_and(|i| self.indices.contains(&i.to_string()))
            }
            expr => is_index_1d(expr),
        }
    }
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        if receiver_is(call, self.name) {
            let args: Vec<&Expr> = call.args.iter().collect();
            let accepted = match (call.method.to_string().as_str(), args.as_slice()) {
                ("set", [index, _]) | ("get", [index]) => self.is_own_index(index),
                ("len" | "is_empty", []) => true,
                _ => false,
            };
            self.accepted += usize::from(accepted);
            // The receiver is counted; the arguments may hold more uses.
            call.args.iter().for_each(|arg| self.visit_expr(arg));
            return;
        }
        syn::visit::visit_expr_method_call(self, call);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
}

/// Replaces each accepted use by a call of the handle; the arguments are evaluated first,
/// outside the `unsafe` block, in their order.
struct Rewrite<'a> {
    names: BTreeSet<String>,
    own: &'a TokenStream2,
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        let Expr::MethodCall(call) = &*expr else {
            return;
        };
        let Some(out) = self.names.iter().find(|n| receiver_is(call, n)) else {
            return;
        };
        let handle = handle_name(&format_ident!("{out}"));
        let own = self.own;
        let method = &call.method;
        let (index, value) = (
            Ident::new("__ferrocuda_index", Span::mixed_site()),
            Ident::new("__ferrocuda_value", Span::mixed_site()),
        );
        let args: Vec<&Expr> = call.args.iter().collect();
        // The call keeps the user's span: `#[track_caller]` reports their line.
        let span = call.span();
        *expr = match args.as_slice() {
            [i, v] => syn::parse_quote_spanned! {span=> {
                let #index: usize = #i;
                let #value = #v;
                // SAFETY: `own` is the running thread's own index, and the handle exists only
                // in a 1D launch (see `OwnedOut::new`).
                unsafe { #handle.#method(#own, #index, #value) }
            }},
            [i] => syn::parse_quote_spanned! {span=> {
                let #index: usize = #i;
                // SAFETY: as for `set`.
                unsafe { #handle.#method(#own, #index) }
            }},
            _ => syn::parse_quote_spanned!(span=> #handle.#method()),
        };
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::owned_outputs;
    use syn::{Block, Ident};

    fn owned(body: &str) -> Vec<String> {
        let block: Block = syn::parse_str(body).unwrap();
        let id = |n: &str| Ident::new(n, proc_macro2::Span::call_site());
        let outputs = [id("out"), id("other")];
        let params = [id("a"), id("out"), id("other")];
        owned_outputs(&block.stmts, &outputs, &params)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn own_index_uses_qualify() {
        let vector_add =
            "{ let i = thread::index_1d(); if i < out.len() { out.set(i, a[i] + 1.0); } }";
        assert_eq!(owned(vector_add), ["out"]);
        let forms = "{ let i: usize = ferrocuda_std::thread::index_1d(); \
                     if !out.is_empty() && i < out.len() { out.set(i, out.get(i) * 2.0); } \
                     other.set(thread::index_1d(), 1.0); }";
        assert_eq!(owned(forms), ["out", "other"]);
    }

    #[test]
    fn every_other_shape_keeps_the_atomic_path() {
        for body in [
            // The index rebound, shadowed, or from elsewhere.
            "{ let i = thread::index_1d(); let i = i + 1; out.set(i, 1.0); }",
            "{ let i = thread::index_1d(); if true { let i = 0; } out.set(i, 1.0); }",
            "{ let i = thread::index_1d(); let f = |i: usize| i; out.set(i, 1.0); }",
            "{ let mut i = thread::index_1d(); out.set(i, 1.0); }",
            "{ let i = thread::index_1d() + 1; out.set(i, 1.0); }",
            "{ let i = thread::thread_idx().x as usize; out.set(i, 1.0); }",
            "{ let i = thread::index_1d(); out.set(i + 0, 1.0); }",
            "{ let i = thread::index_1d(); for i in 0..2 { } out.set(i, 1.0); }",
            "{ let i = thread::index_1d(); let j = i; out.set(j, 1.0); }",
            // The output copied, passed on, in a closure or macro, or used otherwise.
            "{ let i = thread::index_1d(); helper(out, i); }",
            "{ let i = thread::index_1d(); let o = out; o.set(i, 1.0); }",
            "{ let i = thread::index_1d(); (|| out.set(i, 1.0))(); }",
            "{ let i = thread::index_1d(); out.set(i, 1.0); my_macro!(out); }",
            "{ let i = thread::index_1d(); out.atomic_add(i, 1.0); }",
            "{ let i = thread::index_1d(); let p = out.as_mut_ptr(); }",
            "{ let i = thread::index_1d(); out.set(i, 1.0); out.set(0, 2.0); }",
            // A macro may bind the index; `out` in an assertion is a mention too.
            "{ let i = thread::index_1d(); rebind!(i); out.set(i, 1.0); }",
            "{ let i = thread::index_1d(); assert!(i < out.len()); out.set(i, 1.0); }",
        ] {
            assert!(!owned(body).contains(&"out".to_string()), "{body}");
        }
    }

    #[test]
    fn an_output_the_body_never_mentions_is_left_alone() {
        assert!(owned("{ let i = thread::index_1d(); }").is_empty());
    }

    #[test]
    fn a_standard_assertion_on_the_index_binds_nothing() {
        let body = "{ let i = thread::index_1d(); assert!(i < a.len()); out.set(i, a[i]); }";
        assert_eq!(owned(body), ["out"]);
    }
}
