//! Code generation for the plans of the parent module: the elementwise loop nest, and the
//! region loops with the slots of their carried variables and their trip decisions.

use super::carried::{fixed_lets, recomputable_lets, restrict, Carried};
use super::collective;
use super::names::{declared, has_warp_operation, idents_of, path_names, pattern_names, Names};
use super::segments::{bound_names, Seg, SegPlan, Targets};
use super::unassigned::{self, State};
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Stmt};

fn seg_idents(seg: &Seg, into: &mut BTreeSet<String>) {
    match seg {
        Seg::Code(stmts) | Seg::Uniform(stmts) => stmts
            .iter()
            .for_each(|s| idents_of(s.to_token_stream(), into)),
        Seg::Items(_) | Seg::Barrier(_) | Seg::Collective(_) => {}
        Seg::Leave(leave) => idents_of(leave.cond.to_token_stream(), into),
        Seg::While { cond, body, .. } => {
            idents_of(cond.to_token_stream(), into);
            body.iter().for_each(|s| seg_idents(s, into));
        }
        Seg::For { iter, body, .. } => {
            idents_of(iter.to_token_stream(), into);
            body.iter().for_each(|s| seg_idents(s, into));
        }
    }
}

/// Rewrites, in code a region runs per thread: `return` into leaving the region (`on_return`),
/// `break` and `continue` out of the split loops around it into leaving the trip
/// (`Regions::leave`, then out of the region), and the thread functions into the loop's
/// variables (outside closures, which may outlive an iteration).
struct Rewrite<'a> {
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
    fn new(names: &'a Names, on_return: TokenStream2) -> Self {
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
        let depth = match label {
            None => loops.len().checked_sub(1)?,
            Some(label) => {
                let name = label.ident.to_string();
                loops
                    .iter()
                    .rposition(|l| l.as_deref() == Some(name.as_str()))?
            }
        };
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

/// Code generation for [`Plan::Regions`](super::Plan::Regions). Every carried variable's slots are made once at the
/// top of the block's function; the code generator knows, at each point, which variables' slots
/// hold a value for every live thread (the `Vec<Carried>` it passes along), and a region reads
/// only those.
struct Gen {
    names: Names,
    counter: usize,
    /// Every carried variable's slots, declared at the top.
    slots: Vec<Ident>,
    /// Every name the body binds: a local, never a constant, whatever its case.
    bound: BTreeSet<String>,
    /// The split loops around the code being generated, outermost first.
    loops: Vec<LoopCtx>,
    /// Why the body cannot take the split path after all (found while generating it).
    error: Option<String>,
}

/// A split loop around the code being generated.
struct LoopCtx {
    /// The kernel's label of the loop (`'outer`), which a `break`/`continue` may name.
    user: Option<String>,
    /// The generated loop's label.
    label: syn::Lifetime,
    /// The names its head carries: where a thread leaving a trip puts them back.
    head: Vec<Ident>,
    /// Whether a `break` or `continue` leaves it.
    left: bool,
}

impl Gen {
    fn fresh(&mut self, what: &str) -> Ident {
        self.counter += 1;
        Ident::new(
            &format!("__ferrocuda_{what}_{}", self.counter),
            Span::mixed_site(),
        )
    }

    /// One region: every live thread runs `prelude` (which binds `prelude_binds`) and `stmts`,
    /// reading from `carried_in` the variables they name, and leaves `carried_out` in their
    /// slots: the variables it bound in new slots, those it read back in theirs, the others
    /// untouched. `barrier_after`: the `sync_threads()` ending it. Returns the code and what
    /// is carried after it.
    fn region(
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
        let body = if left_to.is_empty() {
            quote! {
                #[allow(unused_labels)]
                #label: {
                    #prelude
                    #code
                    #write
                    return true;
                }
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
                    #[allow(unused_labels)]
                    #label: {
                        #prelude
                        #code
                        #write
                        return true;
                    }
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

    /// After a region in split loops that threads may leave: when every thread that has not
    /// returned has left (`Regions::left`), the block goes where the innermost went.
    fn leave_check(&self) -> TokenStream2 {
        if !self.loops.iter().any(|l| l.left) {
            return TokenStream2::new();
        }
        let regions = &self.names.regions;
        self.leave_jump(quote!(#regions.left()))
    }

    /// The block's jump for `code` (1 + the code of a `break`/`continue`, or 0 for none) to the
    /// split loops around it that threads may leave.
    fn leave_jump(&self, code: TokenStream2) -> TokenStream2 {
        let arms = self
            .loops
            .iter()
            .enumerate()
            .filter(|(_, l)| l.left)
            .map(|(depth, l)| {
                let label = &l.label;
                let (next, out) = (2 * depth as u32 + 1, 2 * depth as u32 + 2);
                quote! {
                    #next => continue #label,
                    #out => break #label,
                }
            });
        quote! {
            match #code {
                #(#arms)*
                _ => {}
            }
        }
    }

    /// Checks that `carried` holds each of `end` (the variables a loop's head carries) in the
    /// slots the head has them in: where the next trip's regions will read them.
    fn close(carried: &[Carried], end: &[Carried]) -> Result<(), TokenStream2> {
        match end.iter().find(|e| {
            !carried
                .iter()
                .any(|c| c.name == e.name && c.slots == e.slots)
        }) {
            None => Ok(()),
            Some(missing) => {
                let message = format!(
                    "#[kernel]: `{}` does not reach the end of the loop body in its slots (a bug \
                     of the region splitting; FERROCUDA_CPU_PATH=coroutine avoids it)",
                    missing.name
                );
                Err(quote!(::core::compile_error!(#message);))
            }
        }
    }

    /// The code of `segs`, which start with `carried` in their slots; `later`: names used after
    /// `segs` (by an enclosing loop or what follows it); `carried_end`: the names the last
    /// region must leave (a loop body's: its head's).
    fn segs(
        &mut self,
        segs: &[Seg],
        mut carried: Vec<Carried>,
        mut scope: Vec<Ident>,
        later: &BTreeSet<String>,
        carried_end: Option<&[Ident]>,
    ) -> (TokenStream2, Vec<Carried>) {
        let mut out = TokenStream2::new();
        // Names used by each segment's successors (and `later`).
        let mut after: Vec<BTreeSet<String>> = vec![later.clone(); segs.len()];
        for k in (0..segs.len().saturating_sub(1)).rev() {
            let mut used = after[k + 1].clone();
            seg_idents(&segs[k + 1], &mut used);
            after[k] = used;
        }
        let live = |scope: &[Ident], used: &BTreeSet<String>| -> Vec<Ident> {
            // The last binding of each name, in order of first appearance.
            let mut seen = BTreeSet::new();
            let mut names: Vec<Ident> = Vec::new();
            for name in scope.iter().rev() {
                if used.contains(&name.to_string()) && seen.insert(name.to_string()) {
                    names.push(name.clone());
                }
            }
            names.reverse();
            names
        };
        for (k, seg) in segs.iter().enumerate() {
            let last = k + 1 == segs.len();
            match seg {
                Seg::Items(items) => out.extend(items.iter().map(ToTokens::to_token_stream)),
                Seg::Code(stmts) => {
                    scope.extend(declared(stmts));
                    let out_names = match (last, carried_end) {
                        (true, Some(end)) => end.to_vec(),
                        _ => live(&scope, &after[k]),
                    };
                    // A block-uniform assignment between the region and its barrier changes
                    // nothing a thread sees: the barrier still ends the region.
                    let next = segs[k + 1..]
                        .iter()
                        .find(|seg| !matches!(seg, Seg::Uniform(_) | Seg::Leave(_)));
                    let barrier_after = match next {
                        Some(Seg::Barrier(span)) => Some(*span),
                        Some(Seg::Collective(site)) => Some(site.span),
                        _ => None,
                    };
                    let (code, now) = self.region(
                        &carried,
                        TokenStream2::new(),
                        &[],
                        stmts,
                        &out_names,
                        barrier_after,
                    );
                    out.extend(code);
                    out.extend(self.leave_check());
                    carried = now;
                }
                Seg::Leave(leave) => {
                    // Every thread that has not returned leaves alike: the block jumps (after
                    // those that left on their own before, if some did: `Regions::leave_block`).
                    let regions = &self.names.regions;
                    let cond = &leave.cond;
                    let code = 2 * leave.depth as u32 + u32::from(leave.is_break);
                    let site = quote_spanned!(leave.span=> ::core::panic::Location::caller());
                    let jump = self.leave_jump(quote!(#regions.leave_block(#code, #site)));
                    out.extend(quote! {
                        if #regions.running() && (#cond) {
                            #jump
                        }
                    });
                }
                Seg::Barrier(span) => {
                    let regions = &self.names.regions;
                    out.extend(quote_spanned! {*span=>
                        if !#regions.barrier(::core::panic::Location::caller()) {
                            return;
                        }
                    });
                }
                Seg::Collective(site) => {
                    out.extend(collective::fold_code(site, &self.names.regions))
                }
                Seg::Uniform(stmts) => {
                    let regions = &self.names.regions;
                    let stmts = stmts.iter().map(|stmt| match stmt {
                        Stmt::Expr(expr, None) => quote!(#expr;),
                        stmt => stmt.to_token_stream(),
                    });
                    // Made by the block once for all its threads (none if all returned).
                    out.extend(quote! {
                        if #regions.running() {
                            #(#stmts)*
                        }
                    });
                }
                Seg::While { .. } | Seg::For { .. } => {
                    let (code, now) = self.trip_loop(seg, &carried, &scope, &after[k]);
                    out.extend(code);
                    carried = now;
                }
            }
        }
        (out, carried)
    }

    /// A loop with a barrier in it: per trip, every thread's decision, then the body's regions.
    fn trip_loop(
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

    /// [`Gen::segs`] for a loop body, whose first region starts with `prelude` (binding the
    /// `for` pattern's names).
    fn segs_with_prelude(
        &mut self,
        body: &[Seg],
        carried: Vec<Carried>,
        scope: Vec<Ident>,
        later: &BTreeSet<String>,
        end: &[Ident],
        (prelude, binds): (TokenStream2, &[Ident]),
    ) -> (TokenStream2, Vec<Carried>) {
        if prelude.is_empty() {
            return self.segs(body, carried, scope, later, Some(end));
        }
        // The prelude runs as a region of its own before the body, carrying the pattern's names.
        let mut used = later.clone();
        body.iter().for_each(|s| seg_idents(s, &mut used));
        let mut live: Vec<Ident> = scope
            .iter()
            .filter(|n| used.contains(&n.to_string()) || carried.iter().any(|c| c.name == **n))
            .cloned()
            .collect();
        dedup_last(&mut live);
        let (first, now) = self.region(&carried, prelude, binds, &[], &live, None);
        let (rest, now) = self.segs(body, now, scope, later, Some(end));
        (quote!(#first #rest), now)
    }
}

/// The names `used` (by a loop and what follows it) that are live at the end of a trip of the
/// loop's `body`: not those the body binds (`binds`: a `for`'s pattern), which the next trip
/// binds again before it reads them (a body may not shadow an outer name, `check_scopes`), so
/// that a region does not store them for nothing.
fn after_trip(body: &[Seg], binds: &[Ident], used: &BTreeSet<String>) -> BTreeSet<String> {
    fn bound(segs: &[Seg], into: &mut BTreeSet<String>) {
        for seg in segs {
            match seg {
                Seg::Code(stmts) => into.extend(declared(stmts).iter().map(ToString::to_string)),
                Seg::For { pat, body, .. } => {
                    let mut names = Vec::new();
                    pattern_names(pat, &mut names);
                    into.extend(names.iter().map(ToString::to_string));
                    bound(body, into);
                }
                Seg::While { body, .. } => bound(body, into),
                Seg::Items(_) | Seg::Barrier(_) | Seg::Collective(_) | Seg::Uniform(_) => {}
                Seg::Leave(_) => {}
            }
        }
    }
    let mut inner: BTreeSet<String> = binds.iter().map(ToString::to_string).collect();
    bound(body, &mut inner);
    used.difference(&inner).cloned().collect()
}

/// The names a loop body's last region leaves for the next trip: the head's, less those its
/// head holds unassigned (`let` without a value before the loop: each trip declares them
/// again where it names them, as Rust's check sees them there, maybe unassigned).
fn trip_end(head: &[Carried]) -> Vec<Ident> {
    head.iter()
        .filter(|c| c.unassigned.is_none())
        .map(|c| c.name.clone())
        .collect()
}

/// `end` (what a loop body's regions leave) with the head's unassigned names as the head has
/// them (see [`trip_end`]).
fn reunassigned(mut end: Vec<Carried>, head: &[Carried]) -> Vec<Carried> {
    for h in head.iter().filter(|c| c.unassigned.is_some()) {
        end.retain(|c| c.name != h.name);
        end.push(h.clone());
    }
    end
}

/// Keeps the last of each name.
fn dedup_last(names: &mut Vec<Ident>) {
    let mut seen = BTreeSet::new();
    let mut kept: Vec<Ident> = names
        .iter()
        .rev()
        .filter(|n| seen.insert(n.to_string()))
        .cloned()
        .collect();
    kept.reverse();
    *names = kept;
}

/// The span of the first barrier in `segs`.
fn first_barrier(segs: &[Seg]) -> Option<Span> {
    segs.iter().find_map(|seg| match seg {
        Seg::Barrier(span) => Some(*span),
        Seg::Collective(site) => Some(site.span),
        Seg::While { body, .. } | Seg::For { body, .. } => first_barrier(body),
        Seg::Items(_) | Seg::Code(_) | Seg::Uniform(_) | Seg::Leave(_) => None,
    })
}

/// The body of the split function for [`Plan::Regions`](super::Plan::Regions), or why the body cannot take the
/// split path after all (found while generating it: a `let` without a value assigned where the
/// generator cannot follow it).
pub(crate) fn regions(segs: &[SegPlan]) -> Result<TokenStream2, String> {
    let segs: Vec<&Seg> = segs.iter().map(|s| &s.0).collect();
    let segs: Vec<Seg> = segs.into_iter().map(clone_seg).collect();
    let mut gen = Gen {
        names: Names::new(),
        counter: 0,
        slots: Vec::new(),
        bound: bound_names(&segs),
        loops: Vec::new(),
        error: None,
    };
    let (code, _) = gen.segs(&segs, Vec::new(), Vec::new(), &BTreeSet::new(), None);
    if let Some(why) = gen.error {
        return Err(why);
    }
    let (regions, base_1d, slots) = (&gen.names.regions, &gen.names.base_1d, &gen.slots);
    Ok(quote! {
        let #regions: &::ferrocuda_std::cpu::Regions = #regions;
        #[allow(unused_variables)]
        let #base_1d = #regions.base_1d();
        #(let #slots = #regions.slots();)*
        #code
    })
}

fn clone_seg(seg: &Seg) -> Seg {
    match seg {
        Seg::Items(items) => Seg::Items(items.clone()),
        Seg::Code(stmts) => Seg::Code(stmts.clone()),
        Seg::Barrier(span) => Seg::Barrier(*span),
        Seg::Collective(site) => Seg::Collective(site.clone()),
        Seg::Uniform(stmts) => Seg::Uniform(stmts.clone()),
        Seg::Leave(leave) => Seg::Leave(leave.clone()),
        Seg::While {
            cond,
            body,
            span,
            uniform,
            exits,
        } => Seg::While {
            cond: cond.clone(),
            body: body.iter().map(clone_seg).collect(),
            span: *span,
            uniform: *uniform,
            exits: exits.clone(),
        },
        Seg::For {
            pat,
            iter,
            body,
            span,
            uniform,
            exits,
        } => Seg::For {
            pat: pat.clone(),
            iter: iter.clone(),
            body: body.iter().map(clone_seg).collect(),
            span: *span,
            uniform: *uniform,
            exits: exits.clone(),
        },
    }
}
