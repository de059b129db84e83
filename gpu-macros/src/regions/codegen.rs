//! Code generation for the plans of the parent module: the elementwise loop nest, and the
//! region loops with the slots of their carried variables and their trip decisions.

use super::carried::{fixed_lets, recomputable_lets, restrict, Carried};
use super::{declared, path_names, pattern_names, Seg, SegPlan};
use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Stmt};

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

fn seg_idents(seg: &Seg, into: &mut BTreeSet<String>) {
    match seg {
        Seg::Code(stmts) | Seg::Uniform(stmts) => stmts
            .iter()
            .for_each(|s| idents_of(s.to_token_stream(), into)),
        Seg::Items(_) | Seg::Barrier(_) | Seg::Collective(_) => {}
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

/// The hygienic names of the generated code.
pub(super) struct Names {
    pub(super) regions: Ident,
    pub(super) tid: Ident,
    pub(super) base_1d: Ident,
    /// The thread's index in the block (x fastest) in a region's loop.
    linear: Ident,
    /// A trip decision's vote.
    go: Ident,
    label: syn::Lifetime,
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
        }
    }
    pub(super) fn label(&self) -> syn::Lifetime {
        self.label.clone()
    }
}

/// Rewrites, in code a region runs per thread: `return` into leaving the region (`on_return`),
/// and the thread functions into the loop's variables (outside closures, which may outlive an
/// iteration).
struct Rewrite<'a> {
    names: &'a Names,
    on_return: TokenStream2,
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

/// The statements of `stmts` rewritten for a region, each ending in `;`.
pub(super) fn region_code(stmts: &[Stmt], names: &Names, on_return: TokenStream2) -> TokenStream2 {
    let mut rewrite = Rewrite { names, on_return };
    let mut out = TokenStream2::new();
    for stmt in stmts {
        let mut stmt = stmt.clone();
        rewrite.visit_stmt_mut(&mut stmt);
        match stmt {
            Stmt::Expr(expr, None) => out.extend(quote!(#expr;)),
            stmt => out.extend(stmt.into_token_stream()),
        }
    }
    out
}

/// Code generation for [`Plan::Regions`]. Every carried variable's slots are made once at the
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
        let mut used = BTreeSet::new();
        idents_of(prelude.clone(), &mut used);
        stmts
            .iter()
            .for_each(|s| idents_of(s.to_token_stream(), &mut used));
        let bound: BTreeSet<String> = declared(stmts)
            .iter()
            .chain(prelude_binds)
            .map(ToString::to_string)
            .collect();
        let read: Vec<&Carried> = carried_in
            .iter()
            .filter(|c| used.contains(&c.name.to_string()))
            .collect();
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
            Rewrite {
                names: &self.names,
                on_return: TokenStream2::new(),
            }
            .visit_expr_mut(&mut expr);
            expr
        });
        let (mut after, mut written) = (Vec::new(), Vec::new());
        for name in carried_out {
            let carried = if let Some(expr) = recompute
                .get(&name.to_string())
                .filter(|_| bound.contains(&name.to_string()))
            {
                // No slots: each region that reads it recomputes it.
                Carried {
                    name: name.clone(),
                    slots: self.fresh("recomputed"),
                    fixed: true,
                    recompute: Some(expr.clone()),
                }
            } else if bound.contains(&name.to_string()) {
                let slots = self.fresh("slots");
                self.slots.push(slots.clone());
                let carried = Carried {
                    name: name.clone(),
                    slots,
                    fixed: fixed.contains(&name.to_string()),
                    recompute: None,
                };
                written.push(carried.clone());
                carried
            } else if let Some(c) = carried_in.iter().find(|c| c.name == *name) {
                if read.iter().any(|r| r.name == *name) && !c.fixed {
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
        let code = region_code(stmts, &self.names, on_return);
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
            } = carried;
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
                // that filled this slot; no region since emptied it (the generator reads a
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
        let warp_operations = super::has_warp_operation(stmts);
        let code = quote! {
            // `move`: a copy of everything it captures (slots, parameters, hoisted `let`s, all
            // `Copy`), for `run_region` to keep in registers. `inline(always)`: into the loop
            // over the threads (LLVM left a big region, e.g. one dispatching on a radius, as a
            // call per thread: a frame, its captures reloaded, no overlap between threads).
            #regions.run_region(#barrier_after, #warp_operations, #[inline(always)] move |#linear: usize, #tid: ::ferrocuda_std::Dim3| -> bool {
                #(#reads)*
                #[allow(unused_labels)]
                #label: {
                    #prelude
                    #code
                    #write
                    return true;
                }
                false
            });
        };
        (code, after)
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
                        .find(|seg| !matches!(seg, Seg::Uniform(_)));
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
                    carried = now;
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
                    out.extend(super::collective::fold_code(site, &self.names.regions))
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
                Rewrite {
                    names: &self.names,
                    on_return: TokenStream2::new(),
                }
                .visit_expr_mut(&mut rewritten);
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
                Rewrite {
                    names: &self.names,
                    on_return: TokenStream2::new(),
                }
                .visit_expr_mut(&mut rewritten);
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
        let (body_code, end) = self.segs_with_prelude(
            body,
            head.clone(),
            body_scope,
            &later,
            &head_names,
            (body_prelude, &prelude_binds),
        );
        if let Err(error) = Self::close(&end, &head) {
            out.extend(error);
        }
        let loop_site = quote_spanned!(span=> ::core::panic::Location::caller());
        let barrier_site = quote_spanned!(first_barrier=> ::core::panic::Location::caller());
        out.extend(quote! {
            loop {
                #decide_region
                if !#regions.decide(#loop_site, #barrier_site) {
                    break;
                }
                #body_code
            }
        });
        (out, head)
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
        let body = match seg {
            Seg::While { body, .. } | Seg::For { body, .. } => body,
            _ => unreachable!("a loop segment"),
        };
        let later = after_trip(body, &[], used);
        let (body_code, end) = self.segs(
            body,
            head.clone(),
            scope.to_vec(),
            &later,
            Some(&head_names),
        );
        let mut out = TokenStream2::new();
        if let Err(error) = Self::close(&end, &head) {
            out.extend(error);
        }
        out.extend(match seg {
            Seg::While { cond, .. } => quote! {
                while #regions.running() && (#cond) {
                    #body_code
                }
            },
            Seg::For { pat, iter, .. } => quote! {
                for #pat in #iter {
                    if !#regions.running() {
                        break;
                    }
                    #body_code
                }
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
            }
        }
    }
    let mut inner: BTreeSet<String> = binds.iter().map(ToString::to_string).collect();
    bound(body, &mut inner);
    used.difference(&inner).cloned().collect()
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
        Seg::Items(_) | Seg::Code(_) | Seg::Uniform(_) => None,
    })
}

