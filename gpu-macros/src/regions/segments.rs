//! The data the split path's passes hand on: the planner ([`super::plan()`]) cuts a body into
//! [`Seg`]ments, the analyses (`uniform`, `collective`, `unassigned`) rewrite them, and the code
//! generator (`codegen`) reads the [`Plan`].

use super::collective;
use super::names::Bindings;
use proc_macro2::Span;
use std::collections::BTreeSet;
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt};

/// The part of a kernel body between two boundaries, or a boundary.
pub(super) enum Seg {
    /// The items declared at the body's top level, hoisted above every region (first only).
    Items(Vec<Stmt>),
    /// Statements every thread runs.
    Code(Vec<Stmt>),
    /// `sync_threads()`, at this call's span.
    Barrier(Span),
    /// A block collective (`let x = block::reduce(..);`): the region before hands each thread's
    /// arguments to `state`, then one block-level step folds them into `results`, which the
    /// region after reads (`collective`).
    Collective(collective::Site),
    /// Assignments to block-uniform variables (`offset *= 2;`), run once for the block between
    /// the regions around them (`uniform`).
    Uniform(Vec<Stmt>),
    /// `if cond { break; }` (or `continue`, labelled or not) with a block-uniform `cond`, at
    /// the start or end of a region of a split loop: decided by the block, which jumps at once
    /// (`uniform::lift_leaves`).
    Leave(Leave),
    /// `while cond { body }` with a barrier in `body`; `uniform`: `cond` is block-uniform, so
    /// the block decides once per trip, with no vote (`uniform`).
    While {
        cond: Box<Expr>,
        body: Vec<Seg>,
        span: Span,
        uniform: bool,
        exits: Exits,
    },
    /// `for pat in iter { body }` with a barrier in `body`; `uniform`: `iter` is block-uniform
    /// and `pat` binds plain names, so the block steps the iterator once per trip (`uniform`).
    For {
        pat: Box<Pat>,
        iter: Box<Expr>,
        body: Vec<Seg>,
        span: Span,
        uniform: bool,
        exits: Exits,
    },
}

/// A block-uniform `break`/`continue` the block makes ([`Seg::Leave`]).
#[derive(Clone)]
pub(crate) struct Leave {
    pub(crate) cond: Expr,
    /// The split loop it leaves: its depth among those around it (0: the outermost).
    pub(crate) depth: usize,
    pub(crate) is_break: bool,
    pub(crate) span: Span,
}

/// How threads may leave a split loop other than by its condition.
#[derive(Clone, Default)]
pub(crate) struct Exits {
    /// The loop's label (`'outer: for ...`), which a `break`/`continue` may name.
    pub(crate) label: Option<String>,
    /// Some `break` or `continue` in its body (or a nested loop's) leaves it: threads may wait
    /// after it or at its next trip while others run.
    pub(crate) left: bool,
}

impl Seg {
    /// A split loop's exits.
    pub(super) fn exits(&self) -> Option<&Exits> {
        match self {
            Seg::While { exits, .. } | Seg::For { exits, .. } => Some(exits),
            _ => None,
        }
    }
}

/// What the CPU expansion does with a body.
pub(crate) enum Plan {
    /// One loop over the threads (no barrier).
    Elementwise(Vec<Stmt>),
    /// Regions between barriers.
    Regions(Vec<SegPlan>),
    /// The coroutine path, with the reason.
    Coroutines(String),
}

/// A [`Seg`] ready for code generation.
pub(crate) struct SegPlan(pub(super) Seg);

/// The loops and labelled blocks entered inside a statement, to tell a `break` or `continue`
/// that stays in it from one that leaves it (for a split loop around it). The same rules for
/// the planner's scan and the code generator's rewrite.
#[derive(Default, Clone)]
pub(super) struct Targets {
    /// Loops entered (a closure counts as one: nothing leaves it).
    pub(super) depth: usize,
    /// The labels of the loops and blocks entered.
    pub(super) labels: Vec<String>,
}

impl Targets {
    /// Enters a loop (`is_loop`) or a labelled block of the statement: what to restore on leaving.
    pub(super) fn enter(&mut self, label: Option<&syn::Label>, is_loop: bool) -> Targets {
        let saved = self.clone();
        self.depth += usize::from(is_loop);
        if let Some(label) = label {
            self.labels.push(label.name.ident.to_string());
        }
        saved
    }

    /// Whether a `break`/`continue` with `label` leaves the statement.
    pub(super) fn leaves(&self, label: Option<&syn::Lifetime>) -> bool {
        match label {
            None => self.depth == 0,
            Some(label) => !self.labels.contains(&label.ident.to_string()),
        }
    }
}

/// Every name the segments bind anywhere (`let`s, loop and closure patterns, `match` arms),
/// hoisted items' `let`s included.
/// The depth of the split loop, among `loops` (their labels, outermost first), that a `break` or
/// `continue` with `label` leaves: the innermost one without a label, else the innermost one
/// with that label; `None` when it leaves none of them.
pub(super) fn loop_depth(loops: &[Option<String>], label: Option<&syn::Lifetime>) -> Option<usize> {
    match label {
        None => loops.len().checked_sub(1),
        Some(label) => {
            let name = label.ident.to_string();
            loops
                .iter()
                .rposition(|l| l.as_deref() == Some(name.as_str()))
        }
    }
}

pub(super) fn bound_names(segs: &[Seg]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for seg in segs {
        let mut collect = Bindings(&mut names);
        match seg {
            Seg::Items(stmts) | Seg::Code(stmts) | Seg::Uniform(stmts) => {
                stmts.iter().for_each(|s| collect.visit_stmt(s))
            }
            Seg::While { cond, body, .. } => {
                collect.visit_expr(cond);
                names.extend(bound_names(body));
            }
            Seg::For {
                pat, iter, body, ..
            } => {
                collect.visit_pat(pat);
                collect.visit_expr(iter);
                names.extend(bound_names(body));
            }
            Seg::Barrier(_) | Seg::Collective(_) | Seg::Leave(_) => {}
        }
    }
    names
}
