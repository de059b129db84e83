//! Region splitting, for the CPU expansion: a kernel body whose barriers (`sync_threads()`) sit
//! at its top level or inside `while`/`for` loops at its top level is cut at them into regions,
//! and each region becomes a loop over the block's threads (POCL's and MCUDA's loop fission).
//! The variables a later region uses stay between regions in per-thread slots, one array per
//! variable (`ferrocuda_std::cpu::Slots`); a region reads the ones it names and writes back the
//! ones it may have changed (`codegen`). A loop with a barrier in it asks every thread for its
//! decision (another trip or not) and stops the block with a divergence report if they differ
//! (`ferrocuda_std::cpu::Regions`).
//!
//! Splitting is optimistic: the macro cannot look into the functions the body calls (nor into
//! warp operations' neighbours), and takes them as barrier-free; a barrier or warp operation
//! reached inside a region moves the rest of that region onto coroutines at run time
//! (`ferrocuda_std::cpu`'s fallback). A barrier of the body itself anywhere else than above (inside
//! an `if`, a closure, a `loop`), a grid sync or a mutable parameter keep the coroutine path, and
//! [`plan`] says why. A body with no barrier is one region: the elementwise loop.
//!
//! `break`, `continue` and `return` may leave a split loop from anywhere in its regions (in an
//! `if`, a `match`, a nested loop without a barrier; labelled or not): the thread stops running
//! the trip's regions and waits where it went (`Regions::leave`); when every thread that has not
//! returned is waiting, the block goes there (after the loop, or its next trip), and a thread
//! others do not follow to a barrier is barrier divergence, as on the coroutine path. A `let`
//! without a value is cut into one `let` per name and carried once assigned (`unassigned`). Items declared in the body (`const`, `static`, `use`, `fn`)
//! are hoisted above the regions, and so are block-uniform `let`s (`uniform`).

mod carried;
mod codegen;
mod collective;
mod elementwise;
mod unassigned;
mod uniform;

pub(crate) use codegen::{regions, regions_ident};
pub(crate) use elementwise::elementwise;

use proc_macro2::Span;
use std::collections::BTreeSet;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, ExprPath, FnArg, Ident, Pat, Stmt, Token};

/// How deep split loops a `break`/`continue` may leave can nest (`ferrocuda_std::cpu`'s limit).
const MAX_LEAVE_DEPTH: usize = 8;

