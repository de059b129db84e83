//! Which `Out` parameters of an elementwise kernel each thread touches only at its own
//! `index_1d()`, and the rewriting of their uses onto the elementwise loop's plain-store handle
//! (`ferrocuda_std::__private::OwnedOut`; why that is sound is in its module's documentation).
//!
//! An output qualifies when every mention of its name in the body is one of `out.set(i, v)`,
//! `out.get(i)`, `out.len()`, `out.is_empty()`, outside closures, async blocks, nested items and
//! macro calls, with `i` either `thread::index_1d()` itself or a name bound exactly once in the
//! body, by a top-level `let i = thread::index_1d();`. The output is then never copied, moved,
//! passed to a function or given to a macro, and every access it gets is at the thread's own
//! index.
//!
//! Or every mention with an index is inside one top-level grid-stride loop, `for i in
//! thread::grid_stride(p.len()) { .. }`, at its `i`: `p` a 1D slice or output parameter (so
//! that `p.len()` is one value for the whole launch), `i` bound nowhere else, no label and no
//! `break` in the loop (whose plain-store copy is two nested loops). Each thread then touches
//! only its own run of that loop's indices. The run-time side (a 1D launch, the index compared
//! with the loop's own, or with the thread's run) is in `OwnedOut`; this analysis only decides
//! when to take that path. The rewriting itself is in `owned_outputs_rewrite`.

use proc_macro2::{TokenStream as TokenStream2, TokenTree};
use quote::quote;
use std::collections::{BTreeMap, BTreeSet};
use syn::visit::Visit;
use syn::{Expr, ExprMethodCall, Ident, Pat, Stmt};

/// The outputs among `outputs` (the kernel's 1D `Out` parameters) that qualify in `stmts`;
/// `params`: every parameter's name (a parameter is a binding of its name); `buffers`: the 1D
/// slice and output parameters, whose `len()` every thread of a launch sees the same.
pub(crate) fn owned_outputs(
    stmts: &[Stmt],
    outputs: &[Ident],
    params: &[Ident],
    buffers: &[Ident],
) -> Vec<Ident> {
    let mut bindings = BTreeMap::<String, usize>::new();
    for param in params {
        *bindings.entry(param.to_string()).or_default() += 1;
    }
    let mut count = CountBindings(&mut bindings);
    stmts.iter().for_each(|s| count.visit_stmt(s));
    let once = |name: &String| bindings.get(name) == Some(&1);
    let indices: BTreeSet<String> = stmts
        .iter()
        .filter_map(index_binding)
        .filter(once)
        .collect();
    let buffers: BTreeSet<String> = buffers.iter().map(ToString::to_string).collect();
    // Per top-level statement, the variable of a qualifying grid-stride loop.
    let loops: Vec<Option<String>> = stmts
        .iter()
        .map(|stmt| {
            let (var, count) = grid_stride_loop(stmt)?;
            let uniform = count_of_buffer(count).is_some_and(|p| buffers.contains(&p) && once(&p));
            (uniform && once(&var) && !has_break(stmt)).then_some(var)
        })
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
                loop_var: None,
                owners: BTreeSet::new(),
                accepted: 0,
            };
            for (k, stmt) in stmts.iter().enumerate() {
                uses.loop_var = loops[k].as_ref().map(|var| (k, var.as_str()));
                uses.visit_stmt(stmt);
            }
            let mentioned = mentions.get(&name).copied().unwrap_or(0);
            // One kind of owner: the thread's index, or one loop's runs (two loops of different
            // counts split the indices differently between the threads).
            mentioned > 0 && uses.accepted == mentioned && uses.owners.len() <= 1
        })
        .cloned()
        .collect()
}

/// `(i, n)` for `for i in thread::grid_stride(n) { .. }` (or `ferrocuda_std::thread::..`),
/// unlabelled, with a plain `i`.
pub(crate) fn grid_stride_loop(stmt: &Stmt) -> Option<(String, &Expr)> {
    let Stmt::Expr(Expr::ForLoop(for_loop), _) = stmt else {
        return None;
    };
    let Pat::Ident(var) = &*for_loop.pat else {
        return None;
    };
    let plain = var.by_ref.is_none() && var.mutability.is_none() && var.subpat.is_none();
    let Expr::Call(call) = &*for_loop.expr else {
        return None;
    };
    let unlabelled = for_loop.label.is_none() && for_loop.attrs.is_empty();
    let [count] = call.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    (plain && unlabelled && is_thread_function(&call.func, "grid_stride"))
        .then(|| (var.ident.to_string(), count))
}

/// `p` for `p.len()`.
fn count_of_buffer(count: &Expr) -> Option<String> {
    let Expr::MethodCall(call) = count else {
        return None;
    };
    let Expr::Path(path) = &*call.receiver else {
        return None;
    };
    let name = path.path.get_ident()?.to_string();
    (call.method == "len" && call.args.is_empty() && receiver_is(call, &name)).then_some(name)
}

/// Whether `stmt` holds a `break` anywhere (closures and nested loops included: a cautious
/// test, since only a `break` of the grid-stride loop itself would change its meaning when the
/// loop is split into chunks).
fn has_break(stmt: &Stmt) -> bool {
    struct Breaks(bool);
    impl<'ast> Visit<'ast> for Breaks {
        fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
            self.0 = true;
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // A macro's tokens may expand to a `break`.
            let mut idents = BTreeMap::new();
            count_idents(mac.tokens.clone(), &mut idents);
            self.0 |= idents.contains_key("break") || !standard_expression_macro(mac);
        }
    }
    let mut breaks = Breaks(false);
    breaks.visit_stmt(stmt);
    breaks.0
}

