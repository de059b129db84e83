//! The code of one region of [`Gen`]: the loop over the block's threads, reading the carried
//! variables it names from their slots and writing back those it may have changed.

use super::carried::{fixed_lets, recomputable_lets, Carried};
use super::codegen::Gen;
use super::names::{declared, has_warp_operation, idents_of};
use super::rewrite::{region_code, Rewrite};
use super::unassigned::{self, State};
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::{BTreeMap, BTreeSet};
use syn::visit_mut::VisitMut;
use syn::{Ident, Stmt};

impl Gen {
    /// One region: every live thread runs `prelude` (which binds `prelude_binds`) and `stmts`,
    /// reading from `carried_in` the variables they name, and leaves `carried_out` in their
    /// slots: the variables it bound in new slots, those it read back in theirs, the others
    /// untouched. `barrier_after`: the `sync_threads()` ending it. Returns the code and what
    /// is carried after it.
    pub(super) fn region(
        &mut self,
        carried_in: &[Carried],
        prelude: TokenStream2,
        prelude_binds: &[Ident],
        stmts: &[Stmt],
        carried_out: &[Ident],
        barrier_after: Option<Span>,
    ) -> (TokenStream2, Vec<Carried>) {
        // A `let` without a value that nothing after it in the region names is declared again
        // by the region that names it (`unassigned`): here it could not infer its type.
        let mut dropped: BTreeMap<String, TokenStream2> = BTreeMap::new();
        let mut kept: Vec<Stmt> = Vec::new();
        for (j, stmt) in stmts.iter().enumerate() {
            if let Some(name) = unassigned::declares_unassigned(stmt) {
                if !stmts[j + 1..]
                    .iter()
                    .any(|s| unassigned::mentions(s, &name))
                {
                    dropped.insert(name, stmt.to_token_stream());
                    continue;
                }
            }
            kept.push(stmt.clone());
        }
        let stmts = &kept[..];
        let mut used = BTreeSet::new();
        idents_of(prelude.clone(), &mut used);
        stmts
            .iter()
            .for_each(|s| idents_of(s.to_token_stream(), &mut used));
        let mut bound: BTreeSet<String> = declared(stmts)
            .iter()
            .chain(prelude_binds)
            .map(ToString::to_string)
            .collect();
        let read: Vec<&Carried> = carried_in
            .iter()
            .filter(|c| used.contains(&c.name.to_string()))
            .collect();
        // Declared again here, unassigned: the region binds them.
        bound.extend(
            read.iter()
                .filter(|c| c.unassigned.is_some())
                .map(|c| c.name.to_string()),
        );
        let mut fixed: BTreeSet<String> = carried_in
            .iter()
            .filter(|c| c.fixed)
            .map(|c| c.name.to_string())
            .collect();
        for name in prelude_binds {
            fixed.remove(&name.to_string());
        }
        fixed_lets(stmts, &mut fixed);
        let mut recompute: BTreeMap<String, TokenStream2> = carried_in
            .iter()
            .filter_map(|c| Some((c.name.to_string(), c.recompute.clone()?)))
            .collect();
        for name in prelude_binds {
            recompute.remove(&name.to_string());
        }
        recomputable_lets(stmts, &mut recompute, &self.bound, |expr| {
            let mut expr = expr.clone();
            Rewrite::new(&self.names, TokenStream2::new()).visit_expr_mut(&mut expr);
            expr
        });
        let (mut after, mut written) = (Vec::new(), Vec::new());
        for name in carried_out {
            let key = name.to_string();
            // A `let` without a value's name: what it holds at the region's end.
            let incoming = read
                .iter()
                .find(|c| c.name == *name && c.unassigned.is_some());
            let state = if dropped.contains_key(&key) {
                Some(State::Unassigned)
            } else {
                unassigned::state_after(stmts, &key, incoming.map(|_| State::Unassigned))
            };
            match state {
                Some(State::Unsure) => {
                    self.error.get_or_insert_with(|| {
                        format!(
                            "a `let` without a value (`{name}`) assigned where #[kernel] cannot \
                             follow it (in a loop, or an `if` without `else`), and named after a \
                             barrier"
                        )
                    });
                    continue;
                }
                Some(State::Unassigned) => {
                    let decl = dropped
                        .get(&key)
                        .cloned()
                        .or_else(|| {
                            stmts.iter().rev().find_map(|s| {
                                (unassigned::declares_unassigned(s).as_deref() == Some(&*key))
                                    .then(|| s.to_token_stream())
                            })
                        })
                        .or_else(|| incoming.and_then(|c| c.unassigned.clone()));
                    if let Some(decl) = decl {
                        after.push(Carried {
                            name: name.clone(),
                            slots: self.fresh("unassigned"),
                            fixed: false,
                            recompute: None,
                            unassigned: Some(decl),
                        });
                    }
                    continue;
                }
                Some(State::Assigned) | None => {}
            }
            let carried = if let Some(expr) = recompute.get(&key).filter(|_| bound.contains(&key)) {
                // No slots: each region that reads it recomputes it.
                Carried {
                    name: name.clone(),
                    slots: self.fresh("recomputed"),
                    fixed: true,
                    recompute: Some(expr.clone()),
                    unassigned: None,
                }
            } else if bound.contains(&key) {
                let slots = self.fresh("slots");
                self.slots.push(slots.clone());
                let carried = Carried {
                    name: name.clone(),
                    slots,
                    fixed: fixed.contains(&key),
                    recompute: None,
                    unassigned: None,
                };
                written.push(carried.clone());
                carried
            } else if let Some(c) = carried_in.iter().find(|c| c.name == *name) {
                if read.iter().any(|r| r.name == *name) && !c.fixed && c.unassigned.is_none() {
                    written.push(c.clone());
                }
                c.clone()
            } else {
                // Not a variable of the body's (a parameter, a hoisted `let`): nothing to carry.
                continue;
            };
            after.push(carried);
        }
        let (regions, tid, linear) = (&self.names.regions, &self.names.tid, &self.names.linear);
        let label = self.names.label();
        let on_return = quote! {
            #regions.returned();
            break #label;
        };
        let loops: Vec<Option<String>> = self.loops.iter().map(|l| l.user.clone()).collect();
        let (code, left_to) = region_code(stmts, &self.names, on_return, &loops);
        let barrier_after = match barrier_after {
            Some(span) => {
                quote_spanned!(span=> ::core::option::Option::Some(::core::panic::Location::caller()))
            }
            None => quote!(::core::option::Option::None),
        };
        let reads = read.iter().map(|carried| {
            let Carried {
                name,
                slots,
                fixed,
                recompute,
                unassigned,
            } = carried;
            if let Some(decl) = unassigned {
                return quote! {
                    #[allow(unused_mut)]
                    #decl
                };
            }
            if let Some(expr) = recompute {
                return quote! {
                    #[allow(unused_variables)]
                    let #name = #expr;
                };
            }
            let value = if *fixed {
                quote!(#slots.get(#linear))
            } else {
                quote!(#slots.take(#linear))
            };
            quote! {
                #[allow(unused_mut, unused_variables)]
                // SAFETY: `linear` is one of the block's threads, which has not returned
                // (`run_region` runs no other), so it ran to its end every region since the one
                // that filled this slot, or left that region's loop trip after putting back what
                // it had taken (below); no region since emptied it (the generator reads a
                // variable only from the slots it knows hold it, and moves it back in, or to no
                // later region; a fixed one it only copies).
                let mut #name = unsafe { #value };
            }
        });
        let write = (!written.is_empty()).then(|| {
            let (names, slots) = (
                written.iter().map(|c| &c.name),
                written.iter().map(|c| &c.slots),
            );
            quote! {
                // SAFETY: `linear` is one of the block's threads (`run_region` passes no other).
                unsafe { #(#slots.put(#linear, #names);)* }
            }
        });
        let warp_operations = has_warp_operation(stmts);
        // The thread's run of the region: `true` when it falls off the end.
        let run = quote! {
            #[allow(unused_labels)]
            #label: {
                #prelude
                #code
                #write
                return true;
            }
        };
        let body = if left_to.is_empty() {
            quote! {
                #run
                false
            }
        } else {
            // A thread leaving the trip (`break`/`continue`) puts back in their slots the
            // variables it took that the loop's head carries (where the loop's next trip, or
            // the code after it, reads them); the rest die with the trip. They were bound
            // before the blocks below (a loop body may not shadow them, `check_scopes`).
            let heads: BTreeSet<String> = left_to
                .iter()
                .flat_map(|&depth| self.loops[depth].head.iter().map(ToString::to_string))
                .collect();
            let back: Vec<&&Carried> = read
                .iter()
                .filter(|c| {
                    !c.fixed
                        && c.recompute.is_none()
                        && c.unassigned.is_none()
                        && heads.contains(&c.name.to_string())
                })
                .collect();
            let put_back = (!back.is_empty()).then(|| {
                let (names, slots) = (back.iter().map(|c| &c.name), back.iter().map(|c| &c.slots));
                quote! {
                    // SAFETY: `linear` is one of the block's threads (`run_region` passes no
                    // other).
                    unsafe { #(#slots.put(#linear, #names);)* }
                }
            });
            let leave = &self.names.leave;
            quote! {
                #[allow(unused_labels)]
                #leave: {
                    #run
                    return false;
                }
                #put_back
                true
            }
        };
        let code = quote! {
            // `move`: a copy of everything it captures (slots, parameters, hoisted `let`s, all
            // `Copy`), for `run_region` to keep in registers. `inline(always)`: into the loop
            // over the threads (LLVM left a big region, e.g. one dispatching on a radius, as a
            // call per thread: a frame, its captures reloaded, no overlap between threads).
            #regions.run_region(#barrier_after, #warp_operations, #[inline(always)] move |#linear: usize, #tid: ::ferrocuda_std::Dim3| -> bool {
                #(#reads)*
                #body
            });
        };
        (code, after)
    }
}
