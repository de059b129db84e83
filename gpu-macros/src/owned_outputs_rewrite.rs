//! The rewriting of an owned output's uses onto its plain-store handle in the elementwise
//! loop, and of a top-level grid-stride loop into a loop over the thread's run. Which outputs
//! qualify is decided in `owned_outputs`.

use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, ExprMethodCall, Ident, Stmt};

use crate::owned_outputs::{grid_stride_loop, index_binding, receiver_is};

/// The hygienic name of `out`'s handle in the elementwise loop.
pub(crate) fn handle_name(out: &Ident) -> Ident {
    Ident::new(&format!("__ferrocuda_owned_{out}"), Span::mixed_site())
}

/// Rewrites each use of an output of `owned` in `stmts` onto its handle, with `own` the running
/// thread's own index (an expression of the loop's variables) and `threads` the grid's threads
/// along x; a top-level grid-stride loop whose variable indexes an owned output becomes a loop
/// over the thread's run (`GridStrideRun`), its accesses checked against the run.
/// `slices`: the kernel's 1D slice parameters, whose lengths the rewritten loop compares with
/// each chunk's end once.
pub(crate) fn rewrite(
    stmts: &[Stmt],
    owned: &[Ident],
    slices: &[Ident],
    own: &TokenStream2,
    threads: &TokenStream2,
) -> Vec<Stmt> {
    let names: BTreeSet<String> = owned.iter().map(ToString::to_string).collect();
    let run = Ident::new("__ferrocuda_grid_stride_run", Span::mixed_site());
    stmts
        .iter()
        .map(|stmt| {
            let mut stmt = stmt.clone();
            let looped = grid_stride_loop(&stmt).map(|(var, _)| var);
            let mut rewrite = Rewrite {
                names: &names,
                own,
                in_run: looped.as_ref().map(|var| (var.as_str(), &run)),
                used_run: false,
            };
            let indexed = looped.as_ref().map(|var| {
                indexed_at(&stmt, var, slices, owned)
                    .into_values()
                    .collect::<Vec<_>>()
            });
            rewrite.visit_stmt_mut(&mut stmt);
            if rewrite.used_run {
                stmt = over_the_run(&stmt, &run, &indexed.unwrap_or_default(), own, threads);
            }
            stmt
        })
        .collect()
}