/// `i` for a top-level `let i = thread::index_1d();` (or `let i: usize = ...`).
pub(crate) fn index_binding(stmt: &Stmt) -> Option<String> {
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
    call.args.is_empty() && is_thread_function(&call.func, "index_1d")
}

/// Whether `func` is the path `thread::NAME` or `ferrocuda_std::thread::NAME`.
fn is_thread_function(func: &Expr, name: &str) -> bool {
    let Expr::Path(path) = func else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    path.qself.is_none()
        && matches!(
            names.as_slice(),
            ["thread", last] | ["ferrocuda_std", "thread", last] if *last == name
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
pub(crate) fn receiver_is(call: &ExprMethodCall, name: &str) -> bool {
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
    /// In the top-level statement being visited, if it is a qualifying grid-stride loop: its
    /// position and variable.
    loop_var: Option<(usize, &'a str)>,
    /// Who owns the elements the accepted accesses reach: `None` the thread's `index_1d()`,
    /// `Some(k)` the runs of the loop at statement `k`.
    owners: BTreeSet<Option<usize>>,
    accepted: usize,
}

impl Uses<'_> {
    /// The owner of the element at `expr`, if it is an own index.
    fn owner(&self, expr: &Expr) -> Option<Option<usize>> {
        let Expr::Path(path) = expr else {
            return is_index_1d(expr).then_some(None);
        };
        let name = path.path.get_ident().filter(|_| path.qself.is_none())?;
        match self.loop_var {
            Some((k, var)) if name == var => Some(Some(k)),
            _ => self.indices.contains(&name.to_string()).then_some(None),
        }
    }
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        if receiver_is(call, self.name) {
            let args: Vec<&Expr> = call.args.iter().collect();
            let accepted = match (call.method.to_string().as_str(), args.as_slice()) {
                ("set", [index, _]) | ("get", [index]) => {
                    let owner = self.owner(index);
                    self.owners.extend(owner);
                    owner.is_some()
                }
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

#[cfg(test)]
mod tests {
    use super::owned_outputs;
    use syn::{Block, Ident};

    fn owned(body: &str) -> Vec<String> {
        let block: Block = syn::parse_str(body).unwrap();
        let id = |n: &str| Ident::new(n, proc_macro2::Span::call_site());
        let outputs = [id("out"), id("other")];
        let params = [id("a"), id("out"), id("other"), id("n")];
        let buffers = [id("a"), id("out"), id("other")];
        owned_outputs(&block.stmts, &outputs, &params, &buffers)
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
    fn grid_stride_loops_over_a_buffer_length_qualify() {
        let black_scholes = "{ for i in thread::grid_stride(out.len()) { \
                             let (c, p) = f(a[i]); out.set(i, c); other.set(i, p); } }";
        assert_eq!(owned(black_scholes), ["out", "other"]);
        let scale = "{ for i in ferrocuda_std::thread::grid_stride(a.len()) { \
                     if i < out.len() { out.set(i, out.get(i) * 2.0); } continue; } }";
        assert_eq!(owned(scale), ["out"]);
    }

    #[test]
    fn every_other_grid_stride_shape_keeps_the_atomic_path() {
        for body in [
            // A count that is not one buffer's length for every thread.
            "{ for i in thread::grid_stride(n as usize) { out.set(i, 1.0); } }",
            "{ for i in thread::grid_stride(thread::index_1d()) { out.set(i, 1.0); } }",
            "{ let a = &a[1..]; for i in thread::grid_stride(a.len()) { out.set(i, 1.0); } }",
            "{ for i in thread::grid_stride(out.len() - 1) { out.set(i, 1.0); } }",
            // Two loops (or a loop and the thread's index) split the indices differently.
            "{ for i in thread::grid_stride(a.len()) { out.set(i, 1.0); } \
               for j in thread::grid_stride(out.len()) { out.set(j, 2.0); } }",
            "{ let k = thread::index_1d(); out.set(k, 0.0); \
               for i in thread::grid_stride(out.len()) { out.set(i, 1.0); } }",
            // Inside another loop (each thread would run it more than once), or nested.
            "{ for _ in 0..2 { for i in thread::grid_stride(out.len()) { out.set(i, 1.0); } } }",
            // The variable rebound, moved, or the loop broken out of, labelled, macro'd.
            "{ for i in thread::grid_stride(out.len()) { let i = i + 1; out.set(i, 1.0); } }",
            "{ for i in thread::grid_stride(out.len()) { out.set(i + 1, 1.0); } }",
            "{ for i in thread::grid_stride(out.len()) { if i > 4 { break; } out.set(i, 1.0); } }",
            "{ 'l: for i in thread::grid_stride(out.len()) { out.set(i, 1.0); } }",
            "{ for i in thread::grid_stride(out.len()) { out.set(i, 1.0); stop!(); } }",
            "{ for i in thread::grid_stride(out.len()) { out.set(i, 1.0); } out.set(0, 1.0); }",
            "{ for mut i in thread::grid_stride(out.len()) { out.set(i, 1.0); } }",
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
