//! The rewrite of the statements a region runs per thread: `return`, `break` and `continue` that
//! leave the region or the split loops around it, and the thread functions into the region
//! loop's variables.

use super::names::{path_names, Names};
use super::segments::{loop_depth, Targets};
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::BTreeSet;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

/// Rewrites, in code a region runs per thread: `return` into leaving the region (`on_return`),
/// `break` and `continue` out of the split loops around it into leaving the trip
/// (`Regions::leave`, then out of the region), and the thread functions into the loop's
/// variables (outside closures, which may outlive an iteration).
pub(super) struct Rewrite<'a> {
    names: &'a Names,
    on_return: TokenStream2,
    /// The labels of the split loops around the region, outermost first, that `break` and
    /// `continue` may leave (`None`: none, the code is no region's statements).
    loops: Option<&'a [Option<String>]>,
    /// The loops and labelled blocks entered inside the statement being rewritten.
    targets: Targets,
    /// The depths of the split loops the rewritten code leaves.
    left_to: BTreeSet<usize>,
}

impl<'a> Rewrite<'a> {
    pub(super) fn new(names: &'a Names, on_return: TokenStream2) -> Self {
        Rewrite {
            names,
            on_return,
            loops: None,
            targets: Targets::default(),
            left_to: BTreeSet::new(),
        }
    }

    /// Runs `f` inside a loop (`is_loop`) or labelled block of the statement.
    fn entered(&mut self, label: Option<&syn::Label>, is_loop: bool, f: impl FnOnce(&mut Self)) {
        let saved = self.targets.enter(label, is_loop);
        f(self);
        self.targets = saved;
    }

    /// The code of a `break` (`is_break`) or `continue` with `label` at `span` that leaves the
    /// statement for a split loop around the region, if it does.
    fn leave(&mut self, label: Option<&syn::Lifetime>, is_break: bool, span: Span) -> Option<Expr> {
        let loops = self.loops?;
        if !self.targets.leaves(label) {
            return None;
        }
        let depth = loop_depth(loops, label)?;
        self.left_to.insert(depth);
        let code = 2 * depth as u32 + u32::from(is_break);
        let (regions, linear, leave) = (&self.names.regions, &self.names.linear, &self.names.leave);
        let site = quote_spanned!(span=> ::core::panic::Location::caller());
        Some(syn::parse_quote_spanned! {span=> {
            #regions.leave(#linear, #code, #site);
            break #leave;
        }})
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Return(_) => {
                let on_return = &self.on_return;
                *expr = syn::parse_quote_spanned!(expr.span()=> { #on_return });
                return;
            }
            Expr::Closure(_) | Expr::Async(_) => return,
            Expr::Call(call) if call.args.is_empty() => {
                if let Some(replacement) = self.thread_function(&call.func) {
                    *expr = replacement;
                    return;
                }
            }
            Expr::Break(b) if b.expr.is_none() => {
                if let Some(code) = self.leave(b.label.as_ref(), true, b.span()) {
                    *expr = code;
                }
                return;
            }
            Expr::Continue(c) => {
                if let Some(code) = self.leave(c.label.as_ref(), false, c.span()) {
                    *expr = code;
                }
                return;
            }
            Expr::While(w) => {
                let label = w.label.clone();
                self.entered(label.as_ref(), true, |s| {
                    syn::visit_mut::visit_expr_while_mut(s, w)
                });
                return;
            }
            Expr::Loop(l) => {
                let label = l.label.clone();
                self.entered(label.as_ref(), true, |s| {
                    syn::visit_mut::visit_expr_loop_mut(s, l)
                });
                return;
            }
            Expr::ForLoop(f) => {
                // The iterator is evaluated outside the loop.
                self.visit_expr_mut(&mut f.expr);
                let label = f.label.clone();
                self.entered(label.as_ref(), true, |s| s.visit_block_mut(&mut f.body));
                return;
            }
            Expr::Block(b) if b.label.is_some() => {
                let label = b.label.clone();
                self.entered(label.as_ref(), false, |s| s.visit_block_mut(&mut b.block));
                return;
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

impl Rewrite<'_> {
    /// The loop-variable form of `thread::thread_idx()` and the like.
    fn thread_function(&self, func: &Expr) -> Option<Expr> {
        let Expr::Path(path) = func else { return None };
        let names = path_names(path);
        let function = match names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["thread", f] | ["ferrocuda_std", "thread", f] => f.to_string(),
            _ => return None,
        };
        let Names {
            regions,
            tid,
            base_1d,
            ..
        } = self.names;
        Some(match function.as_str() {
            "thread_idx" => syn::parse_quote!(#tid),
            "block_idx" => syn::parse_quote!(#regions.block_idx()),
            "block_dim" => syn::parse_quote!(#regions.block_dim()),
            "grid_dim" => syn::parse_quote!(#regions.grid_dim()),
            "index_1d" => syn::parse_quote!((#base_1d + #tid.x as usize)),
            "index_2d" => syn::parse_quote!((
                #base_1d + #tid.x as usize,
                #regions.block_idx().y as usize * #regions.block_dim().y as usize
                    + #tid.y as usize,
            )),
            _ => return None,
        })
    }
}

/// The statements of `stmts` rewritten for a region, each ending in `;`, and the depths of the
/// split loops around it (`loops`: their labels) that a `break` or `continue` in them leaves.
pub(super) fn region_code(
    stmts: &[Stmt],
    names: &Names,
    on_return: TokenStream2,
    loops: &[Option<String>],
) -> (TokenStream2, BTreeSet<usize>) {
    let mut rewrite = Rewrite::new(names, on_return);
    rewrite.loops = Some(loops);
    let mut out = TokenStream2::new();
    for stmt in stmts {
        let mut stmt = stmt.clone();
        rewrite.visit_stmt_mut(&mut stmt);
        match stmt {
            Stmt::Expr(expr, None) => out.extend(quote!(#expr;)),
            stmt => out.extend(stmt.into_token_stream()),
        }
    }
    (out, rewrite.left_to)
}