/// The part of a kernel body between two boundaries, or a boundary.
enum Seg {
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
    fn exits(&self) -> Option<&Exits> {
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
pub(crate) struct SegPlan(Seg);

/// Decides how the CPU expansion runs `block` (the host body, after `shared!` was rewritten).
pub(crate) fn plan(
    block: &Block,
    inputs: &Punctuated<FnArg, Token![,]>,
    cooperative: bool,
) -> Plan {
    if cooperative {
        return Plan::Coroutines("a cooperative kernel (grid.sync())".into());
    }
    for input in inputs {
        if let FnArg::Typed(typed) = input {
            if !matches!(&*typed.pat, Pat::Ident(p) if p.mutability.is_none() && p.by_ref.is_none())
            {
                return Plan::Coroutines("a mutable or destructured parameter".into());
            }
        }
    }
    // Parameters outlive every region, so references to them may be carried; references to
    // locals may not.
    let mut locals = BTreeSet::new();
    collect_all_locals(block, &mut locals);
    collective::reset_names();
    // Items cannot see the body's locals, so they can go above every region.
    let (items, stmts): (Vec<Stmt>, Vec<Stmt>) = block
        .stmts
        .iter()
        .cloned()
        .partition(|stmt| matches!(stmt, Stmt::Item(_)));
    let mut segs = match structure(&stmts, &locals, &[]) {
        Ok((segs, _)) => segs,
        Err(why) => return Plan::Coroutines(why),
    };
    match segs.as_slice() {
        [] => return Plan::Elementwise(items),
        // The elementwise loop moves a block onto coroutines only at its first thread; a warp
        // operation some first lanes skip needs the region loop's check after every thread.
        [Seg::Code(stmts)] if !has_warp_operation(stmts) => {
            return Plan::Elementwise([items, stmts.clone()].concat())
        }
        _ => {}
    }
    if let Err(why) = check_scopes(&segs, &BTreeSet::new()) {
        return Plan::Coroutines(why);
    }
    let mut items = items;
    items.extend(collective::declarations(&segs));
    items.extend(uniform::hoist(&mut segs, block, inputs.iter().cloned()));
    if !items.is_empty() {
        segs.insert(0, Seg::Items(items));
    }
    Plan::Regions(segs.into_iter().map(SegPlan).collect())
}

/// The segments of a path expression, `a::b::c` → `["a", "b", "c"]`.
pub(super) fn path_names(path: &ExprPath) -> Vec<String> {
    path.path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect()
}

/// The barrier, if `stmt` is `sync_threads();` (`thread::`, `ferrocuda_std::thread::` or bare).
pub(crate) fn barrier_stmt(stmt: &Stmt) -> Option<Span> {
    let Stmt::Expr(Expr::Call(call), Some(_)) = stmt else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let names = path_names(path);
    let is_barrier = matches!(
        names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["sync_threads"] | ["thread", "sync_threads"] | ["ferrocuda_std", "thread", "sync_threads"]
    );
    (is_barrier && call.args.is_empty()).then(|| call.span())
}

/// Cuts `stmts` into segments; `loops`: the labels of the split loops around them, outermost
/// first. Returns the segments and the depths (indices in `loops`) of the loops a `break` or
/// `continue` in them leaves.
fn structure(
    stmts: &[Stmt],
    locals: &BTreeSet<String>,
    loops: &[Option<String>],
) -> Result<(Vec<Seg>, BTreeSet<usize>), String> {
    let mut segs = Vec::new();
    let mut code = Vec::new();
    let mut targets = BTreeSet::new();
    let flush = |code: &mut Vec<Stmt>, segs: &mut Vec<Seg>| {
        if !code.is_empty() {
            segs.push(Seg::Code(std::mem::take(code)));
        }
    };
    // A split loop of these statements: its body's segments, and whether a `break`/`continue`
    // leaves it (the targets further out go to the caller).
    let split_loop = |label: &Option<syn::Label>,
                      body: &Block,
                      targets: &mut BTreeSet<usize>|
     -> Result<(Vec<Seg>, Exits), String> {
        let label = label.as_ref().map(|l| l.name.ident.to_string());
        let depth = loops.len();
        if depth >= MAX_LEAVE_DEPTH {
            return Err(format!("split loops nested deeper than {MAX_LEAVE_DEPTH}"));
        }
        let inner: Vec<Option<String>> = loops.iter().cloned().chain([label.clone()]).collect();
        let (body, mut left) = structure(&body.stmts, locals, &inner)?;
        let exits = Exits {
            label,
            left: left.remove(&depth),
        };
        targets.extend(left);
        Ok((body, exits))
    };
    // Consecutive independent `mma` statements, which share one block step (`collective`).
    let mut group = collective::Group::default();
    for stmt in stmts {
        if let Some(call) = collective::call_stmt(stmt) {
            for arg in &call.args {
                // `mma(&a, &b, &c)`: the region before hands the fragments over at once, so a
                // reference to a local there is never carried.
                let arg = match arg {
                    Expr::Reference(r) if call.mma => &*r.expr,
                    arg => arg,
                };
                check_code_expr(arg, locals)?;
            }
            if !group.admits(&call) {
                group.end(&mut code, &mut segs);
            }
            let mma = call.mma;
            group.push(call);
            if !mma {
                group.end(&mut code, &mut segs);
            }
            continue;
        }
        group.end(&mut code, &mut segs);
        if let Some(span) = barrier_stmt(stmt) {
            flush(&mut code, &mut segs);
            segs.push(Seg::Barrier(span));
            continue;
        }
        match stmt {
            Stmt::Expr(Expr::While(w), _) if has_barrier(&w.body) => {
                if !w.attrs.is_empty() {
                    return Err("a loop with a barrier and attributes".into());
                }
                check_code_expr(&w.cond, locals)?;
                if contains_return(&w.cond) {
                    return Err("a return in a loop condition".into());
                }
                flush(&mut code, &mut segs);
                let (body, exits) = split_loop(&w.label, &w.body, &mut targets)?;
                segs.push(Seg::While {
                    cond: w.cond.clone(),
                    body,
                    span: w.while_token.span,
                    uniform: false,
                    exits,
                });
            }
            Stmt::Expr(Expr::ForLoop(f), _) if has_barrier(&f.body) => {
                if !f.attrs.is_empty() {
                    return Err("a loop with a barrier and attributes".into());
                }
                check_code_expr(&f.expr, locals)?;
                if contains_return(&f.expr) {
                    return Err("a return in a loop's iterator".into());
                }
                flush(&mut code, &mut segs);
                let (body, exits) = split_loop(&f.label, &f.body, &mut targets)?;
                segs.push(Seg::For {
                    pat: f.pat.clone(),
                    iter: f.expr.clone(),
                    body,
                    span: f.for_token.span,
                    uniform: false,
                    exits,
                });
            }
            Stmt::Item(_) => return Err("an item declared inside a loop with a barrier".into()),
            Stmt::Local(local) if local.init.is_none() => {
                // One `let` per name, each carried once assigned (`unassigned`).
                code.extend(unassigned::normalize(local)?);
            }
            _ => {
                let leaves = check_stmt(stmt, locals)?;
                for (label, _) in leaves {
                    let depth = match &label {
                        None => loops.len().checked_sub(1),
                        Some(label) => loops.iter().rposition(|l| l.as_ref() == Some(label)),
                    };
                    match depth {
                        Some(depth) => {
                            targets.insert(depth);
                        }
                        None => {
                            return Err(
                                "a `break` or `continue` out of a loop #[kernel] did not split"
                                    .into(),
                            )
                        }
                    }
                }
                code.push(stmt.clone());
            }
        }
    }
    group.end(&mut code, &mut segs);
    flush(&mut code, &mut segs);
    Ok((segs, targets))
}

/// Whether `stmts` call a warp operation (other than the lane and warp queries).
fn has_warp_operation(stmts: &[Stmt]) -> bool {
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

/// Whether a barrier call appears anywhere in `block`.
fn has_barrier(block: &Block) -> bool {
    let mut scan = Scan::default();
    scan.visit_block(block);
    scan.barriers > 0
}

/// Checks that `stmt` can be in a region; returns the `break`s and `continue`s that leave it
/// (each with its label, if it has one, and whether it is a `break`).
fn check_stmt(
    stmt: &Stmt,
    locals: &BTreeSet<String>,
) -> Result<Vec<(Option<String>, bool)>, String> {
    let mut scan = Scan::new(locals);
    scan.visit_stmt(stmt);
    scan.verdict()?;
    Ok(scan.leaves)
}

/// Checks that `expr` (a loop's condition or iterator, a collective's arguments) can be
/// evaluated by a region: nothing in it leaves a loop.
fn check_code_expr(expr: &Expr, locals: &BTreeSet<String>) -> Result<(), String> {
    let mut scan = Scan::new(locals);
    scan.visit_expr(expr);
    scan.verdict()?;
    if !scan.leaves.is_empty() {
        return Err("a `break` or `continue` in a loop's head or a collective's arguments".into());
    }
    Ok(())
}

/// What a statement contains that matters for splitting.
#[derive(Default)]
struct Scan<'a> {
    /// Every name a `let` or closure binds in the body (parameters are not among them).
    locals: Option<&'a BTreeSet<String>>,
    barriers: usize,
    /// Why the statement cannot be in a region.
    refuse: Option<String>,
    /// Where `break`/`continue` go: see [`Targets`].
    targets: Targets,
    /// The `break`s and `continue`s that leave the statement: label, and whether a `break`.
    leaves: Vec<(Option<String>, bool)>,
}

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
    /// Whether a `break`/`continue` with `label` leaves the statement.
    pub(super) fn leaves(&self, label: Option<&syn::Lifetime>) -> bool {
        match label {
            None => self.depth == 0,
            Some(label) => !self.labels.contains(&label.ident.to_string()),
        }
    }
}

impl<'a> Scan<'a> {
    fn new(locals: &'a BTreeSet<String>) -> Self {
        Scan {
            locals: Some(locals),
            ..Scan::default()
        }
    }

