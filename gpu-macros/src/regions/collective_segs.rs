//! Collectives among the segments: the planner's grouping of consecutive `mma` statements into
//! one block step ([`Group`], which cuts the segments at them), and the declarations of their
//! per-block states above the regions ([`declarations`]). The call's own syntax and code are
//! `collective`'s.

use super::collective::{Call, Kind, Site, Target};
use super::names::idents_of;
use super::segments::Seg;
use quote::ToTokens;
use std::collections::BTreeSet;
use syn::Stmt;

/// Collective calls in a row that share one block step: the region before hands over every
/// call's arguments, the block does each call's step in turn, and the region after binds every
/// result. Only `mma` statements group, and only while none reads what an earlier one of the
/// group assigns (its arguments are evaluated before the earlier results are bound): the eight
/// `acc_ij = mma(&fa_i, &fb_j, &acc_ij);` of a k-step are one step instead of eight, one
/// region loop over the block's threads instead of eight (each of which would carry every
/// fragment and accumulator through per-thread slots).
#[derive(Default)]
pub(super) struct Group {
    calls: Vec<(Stmt, Site, Stmt)>,
    /// The names the group's statements bind or assign (and any name in a place assigned).
    written: BTreeSet<String>,
}

impl Group {
    /// Whether `call` can join the group (an empty one takes any call).
    pub(super) fn admits(&self, call: &Call) -> bool {
        if self.calls.is_empty() {
            return true;
        }
        let mut read = BTreeSet::new();
        for arg in &call.args {
            idents_of(arg.to_token_stream(), &mut read);
        }
        call.kind.is_mma() && self.written.is_disjoint(&read)
    }

    /// Adds `call` (which [`Group::admits`]).
    pub(super) fn push(&mut self, call: Call) {
        let target = match &call.target {
            Target::Local(local) => local.pat.to_token_stream(),
            Target::Assign(place) => place.to_token_stream(),
        };
        idents_of(target, &mut self.written);
        self.calls.push(call.split());
    }

    /// Ends the group (if any): its hand-overs end the region in `code` (into `segs`), its
    /// steps follow, and its bindings start the next region in `code`.
    pub(super) fn end(&mut self, code: &mut Vec<Stmt>, segs: &mut Vec<Seg>) {
        if self.calls.is_empty() {
            return;
        }
        self.written.clear();
        let calls = std::mem::take(&mut self.calls);
        let mut takes = Vec::with_capacity(calls.len());
        for (put, site, take) in calls {
            code.push(put);
            takes.push((site, take));
        }
        if !code.is_empty() {
            segs.push(Seg::Code(std::mem::take(code)));
        }
        for (site, take) in takes {
            segs.push(Seg::Collective(site));
            code.push(take);
        }
    }
}

/// The declarations of the per-block states of the collectives in `segs`, for above the regions.
pub(super) fn declarations(segs: &[Seg]) -> Vec<Stmt> {
    let mut out = Vec::new();
    for seg in segs {
        match seg {
            Seg::Collective(site) => {
                let state = &site.state;
                // A reference: the region closures capture copies (move), and a reference is
                // what every thread's region must share.
                out.push(match site.kind {
                    Kind::MmaTiles => syn::parse_quote! {
                        let #state = &::ferrocuda_std::split_steps::collective::MmaTilesCollective::new();
                    },
                    Kind::Mma => syn::parse_quote! {
                        let #state = &::ferrocuda_std::split_steps::collective::MmaCollective::new();
                    },
                    Kind::Block => syn::parse_quote! {
                        let #state = &::ferrocuda_std::split_steps::collective::Collective::new();
                    },
                });
            }
            Seg::While { body, .. } | Seg::For { body, .. } => out.extend(declarations(body)),
            Seg::Items(_) | Seg::Code(_) | Seg::Barrier(_) | Seg::Uniform(_) | Seg::Leave(_) => {}
        }
    }
    out
}
