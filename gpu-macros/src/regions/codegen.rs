//! Code generation for the plans of the parent module: the elementwise loop nest, and the
//! region loops with the slots of their carried variables and their trip decisions.

use super::carried::Carried;
use super::collective;
use super::names::{declared, idents_of, pattern_names, Names};
use super::segments::{bound_names, Seg, SegPlan};
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::BTreeSet;
use syn::{Ident, Stmt};

pub(super) fn seg_idents(seg: &Seg, into: &mut BTreeSet<String>) {
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

/// Code generation for [`Plan::Regions`](super::Plan::Regions). Every carried variable's slots are made once at the
/// top of the block's function; the code generator knows, at each point, which variables' slots
/// hold a value for every live thread (the `Vec<Carried>` it passes along), and a region reads
/// only those.
pub(super) struct Gen {
    pub(super) names: Names,
    pub(super) counter: usize,
    /// Every carried variable's slots, declared at the top.
    pub(super) slots: Vec<Ident>,
    /// Every name the body binds: a local, never a constant, whatever its case.
    pub(super) bound: BTreeSet<String>,
    /// The split loops around the code being generated, outermost first.
    pub(super) loops: Vec<LoopCtx>,
    /// Why the body cannot take the split path after all (found while generating it).
    pub(super) error: Option<String>,
}

/// A split loop around the code being generated.
pub(super) struct LoopCtx {
    /// The kernel's label of the loop (`'outer`), which a `break`/`continue` may name.
    pub(super) user: Option<String>,
    /// The generated loop's label.
    pub(super) label: syn::Lifetime,
    /// The names its head carries: where a thread leaving a trip puts them back.
    pub(super) head: Vec<Ident>,
    /// Whether a `break` or `continue` leaves it.
    pub(super) left: bool,
}

impl Gen {
    pub(super) fn fresh(&mut self, what: &str) -> Ident {
        self.counter += 1;
        Ident::new(
            &format!("__ferrocuda_{what}_{}", self.counter),
            Span::mixed_site(),
        )
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
    pub(super) fn close(carried: &[Carried], end: &[Carried]) -> Result<(), TokenStream2> {
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
    pub(super) fn segs(
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

    /// [`Gen::segs`] for a loop body, whose first region starts with `prelude` (binding the
    /// `for` pattern's names).
    pub(super) fn segs_with_prelude(
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
pub(super) fn after_trip(
    body: &[Seg],
    binds: &[Ident],
    used: &BTreeSet<String>,
) -> BTreeSet<String> {
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
pub(super) fn trip_end(head: &[Carried]) -> Vec<Ident> {
    head.iter()
        .filter(|c| c.unassigned.is_none())
        .map(|c| c.name.clone())
        .collect()
}

/// `end` (what a loop body's regions leave) with the head's unassigned names as the head has
/// them (see [`trip_end`]).
pub(super) fn reunassigned(mut end: Vec<Carried>, head: &[Carried]) -> Vec<Carried> {
    for h in head.iter().filter(|c| c.unassigned.is_some()) {
        end.retain(|c| c.name != h.name);
        end.push(h.clone());
    }
    end
}

/// Keeps the last of each name.
pub(super) fn dedup_last(names: &mut Vec<Ident>) {
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
pub(super) fn first_barrier(segs: &[Seg]) -> Option<Span> {
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