    fn verdict(&self) -> Result<(), String> {
        if self.barriers > 0 {
            return Err("a barrier inside an `if`, `match`, block, closure or `loop`".into());
        }
        if let Some(why) = &self.refuse {
            return Err(why.clone());
        }
        Ok(())
    }

    fn refuse(&mut self, why: impl Into<String>) {
        if self.refuse.is_none() {
            self.refuse = Some(why.into());
        }
    }

    fn call_path(&mut self, path: &ExprPath) {
        let segments = path_names(path);
        let last = segments.last().map(String::as_str).unwrap_or("");
        if matches!(
            last,
            "sync_threads" | "sync_threads_count" | "sync_threads_and" | "sync_threads_or"
        ) || collective::is_collective(&segments)
        {
            self.barriers += 1;
            return;
        }
        // A warp operation, or a barrier in a function the body calls, is left to the run
        // time's fallback; a grid sync cannot be (the other blocks would have to be suspended).
        if segments.iter().any(|s| s == "grid") {
            self.refuse(format!("a grid operation (`{}`)", segments.join("::")));
        }
    }

    fn with_targets(
        &mut self,
        label: Option<&syn::Label>,
        is_loop: bool,
        f: impl FnOnce(&mut Self),
    ) {
        let saved = self.targets.clone();
        self.targets.depth += usize::from(is_loop);
        if let Some(label) = label {
            self.targets.labels.push(label.name.ident.to_string());
        }
        f(self);
        self.targets = saved;
    }
}

impl<'ast> Visit<'ast> for Scan<'_> {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let Expr::Path(path) = &*call.func {
            self.call_path(path);
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if call.method == "sync" {
            self.refuse("a grid sync");
        }
        syn::visit::visit_expr_method_call(self, call);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if !crate::owned_outputs::standard_expression_macro(mac) {
            self.refuse("a macro #[kernel] cannot look into");
            return;
        }
        match mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
            Ok(args) => args.iter().for_each(|arg| self.visit_expr(arg)),
            Err(_) => self.refuse("a macro #[kernel] cannot look into"),
        }
    }
    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        // `break`/`continue` in a closure cannot leave it.
        let saved = std::mem::replace(
            &mut self.targets,
            Targets {
                depth: 1,
                labels: Vec::new(),
            },
        );
        syn::visit::visit_expr_closure(self, closure);
        self.targets = saved;
    }
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {
        self.refuse("an async block");
    }
    fn visit_item(&mut self, item: &'ast syn::Item) {
        // A nested item cannot see the body's locals. The elementwise loop has its code twice
        // (the first thread's and the others'), so a `static` in it would be two.
        if matches!(item, syn::Item::Static(_)) {
            self.refuse("a `static` declared inside a block of the body");
        }
    }
    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        self.with_targets(e.label.as_ref(), true, |s| {
            syn::visit::visit_expr_while(s, e)
        });
    }
    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        // The iterator is evaluated outside the loop.
        self.visit_pat(&e.pat);
        self.visit_expr(&e.expr);
        self.with_targets(e.label.as_ref(), true, |s| s.visit_block(&e.body));
    }
    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        self.with_targets(e.label.as_ref(), true, |s| {
            syn::visit::visit_expr_loop(s, e)
        });
    }
    fn visit_expr_block(&mut self, e: &'ast syn::ExprBlock) {
        self.with_targets(e.label.as_ref(), false, |s| {
            syn::visit::visit_expr_block(s, e)
        });
    }
    fn visit_expr_break(&mut self, e: &'ast syn::ExprBreak) {
        if self.targets.leaves(e.label.as_ref()) {
            if e.expr.is_some() {
                self.refuse("a `break` with a value out of a loop with a barrier");
            }
            let label = e.label.as_ref().map(|l| l.ident.to_string());
            self.leaves.push((label, true));
        }
        syn::visit::visit_expr_break(self, e);
    }
    fn visit_expr_continue(&mut self, e: &'ast syn::ExprContinue) {
        if self.targets.leaves(e.label.as_ref()) {
            let label = e.label.as_ref().map(|l| l.ident.to_string());
            self.leaves.push((label, false));
        }
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.by_ref.is_some() {
            self.refuse("a `ref` binding");
        }
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_expr_reference(&mut self, e: &'ast syn::ExprReference) {
        // `&local` carried to a later region with `local` would not borrow-check; a parameter
        // outlives the regions.
        if let Expr::Path(path) = &*e.expr {
            let name = path.path.segments[0].ident.to_string();
            let local = self.locals.is_none_or(|locals| locals.contains(&name));
            if path.path.segments.len() == 1 && local {
                self.refuse("a reference to a local variable");
            }
        }
        syn::visit::visit_expr_reference(self, e);
    }
}

