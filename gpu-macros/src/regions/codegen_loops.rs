//! The split loops of [`Gen`]: a loop with a barrier in it (every thread's decision per trip,
//! then the body's regions) and a loop whose condition the block decides once (`uniform`).

use super::carried::{restrict, Carried};
use super::codegen::{
    after_trip, dedup_last, first_barrier, reunassigned, seg_idents, trip_end, Gen, LoopCtx,
};
use super::names::pattern_names;
use super::rewrite::Rewrite;
use super::segments::Seg;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use std::collections::BTreeSet;
use syn::visit_mut::VisitMut;
use syn::{Ident, Stmt};

impl Gen {
    /// A loop with a barrier in it: per trip, every thread's decision, then the body's regions.
    pub(super) fn trip_loop(
        &mut self,
        seg: &Seg,
        carried: &[Carried],
        scope: &[Ident],
        after: &BTreeSet<String>,
    ) -> (TokenStream2, Vec<Carried>) {
        let (body, span) = match seg {
            Seg::While { body, span, .. } | Seg::For { body, span, .. } => (body, *span),
            _ => unreachable!("a loop segment"),
        };
        let mut used = after.clone();
        seg_idents(seg, &mut used);
        let mut out = TokenStream2::new();
        let mut head_names: Vec<Ident> = scope
            .iter()
            .filter(|n| used.contains(&n.to_string()))
            .cloned()
            .collect();
        dedup_last(&mut head_names);
        let regions = self.names.regions.clone();
        if let Seg::While { uniform: true, .. } | Seg::For { uniform: true, .. } = seg {
            return self.uniform_loop(seg, carried, scope, &used, &head_names);
        }
        // For a `for`: the iterator and the current item are per-thread variables of the head.
        let (head, decide_code, body_prelude, prelude_binds) = match seg {
            Seg::For { pat, iter, .. } => {
                let (it, item) = (self.fresh("iter"), self.fresh("item"));
                let mut rewritten = (**iter).clone();
                Rewrite::new(&self.names, TokenStream2::new()).visit_expr_mut(&mut rewritten);
                let init: Stmt = syn::parse_quote! {
                    let (#it, #item) = (::core::iter::IntoIterator::into_iter(#rewritten), ::core::option::Option::None);
                };
                head_names.push(it.clone());
                head_names.push(item.clone());
                let (code, head) = self.region(
                    carried,
                    TokenStream2::new(),
                    &[],
                    &[init],
                    &head_names,
                    None,
                );
                out.extend(code);
                // The body's regions carry them to the next trip.
                used.insert(it.to_string());
                used.insert(item.to_string());
                let go = &self.names.go;
                let decide = quote! {
                    #item = #it.next();
                    let #go = #item.is_some();
                };
                let prelude = quote! {
                    let #pat = match #item.take() {
                        ::core::option::Option::Some(value) => value,
                        ::core::option::Option::None => ::core::unreachable!("the block decided on another trip"),
                    };
                };
                let mut binds = Vec::new();
                pattern_names(pat, &mut binds);
                (head, decide, prelude, binds)
            }
            Seg::While { cond, .. } => {
                let mut rewritten = (**cond).clone();
                Rewrite::new(&self.names, TokenStream2::new()).visit_expr_mut(&mut rewritten);
                let go = &self.names.go;
                let decide = quote!(let #go: bool = #rewritten;);
                (
                    restrict(carried, &head_names),
                    decide,
                    TokenStream2::new(),
                    Vec::new(),
                )
            }
            _ => unreachable!("a loop segment"),
        };
        let head_names: Vec<Ident> = head.iter().map(|c| c.name.clone()).collect();
        let first_barrier = first_barrier(body).unwrap_or(span);
        let (go, linear) = (&self.names.go, &self.names.linear);
        let decide_code = quote! {
            #decide_code
            #regions.vote(#linear, #go);
        };
        // The trip decision is a region whose code votes.
        let (decide_region, _) = self.region(&head, decide_code, &[], &[], &head_names, None);
        let mut body_scope = scope.to_vec();
        body_scope.extend(head_names.iter().cloned());
        body_scope.extend(prelude_binds.iter().cloned());
        let later = after_trip(body, &prelude_binds, &used);
        let (depth, label) = self.enter_loop(seg, &head_names);
        let (body_code, end) = self.segs_with_prelude(
            body,
            head.clone(),
            body_scope,
            &later,
            &trip_end(&head),
            (body_prelude, &prelude_binds),
        );
        let left = self.loops.pop().is_some_and(|l| l.left);
        if let Err(error) = Self::close(&reunassigned(end, &head), &head) {
            out.extend(error);
        }
        let loop_site = quote_spanned!(span=> ::core::panic::Location::caller());
        let barrier_site = quote_spanned!(first_barrier=> ::core::panic::Location::caller());
        let depth_lit = depth as u32;
        let (next_trip, after_loop) = self.trip_steps(left, depth_lit);
        // Named only where a `break` or `continue` leaves it (else the label would be unused).
        let label = left.then(|| quote!(#label:));
        out.extend(quote! {
            #label loop {
                #next_trip
                #decide_region
                if !#regions.decide(#depth_lit, #loop_site, #barrier_site) {
                    break;
                }
                #body_code
            }
            #after_loop
        });
        (out, head)
    }

    /// Enters the split loop `seg`, whose head carries `head`: its depth and the generated
    /// loop's label. The caller pops `self.loops` after its body.
    fn enter_loop(&mut self, seg: &Seg, head: &[Ident]) -> (usize, syn::Lifetime) {
        let exits = seg.exits().cloned().unwrap_or_default();
        self.counter += 1;
        let label = syn::Lifetime::new(
            &format!("'__ferrocuda_loop_{}", self.counter),
            Span::mixed_site(),
        );
        self.loops.push(LoopCtx {
            user: exits.label,
            label: label.clone(),
            head: head.to_vec(),
            left: exits.left,
        });
        (self.loops.len() - 1, label)
    }

    /// The block's steps at the start of each trip of a split loop at `depth` and after it,
    /// where threads may leave it (`left`): the threads that left the last trip by `continue`
    /// run again, and after the loop those that left it by `break`.
    fn trip_steps(&self, left: bool, depth: u32) -> (TokenStream2, TokenStream2) {
        if !left {
            return (TokenStream2::new(), TokenStream2::new());
        }
        let regions = &self.names.regions;
        (
            quote!(#regions.next_trip(#depth);),
            quote!(#regions.after_loop(#depth);),
        )
    }

    /// A split loop whose condition or iterator is block-uniform (`uniform`): the block decides
    /// each trip once, with no region and no vote; the loop's own names (a `for`'s) are the
    /// block's, read by the regions like a hoisted `let`. The loop stops when every thread has
    /// returned, as a vote of no threads would stop it.
    fn uniform_loop(
        &mut self,
        seg: &Seg,
        carried: &[Carried],
        scope: &[Ident],
        used: &BTreeSet<String>,
        head_names: &[Ident],
    ) -> (TokenStream2, Vec<Carried>) {
        let regions = self.names.regions.clone();
        let head = restrict(carried, head_names);
        let head_names: Vec<Ident> = head.iter().map(|c| c.name.clone()).collect();
        let (body, span) = match seg {
            Seg::While { body, span, .. } | Seg::For { body, span, .. } => (body, *span),
            _ => unreachable!("a loop segment"),
        };
        let later = after_trip(body, &[], used);
        let (depth, label) = self.enter_loop(seg, &head_names);
        let (body_code, end) = self.segs(
            body,
            head.clone(),
            scope.to_vec(),
            &later,
            Some(&trip_end(&head)),
        );
        let left = self.loops.pop().is_some_and(|l| l.left);
        let mut out = TokenStream2::new();
        if let Err(error) = Self::close(&reunassigned(end, &head), &head) {
            out.extend(error);
        }
        let depth = depth as u32;
        let (next_trip, after_loop) = self.trip_steps(left, depth);
        // A thread that left by `break` waits after the loop: another trip is divergence.
        let another_trip = left.then(|| {
            let loop_site = quote_spanned!(span=> ::core::panic::Location::caller());
            quote!(#regions.another_trip(#depth, #loop_site);)
        });
        out.extend(match seg {
            // No `break` or `continue` leaves it: the plain loop.
            Seg::While { cond, .. } if !left => quote! {
                while #regions.running() && (#cond) {
                    #body_code
                }
            },
            Seg::For { pat, iter, .. } if !left => quote! {
                for #pat in #iter {
                    if !#regions.running() {
                        break;
                    }
                    #body_code
                }
            },
            Seg::While { cond, .. } => quote! {
                #label: loop {
                    #next_trip
                    if !(#regions.running() && (#cond)) {
                        break;
                    }
                    #another_trip
                    #body_code
                }
                #after_loop
            },
            Seg::For { pat, iter, .. } => quote! {
                #label: for #pat in #iter {
                    #next_trip
                    if !#regions.running() {
                        break;
                    }
                    #another_trip
                    #body_code
                }
                #after_loop
            },
            _ => unreachable!("a loop segment"),
        });
        (out, head)
    }
}