/// The body of the split function for [`Plan::Regions`].
pub(crate) fn regions(segs: &[SegPlan]) -> TokenStream2 {
    let segs: Vec<&Seg> = segs.iter().map(|s| &s.0).collect();
    let segs: Vec<Seg> = segs.into_iter().map(clone_seg).collect();
    let mut gen = Gen {
        names: Names::new(),
        counter: 0,
        slots: Vec::new(),
        bound: super::bound_names(&segs),
    };
    let (code, _) = gen.segs(&segs, Vec::new(), Vec::new(), &BTreeSet::new(), None);
    let (regions, base_1d, slots) = (&gen.names.regions, &gen.names.base_1d, &gen.slots);
    quote! {
        let #regions: &::ferrocuda_std::cpu::Regions = #regions;
        #[allow(unused_variables)]
        let #base_1d = #regions.base_1d();
        #(let #slots = #regions.slots();)*
        #code
    }
}

fn clone_seg(seg: &Seg) -> Seg {
    match seg {
        Seg::Items(items) => Seg::Items(items.clone()),
        Seg::Code(stmts) => Seg::Code(stmts.clone()),
        Seg::Barrier(span) => Seg::Barrier(*span),
        Seg::Collective(site) => Seg::Collective(site.clone()),
        Seg::Uniform(stmts) => Seg::Uniform(stmts.clone()),
        Seg::While {
            cond,
            body,
            span,
            uniform,
        } => Seg::While {
            cond: cond.clone(),
            body: body.iter().map(clone_seg).collect(),
            span: *span,
            uniform: *uniform,
        },
        Seg::For {
            pat,
            iter,
            body,
            span,
            uniform,
        } => Seg::For {
            pat: pat.clone(),
            iter: iter.clone(),
            body: body.iter().map(clone_seg).collect(),
            span: *span,
            uniform: *uniform,
        },
    }
}

/// The regions' hygienic argument name, for the generated function's signature.
pub(crate) fn regions_ident() -> Ident {
    Names::new().regions
}