/// Whether `expr` has a `return` (outside closures).
fn contains_return(expr: &Expr) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut find = Find(false);
    find.visit_expr(expr);
    find.0
}

/// Collects every name a pattern binds (`let`s, closure and loop patterns, `match` arms),
/// outside nested items.
struct Bindings<'a>(&'a mut BTreeSet<String>);

impl<'ast> Visit<'ast> for Bindings<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Every name bound by a `let` or closure parameter anywhere in `block`.
fn collect_all_locals(block: &Block, names: &mut BTreeSet<String>) {
    Bindings(names).visit_block(block);
}

/// Every name the segments bind anywhere (`let`s, loop and closure patterns, `match` arms),
/// hoisted items' `let`s included.
fn bound_names(segs: &[Seg]) -> BTreeSet<String> {
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

/// The names a pattern binds, in order.
fn pattern_names(pat: &Pat, names: &mut Vec<Ident>) {
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
fn declared(stmts: &[Stmt]) -> Vec<Ident> {
    let mut names = Vec::new();
    for stmt in stmts {
        if let Stmt::Local(local) = stmt {
            pattern_names(&local.pat, &mut names);
        }
    }
    names
}

/// Loop bodies may not shadow a name of an enclosing scope (the per-thread store at the loop
/// head must keep one type per name).
fn check_scopes(segs: &[Seg], outer: &BTreeSet<String>) -> Result<(), String> {
    let mut scope = outer.clone();
    for seg in segs {
        match seg {
            Seg::Code(stmts) => {
                for name in declared(stmts) {
                    scope.insert(name.to_string());
                }
            }
            Seg::Items(_) | Seg::Barrier(_) | Seg::Collective(_) | Seg::Uniform(_) => {}
            Seg::Leave(_) => {}
            Seg::While { body, .. } | Seg::For { body, .. } => {
                let mut inner = Vec::new();
                if let Seg::For { pat, .. } = seg {
                    pattern_names(pat, &mut inner);
                }
                for seg in body {
                    if let Seg::Code(stmts) = seg {
                        inner.extend(declared(stmts));
                    }
                }
                if inner.iter().any(|n| scope.contains(&n.to_string())) {
                    return Err("a loop with a barrier that shadows an outer variable".into());
                }
                let mut body_scope = scope.clone();
                body_scope.extend(inner.iter().map(ToString::to_string));
                check_scopes(body, &body_scope)?;
            }
        }
    }
    Ok(())
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
