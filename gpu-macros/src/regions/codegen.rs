//! Code generation for the plans of the parent module: the elementwise loop nest, and the
//! region loops with their per-thread stores and trip decisions.

use super::{declared, path_names, pattern_names, Seg, SegPlan};
use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::BTreeSet;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Stmt};

/// Every identifier in `tokens` (for liveness: a name used later is carried).
fn idents_of(tokens: TokenStream2, into: &mut BTreeSet<String>) {
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
        Seg::Code(stmts) => stmts
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
struct Names {
    regions: Ident,
    tid: Ident,
    base_1d: Ident,
    /// The thread's index in the block (x fastest) in a region's loop.
    linear: Ident,
    /// A trip decision's vote.
    go: Ident,
    label: syn::Lifetime,
}

impl Names {
    fn new() -> Self {
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
    fn label(&self) -> syn::Lifetime {
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
            _ => return None,
        })
    }
}

/// The statements of `stmts` rewritten for a region, each ending in `;`.
fn region_code(stmts: &[Stmt], names: &Names, on_return: TokenStream2) -> TokenStream2 {
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

/// The body of the elementwise function: the block's first thread alone, so that a barrier it
/// reaches in a function the macro could not see into moves the block onto coroutines
/// (`Regions::elementwise`), then one loop nest over the other threads. `owned`: the outputs the
/// body touches only at the thread's own index (`crate::owned_outputs`); in a 1D launch without
/// checked mode, a second copy of that loop nest writes them through plain-store handles
/// (`OwnedOut`), which LLVM can vectorise.
pub(crate) fn elementwise(stmts: &[Stmt], owned: &[Ident], slices: &[Ident]) -> TokenStream2 {
    let names = Names::new();
    // Items once, above every copy of the code.
    let (items, stmts): (Vec<Stmt>, Vec<Stmt>) = stmts
        .iter()
        .cloned()
        .partition(|stmt| matches!(stmt, Stmt::Item(_)));
    let label = names.label();
    let first_code = region_code(&stmts, &names, quote!(break #label;));
    let plain = loop_nest(&stmts, &names, false);
    let Names {
        regions,
        tid,
        base_1d,
        ..
    } = &names;
    let dim = Ident::new("__ferrocuda_dim", Span::mixed_site());
    let thread = Ident::new("__ferrocuda_thread", Span::mixed_site());
    let setup = quote! {
        #(#items)*
        let #dim = #regions.block_dim();
        let #base_1d = #regions.base_1d();
        let #thread = || {
            let #tid = ::ferrocuda_std::thread::thread_idx();
            #[allow(unused_labels)]
            #label: {
                #first_code
            }
        };
    };
    if owned.is_empty() {
        return quote! {
            #setup
            #regions.elementwise(&#thread, || { #plain });
        };
    }
    let own = quote!((#base_1d + #tid.x as usize));
    let threads = quote!((#regions.grid_dim().x as usize * #dim.x as usize));
    let fast = loop_nest(
        &crate::owned_outputs::rewrite(&stmts, owned, slices, &own, &threads),
        &names,
        true,
    );
    let handles: Vec<Ident> = owned
        .iter()
        .map(crate::owned_outputs::handle_name)
        .collect();
    let all = Ident::new("__ferrocuda_handles", Span::mixed_site());
    quote! {
        #setup
        #regions.elementwise(&#thread, || {
            // SAFETY: the grid and block are this launch's. Every use of each output in the
            // body was rewritten onto its handle, and the kernel's own name for it is shadowed
            // below, so no other access exists; the handles live in this block's loop on this
            // OS thread (neither `Send` nor `Sync`), and each access passes the running
            // thread's blockIdx.x·blockDim.x + threadIdx.x as its own index. The block's first
            // thread, run before this loop, wrote through the atomic `Out` to its own element
            // only, on this OS thread.
            let #all = unsafe {
                (#(::ferrocuda_std::__private::OwnedOut::new(#owned, #regions.grid_dim(), #dim),)*)
            };
            if let (#(::core::option::Option::Some(#handles),)*) = #all {
                #(
                    #[allow(unused_variables)]
                    let #owned = ::ferrocuda_std::__private::OutHeldByTheLoop;
                )*
                #fast
            } else {
                #plain
            }
        });
    }
}

/// One loop nest over the block's threads but the first (which `Regions::elementwise` ran
/// already), running `stmts` for each. `runs`: each row in runs of `elementwise::RUN` threads
/// with the deadline check point between them, so that the inner loop has no call LLVM cannot
/// vectorise past.
fn loop_nest(stmts: &[Stmt], names: &Names, runs: bool) -> TokenStream2 {
    let label = names.label();
    let code = region_code(stmts, names, quote!(break #label;));
    let Names {
        regions,
        tid,
        base_1d,
        ..
    } = names;
    let dim = Ident::new("__ferrocuda_dim", Span::mixed_site());
    let (x, y, z) = (
        Ident::new("__ferrocuda_x", Span::mixed_site()),
        Ident::new("__ferrocuda_y", Span::mixed_site()),
        Ident::new("__ferrocuda_z", Span::mixed_site()),
    );
    let thread = quote! {
        let #tid = ::ferrocuda_std::Dim3::new(#x, #y, #z);
        #[allow(unused_labels)]
        #label: {
            #code
        }
    };
    // The first thread ran already.
    let first_x = quote!(u32::from(#y == 0 && #z == 0));
    let row = if runs {
        let start = Ident::new("__ferrocuda_run", Span::mixed_site());
        let end = Ident::new("__ferrocuda_run_end", Span::mixed_site());
        quote! {
            let mut #start = #first_x;
            while #start < #dim.x {
                ::ferrocuda_std::cpu::elementwise::check_point();
                let #end = #start + (#dim.x - #start).min(::ferrocuda_std::cpu::elementwise::RUN);
                for #x in #start..#end {
                    ::ferrocuda_std::cpu::elementwise::step_x(#base_1d, #x);
                    #thread
                }
                #start = #end;
            }
        }
    } else {
        quote! {
            for #x in #first_x..#dim.x {
                #regions.enter_x(#base_1d, #x);
                #thread
            }
        }
    };
    quote! {
        for #z in 0..#dim.z {
            for #y in 0..#dim.y {
                #regions.enter_row(#base_1d, #y, #z);
                #row
            }
        }
    }
}

/// Code generation for [`Plan::Regions`]: a store is the variable holding, per thread, the
/// tuple of the carried names (`None`: the thread returned).
struct Gen {
    names: Names,
    store: Ident,
    counter: usize,
}

impl Gen {
    fn fresh(&mut self, what: &str) -> Ident {
        self.counter += 1;
        Ident::new(
            &format!("__ferrocuda_{what}_{}", self.counter),
            Span::mixed_site(),
        )
    }

    /// One region: every live thread runs `prelude` and `stmts` with `carried_in` bound, and
    /// leaves `carried_out` in the store; `barrier_after`: the `sync_threads()` ending it.
    fn region(
        &mut self,
        carried_in: &[Ident],
        prelude: TokenStream2,
        stmts: &[Stmt],
        carried_out: &[Ident],
        barrier_after: Option<Span>,
    ) -> TokenStream2 {
        let next = self.fresh("next");
        let (regions, tid, store) = (&self.names.regions, &self.names.tid, &self.store);
        let label = self.names.label();
        let on_return = quote! {
            #regions.returned();
            break #label;
        };
        let code = region_code(stmts, &self.names, on_return);
        let linear = &self.names.linear;
        let slot = Ident::new("__ferrocuda_slot", Span::mixed_site());
        let barrier_after = match barrier_after {
            Some(span) => {
                quote_spanned!(span=> ::core::option::Option::Some(::core::panic::Location::caller()))
            }
            None => quote!(::core::option::Option::None),
        };
        quote! {
            let #next = #regions.store();
            #regions.run_region(&#store, &#next, #barrier_after, |#linear: usize, #slot| {
                #[allow(unused_mut, unused_variables, unused_parens)]
                let (#(mut #carried_in,)*) = #slot?;
                #[allow(unused_variables)]
                let #tid = #regions.enter(#linear);
                #[allow(unused_labels)]
                #label: {
                    #prelude
                    #code
                    return ::core::option::Option::Some((#(#carried_out,)*));
                }
                ::core::option::Option::None
            });
            #regions.recycle(#store);
            #[allow(unused_variables)]
            let #store = #next;
        }
    }

    /// The code of `segs`, which start with `carried` in the store and must end with
    /// `carried_end` in it; `later`: names used after `segs` (by an enclosing loop or what
    /// follows it).
    fn segs(
        &mut self,
        segs: &[Seg],
        mut carried: Vec<Ident>,
        mut scope: Vec<Ident>,
        later: &BTreeSet<String>,
        carried_end: Option<&[Ident]>,
    ) -> (TokenStream2, Vec<Ident>) {
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
                    let barrier_after = match segs.get(k + 1) {
                        Some(Seg::Barrier(span)) => Some(*span),
                        Some(Seg::Collective(site)) => Some(site.span),
                        _ => None,
                    };
                    out.extend(self.region(
                        &carried,
                        TokenStream2::new(),
                        stmts,
                        &out_names,
                        barrier_after,
                    ));
                    carried = out_names;
                }
                Seg::Barrier(span) => {
                    let regions = &self.names.regions;
                    out.extend(quote_spanned! {*span=>
                        if !#regions.barrier(::core::panic::Location::caller()) {
                            return;
                        }
                    });
                    if last {
                        if let Some(end) = carried_end {
                            if end != carried.as_slice() {
                                out.extend(self.region(
                                    &carried,
                                    TokenStream2::new(),
                                    &[],
                                    end,
                                    None,
                                ));
                                carried = end.to_vec();
                            }
                        }
                    }
                }
                Seg::Collective(site) => {
                    out.extend(super::collective::fold_code(site, &self.names.regions))
                }
                Seg::While { .. } | Seg::For { .. } => {
                    let (code, now) = self.trip_loop(seg, &carried, &scope, &after[k]);
                    out.extend(code);
                    carried = now;
                    if last {
                        if let Some(end) = carried_end {
                            if end != carried.as_slice() {
                                out.extend(self.region(
                                    &carried,
                                    TokenStream2::new(),
                                    &[],
                                    end,
                                    None,
                                ));
                                carried = end.to_vec();
                            }
                        }
                    }
                }
            }
        }
        if segs.is_empty() {
            if let Some(end) = carried_end {
                out.extend(self.region(&carried, TokenStream2::new(), &[], end, None));
                carried = end.to_vec();
            }
        }
        (out, carried)
    }

    /// A loop with a barrier in it: per trip, every thread's decision, then the body's regions.
    fn trip_loop(
        &mut self,
        seg: &Seg,
        carried: &[Ident],
        scope: &[Ident],
        after: &BTreeSet<String>,
    ) -> (TokenStream2, Vec<Ident>) {
        let (body, span) = match seg {
            Seg::While { body, span, .. } | Seg::For { body, span, .. } => (body, *span),
            _ => unreachable!("a loop segment"),
        };
        let mut used = after.clone();
        seg_idents(seg, &mut used);
        let mut out = TokenStream2::new();
        let mut carried = carried.to_vec();
        let mut head: Vec<Ident> = scope
            .iter()
            .filter(|n| used.contains(&n.to_string()))
            .cloned()
            .collect();
        dedup_last(&mut head);
        let regions = self.names.regions.clone();
        // For a `for`: the iterator and the current item are per-thread variables of the head.
        let (decide_code, body_prelude) = match seg {
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
                let mut with_iter = head.clone();
                with_iter.push(it.clone());
                with_iter.push(item.clone());
                out.extend(self.region(&carried, TokenStream2::new(), &[init], &with_iter, None));
                carried = with_iter.clone();
                head = with_iter;
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
                (decide, prelude)
            }
            Seg::While { cond, .. } => {
                let mut rewritten = (**cond).clone();
                Rewrite {
                    names: &self.names,
                    on_return: TokenStream2::new(),
                }
                .visit_expr_mut(&mut rewritten);
                let go = &self.names.go;
                (quote!(let #go: bool = #rewritten;), TokenStream2::new())
            }
            _ => unreachable!("a loop segment"),
        };
        if carried != head {
            out.extend(self.region(&carried, TokenStream2::new(), &[], &head, None));
        }
        let first_barrier = first_barrier(body).unwrap_or(span);
        let store = self.store.clone();
        let (go, linear) = (&self.names.go, &self.names.linear);
        let decide_code = quote! {
            #decide_code
            #regions.vote(#linear, #go);
        };
        // The trip decision is a region whose code votes.
        let decide_region = self.region_with_raw(&head, decide_code, &head);
        let mut body_scope = scope.to_vec();
        body_scope.extend(head.iter().cloned());
        if let Seg::For { pat, .. } = seg {
            pattern_names(pat, &mut body_scope);
        }
        let (body_code, _) =
            self.segs_with_prelude(body, head.clone(), body_scope, &used, &head, body_prelude);
        let loop_site = quote_spanned!(span=> ::core::panic::Location::caller());
        let barrier_site = quote_spanned!(first_barrier=> ::core::panic::Location::caller());
        let head_store = self.fresh("head");
        out.extend(quote! {
            let mut #head_store = #store;
            loop {
                let #store = #head_store;
                #decide_region
                if !#regions.decide(#loop_site, #barrier_site) {
                    #head_store = #store;
                    break;
                }
                #body_code
                #head_store = #store;
            }
            let #store = #head_store;
        });
        (out, head)
    }

    /// A region whose code is given as tokens (they may use `__ferrocuda_linear`).
    fn region_with_raw(
        &mut self,
        carried_in: &[Ident],
        code: TokenStream2,
        carried_out: &[Ident],
    ) -> TokenStream2 {
        self.region(carried_in, code, &[], carried_out, None)
    }

    /// [`Gen::segs`] for a loop body, whose first region starts with `prelude` (binding the
    /// `for` pattern).
    fn segs_with_prelude(
        &mut self,
        body: &[Seg],
        carried: Vec<Ident>,
        scope: Vec<Ident>,
        later: &BTreeSet<String>,
        end: &[Ident],
        prelude: TokenStream2,
    ) -> (TokenStream2, Vec<Ident>) {
        if prelude.is_empty() {
            return self.segs(body, carried, scope, later, Some(end));
        }
        // The prelude runs as a region of its own before the body, carrying the pattern's names.
        let mut used = later.clone();
        body.iter().for_each(|s| seg_idents(s, &mut used));
        let live: Vec<Ident> = scope
            .iter()
            .filter(|n| used.contains(&n.to_string()) || carried.contains(n))
            .cloned()
            .collect();
        let mut live = live;
        dedup_last(&mut live);
        let first = self.region(&carried, prelude, &[], &live, None);
        let (rest, now) = self.segs(body, live, scope, later, Some(end));
        (quote!(#first #rest), now)
    }
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
        Seg::Items(_) | Seg::Code(_) => None,
    })
}

