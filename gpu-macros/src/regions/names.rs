//! The bottom of the split path: name and syntax queries every pass uses (the names a pattern
//! or a `let` binds, the identifiers in some tokens, whether an operator assigns) and the
//! hygienic names of the generated code. It imports nothing else of `regions`.

use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use std::collections::BTreeSet;
use syn::visit::Visit;
use syn::{Block, Expr, ExprPath, Ident, Pat, Stmt};

/// Every identifier in `tokens` (for liveness: a name used later is carried).
pub(super) fn idents_of(tokens: TokenStream2, into: &mut BTreeSet<String>) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) => {
                into.insert(ident.to_string());
            }
            TokenTree::Group(group) => idents_of(group.stream(), into),
            _ => {}
        }
    }
}

/// The hygienic names of the generated code.
pub(super) struct Names {
    pub(super) regions: Ident,
    pub(super) tid: Ident,
    pub(super) base_1d: Ident,
    /// The thread's index in the block (x fastest) in a region's loop.
    pub(super) linear: Ident,
    /// A trip decision's vote.
    pub(super) go: Ident,
    label: syn::Lifetime,
    /// The block a thread leaving a split loop's trip jumps out of (`break`/`continue`).
    pub(super) leave: syn::Lifetime,
}

impl Names {
    pub(super) fn new() -> Self {
        let id = |name: &str| Ident::new(name, Span::mixed_site());
        Names {
            regions: id("__ferrocuda_regions"),
            tid: id("__ferrocuda_tid"),
            base_1d: id("__ferrocuda_base_1d"),
            linear: id("__ferrocuda_linear"),
            go: id("__ferrocuda_go"),
            label: syn::Lifetime::new("'__ferrocuda_region", Span::mixed_site()),
            leave: syn::Lifetime::new("'__ferrocuda_leave", Span::mixed_site()),
        }
    }
    pub(super) fn label(&self) -> syn::Lifetime {
        self.label.clone()
    }
}

/// The regions' hygienic argument name, for the generated function's signature.
pub(crate) fn regions_ident() -> Ident {
    Names::new().regions
}

/// The segments of a path expression, `a::b::c` → `["a", "b", "c"]`.
pub(super) fn path_names(path: &ExprPath) -> Vec<String> {
    path.path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect()
}

/// Whether `stmts` call a warp operation (other than the lane and warp queries).
pub(super) fn has_warp_operation(stmts: &[Stmt]) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_path(&mut self, path: &'ast ExprPath) {
            let names = path_names(path);
            let query = matches!(
                names.last().map(String::as_str),
                Some("lane_id" | "warp_id" | "warp_mask" | "WARP_SIZE")
            );
            if names.iter().any(|s| s == "warp") && !query {
                self.0 = true;
            }
        }
    }
    let mut find = Find(false);
    stmts.iter().for_each(|stmt| find.visit_stmt(stmt));
    find.0
}

/// Collects every name a pattern binds (`let`s, closure and loop patterns, `match` arms),
/// outside nested items.
pub(super) struct Bindings<'a>(pub(super) &'a mut BTreeSet<String>);

impl<'ast> Visit<'ast> for Bindings<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Every name bound by a `let` or closure parameter anywhere in `block`.
pub(super) fn collect_all_locals(block: &Block, names: &mut BTreeSet<String>) {
    Bindings(names).visit_block(block);
}

/// The names a pattern binds, in order.
pub(super) fn pattern_names(pat: &Pat, names: &mut Vec<Ident>) {
    struct Collect<'a>(&'a mut Vec<Ident>);
    impl<'ast> Visit<'ast> for Collect<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.clone());
            syn::visit::visit_pat_ident(self, p);
        }
        // A path in a pattern (`None`, a constant) binds nothing.
        fn visit_expr(&mut self, _: &'ast Expr) {}
    }
    Collect(names).visit_pat(pat);
}

/// The names the top-level `let`s of `stmts` bind.
pub(super) fn declared(stmts: &[Stmt]) -> Vec<Ident> {
    let mut names = Vec::new();
    for stmt in stmts {
        if let Stmt::Local(local) = stmt {
            pattern_names(&local.pat, &mut names);
        }
    }
    names
}

/// Whether `op` assigns (`+=` and the like).
pub(super) fn is_assignment(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}