/// The lengths the elementwise loop compares a row's last index with, so that a copy of the row
/// knows every own-index access in bounds: each owned output's handle, and each slice of
/// `slices` indexed as `s[i]` with `i` a top-level `let i = thread::index_1d();`.
pub(crate) fn own_index_lengths(
    stmts: &[Stmt],
    owned: &[Ident],
    slices: &[Ident],
) -> Vec<TokenStream2> {
    let mut lengths: BTreeMap<String, TokenStream2> = owned
        .iter()
        .map(|out| {
            let handle = handle_name(out);
            (out.to_string(), quote!(#handle.len()))
        })
        .collect();
    let indices: Vec<String> = stmts.iter().filter_map(index_binding).collect();
    for var in &indices {
        for stmt in stmts {
            for (name, len) in indexed_at(stmt, var, slices, &[]) {
                lengths.entry(name).or_insert(len);
            }
        }
    }
    lengths.into_values().collect()
}

/// The lengths `stmt` (a grid-stride loop over `var`) relies on: of each slice of `slices`
/// indexed as `s[var]`, and of each handle of an output of `owned` accessed at `var`.
fn indexed_at(
    stmt: &Stmt,
    var: &str,
    slices: &[Ident],
    owned: &[Ident],
) -> BTreeMap<String, TokenStream2> {
    struct Indexed<'a> {
        var: &'a str,
        slices: &'a [Ident],
        owned: &'a [Ident],
        found: BTreeMap<String, TokenStream2>,
    }
    impl<'ast> Visit<'ast> for Indexed<'_> {
        fn visit_expr_index(&mut self, index: &'ast syn::ExprIndex) {
            if let (Expr::Path(p), Expr::Path(i)) = (&*index.expr, &*index.index) {
                let slice = self.slices.iter().find(|s| p.path.is_ident(*s));
                if let (Some(slice), true) = (slice, i.path.is_ident(self.var)) {
                    self.found.insert(slice.to_string(), quote!(#slice.len()));
                }
            }
            syn::visit::visit_expr_index(self, index);
        }
        fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
            let at =
                |e: Option<&Expr>| matches!(e, Some(Expr::Path(p)) if p.path.is_ident(self.var));
            if let Some(out) = self
                .owned
                .iter()
                .find(|o| receiver_is(call, &o.to_string()))
            {
                if at(call.args.first()) {
                    let handle = handle_name(out);
                    self.found.insert(out.to_string(), quote!(#handle.len()));
                }
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let mut indexed = Indexed {
        var,
        slices,
        owned,
        found: BTreeMap::new(),
    };
    indexed.visit_stmt(stmt);
    indexed.found
}

/// `for i in thread::grid_stride(n) { body }` as a loop over the running thread's run of `n`,
/// in chunks with a deadline check point before each. Each chunk whose end is within every
/// length in `lengths` and within the run runs a copy of the body in which LLVM can see each
/// index check pass (so that the loop vectorises); any other runs the body as written.
fn over_the_run(
    stmt: &Stmt,
    run: &Ident,
    lengths: &[TokenStream2],
    own: &TokenStream2,
    threads: &TokenStream2,
) -> Stmt {
    let Stmt::Expr(Expr::ForLoop(for_loop), semi) = stmt else {
        unreachable!("only grid-stride loops are rewritten")
    };
    let Expr::Call(call) = &*for_loop.expr else {
        unreachable!("a grid-stride loop's iterator is a call")
    };
    let (pat, body, count) = (&for_loop.pat, &for_loop.body, &call.args[0]);
    let chunk = Ident::new("__ferrocuda_chunk", Span::mixed_site());
    let expr: Expr = syn::parse_quote_spanned! {for_loop.span()=> {
        let #run = ::ferrocuda_std::cpu::elementwise::GridStrideRun::new(#count, #own, #threads);
        for #chunk in #run.chunks() {
            // The same loop twice, on purpose: only the first knows its indices in bounds.
            #[allow(clippy::if_same_then_else)]
            if #run.holds(&#chunk) #(&& #chunk.end <= #lengths)* {
                for #pat in #chunk #body
            } else {
                for #pat in #chunk #body
            };
        }
    }};
    Stmt::Expr(expr, *semi)
}

/// Replaces each accepted use by a call of the handle; the arguments are evaluated first,
/// outside the `unsafe` block, in their order.
struct Rewrite<'a> {
    names: &'a BTreeSet<String>,
    own: &'a TokenStream2,
    /// In a grid-stride loop: its variable and the name of the thread's run.
    in_run: Option<(&'a str, &'a Ident)>,
    /// Whether an access at the loop's variable was rewritten onto the run.
    used_run: bool,
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
        let (index, value) = (
            Ident::new("__ferrocuda_index", Span::mixed_site()),
            Ident::new("__ferrocuda_value", Span::mixed_site()),
        );
        let args: Vec<&Expr> = call.args.iter().collect();
        // An access at the grid-stride loop's variable is checked against the thread's run.
        let run = self
            .in_run
            .filter(|(var, _)| matches!(args.first(), Some(Expr::Path(p)) if p.path.is_ident(var)));
        let (method, owner) = match run {
            Some((_, run)) if args.len() <= 2 && !args.is_empty() => {
                self.used_run = true;
                (format_ident!("{}_in", call.method), quote!(&#run))
            }
            _ => (call.method.clone(), own.clone()),
        };
        // The call keeps the user's span: `#[track_caller]` reports their line.
        let span = call.span();
        *expr = match args.as_slice() {
            [i, v] => syn::parse_quote_spanned! {span=> {
                let #index: usize = #i;
                let #value = #v;
                // SAFETY: the owner is the running thread's own index, or its run of a
                // grid-stride loop whose count is a buffer's length, and the handle exists only
                // in a 1D launch (see `OwnedOut::new`).
                unsafe { #handle.#method(#owner, #index, #value) }
            }},
            [i] => syn::parse_quote_spanned! {span=> {
                let #index: usize = #i;
                // SAFETY: as for `set`.
                unsafe { #handle.#method(#owner, #index) }
            }},
            _ => syn::parse_quote_spanned!(span=> #handle.#method()),
        };
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