/// The body of the split function for [`Plan::Regions`].
pub(crate) fn regions(segs: &[SegPlan]) -> TokenStream2 {
    let segs: Vec<&Seg> = segs.iter().map(|s| &s.0).collect();
    let segs: Vec<Seg> = segs.into_iter().map(clone_seg).collect();
    let mut gen = Gen {
        names: Names::new(),
        store: Ident::new("__ferrocuda_store", Span::mixed_site()),
        counter: 0,
    };
    let (code, _) = gen.segs(&segs, Vec::new(), Vec::new(), &BTreeSet::new(), None);
    let (regions, store, base_1d) = (&gen.names.regions, &gen.store, &gen.names.base_1d);
    quote! {
        #[allow(unused_variables)]
        let #base_1d = #regions.base_1d();
        let #store = #regions.first_store();
        #code
    }
}

fn clone_seg(seg: &Seg) -> Seg {
    match seg {
        Seg::Items(items) => Seg::Items(items.clone()),
        Seg::Code(stmts) => Seg::Code(stmts.clone()),
        Seg::Barrier(span) => Seg::Barrier(*span),
        Seg::Collective(site) => Seg::Collective(site.clone()),
        Seg::While { cond, body, span } => Seg::While {
            cond: cond.clone(),
            body: body.iter().map(clone_seg).collect(),
            span: *span,
        },
        Seg::For {
            pat,
            iter,
            body,
            span,
        } => Seg::For {
            pat: pat.clone(),
            iter: iter.clone(),
            body: body.iter().map(clone_seg).collect(),
            span: *span,
        },
    }
}

/// The regions' hygienic argument name, for the generated function's signature.
pub(crate) fn regions_ident() -> Ident {
    Names::new().regions
}
