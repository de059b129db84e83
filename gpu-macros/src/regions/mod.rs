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
//! an `if`, a closure, a `loop`), `break`/`continue` out of a split loop, a grid sync or a mutable
//! parameter keep the coroutine path, and [`plan`] says why. A body with no barrier is one
//! region: the elementwise loop. Items declared in the body (`const`, `static`, `use`, `fn`)
//! are hoisted above the regions, and so are block-uniform `let`s (`uniform`).

mod carried;
mod codegen;
mod collective;
mod elementwise;
mod uniform;

pub(crate) use codegen::{regions, regions_ident};
pub(crate) use elementwise::elementwise;

use proc_macro2::Span;
use std::collections::BTreeSet;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, ExprPath, FnArg, Ident, Pat, Stmt, Token};

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
    /// `while cond { body }` with a barrier in `body`; `uniform`: `cond` is block-uniform, so
    /// the block decides once per trip, with no vote (`uniform`).
    While {
        cond: Box<Expr>,
        body: Vec<Seg>,
        span: Span,
        uniform: bool,
    },
    /// `for pat in iter { body }` with a barrier in `body`; `uniform`: `iter` is block-uniform
    /// and `pat` binds plain names, so the block steps the iterator once per trip (`uniform`).
    For {
        pat: Box<Pat>,
        iter: Box<Expr>,
        body: Vec<Seg>,
        span: Span,
        uniform: bool,
    },
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
    let mut segs = match structure(&stmts, &locals, false) {
        Ok(segs) => segs,
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

/// Cuts `stmts` into segments; `in_loop`: inside a split loop (no `break`/`continue` may leave
/// a statement).
fn structure(stmts: &[Stmt], locals: &BTreeSet<String>, in_loop: bool) -> Result<Vec<Seg>, String> {
    let mut segs = Vec::new();
    let mut code = Vec::new();
    let flush = |code: &mut Vec<Stmt>, segs: &mut Vec<Seg>| {
        if !code.is_empty() {
            segs.push(Seg::Code(std::mem::take(code)));
        }
    };
    for stmt in stmts {
        if let Some(call) = collective::call_stmt(stmt) {
            for arg in &call.args {
                check_code_expr(arg, locals, in_loop)?;
            }
            let (put, site, take) = call.split();
            code.push(put);
            flush(&mut code, &mut segs);
            segs.push(Seg::Collective(site));
            code.push(take);
            continue;
        }
        if let Some(span) = barrier_stmt(stmt) {
            flush(&mut code, &mut segs);
            segs.push(Seg::Barrier(span));
            continue;
        }
        match stmt {
            Stmt::Expr(Expr::While(w), _) if has_barrier(&w.body) => {
                if w.label.is_some() || !w.attrs.is_empty() {
                    return Err("a labelled loop with a barrier".into());
                }
                check_code_expr(&w.cond, locals, false)?;
                if contains_return(&w.cond) {
                    return Err("a return in a loop condition".into());
                }
                flush(&mut code, &mut segs);
                segs.push(Seg::While {
                    cond: w.cond.clone(),
                    body: structure(&w.body.stmts, locals, true)?,
                    span: w.while_token.span,
                    uniform: false,
                });
            }
            Stmt::Expr(Expr::ForLoop(f), _) if has_barrier(&f.body) => {
                if f.label.is_some() || !f.attrs.is_empty() {
                    return Err("a labelled loop with a barrier".into());
                }
                check_code_expr(&f.expr, locals, false)?;
                if contains_return(&f.expr) {
                    return Err("a return in a loop's iterator".into());
                }
                flush(&mut code, &mut segs);
                segs.push(Seg::For {
                    pat: f.pat.clone(),
                    iter: f.expr.clone(),
                    body: structure(&f.body.stmts, locals, true)?,
                    span: f.for_token.span,
                    uniform: false,
                });
            }
            Stmt::Item(_) => return Err("an item declared inside a loop with a barrier".into()),
            Stmt::Local(local) if local.init.is_none() => {
                return Err("a `let` without a value".into());
            }
            _ => {
                check_stmt(stmt, locals, in_loop)?;
                code.push(stmt.clone());
            }
        }
    }
    flush(&mut code, &mut segs);
    Ok(segs)
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

fn check_stmt(stmt: &Stmt, locals: &BTreeSet<String>, in_loop: bool) -> Result<(), String> {
    let mut scan = Scan::new(locals);
    scan.visit_stmt(stmt);
    scan.verdict(in_loop)
}

fn check_code_expr(expr: &Expr, locals: &BTreeSet<String>, in_loop: bool) -> Result<(), String> {
    let mut scan = Scan::new(locals);
    scan.visit_expr(expr);
    scan.verdict(in_loop)
}

/// What a statement contains that matters for splitting.
#[derive(Default)]
struct Scan<'a> {
    /// Every name a `let` or closure binds in the body (parameters are not among them).
    locals: Option<&'a BTreeSet<String>>,
    barriers: usize,
    /// Why the statement cannot be in a region.
    refuse: Option<String>,
    /// Loops (and labelled blocks) entered, for `break`/`continue`.
    loop_depth: usize,
    /// A `break` or `continue` outside every loop of the statement.
    escapes: bool,
}

impl<'a> Scan<'a> {
    fn new(locals: &'a BTreeSet<String>) -> Self {
        Scan {
            locals: Some(locals),
            ..Scan::default()
        }
    }

    fn verdict(&self, in_loop: bool) -> Result<(), String> {
        if self.barriers > 0 {
            return Err("a barrier inside an `if`, `match`, block, closure or `loop`".into());
        }
        if let Some(why) = &self.refuse {
            return Err(why.clone());
        }
        if in_loop && self.escapes {
            return Err("a `break` or `continue` out of a loop with a barrier".into());
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
        let depth = std::mem::replace(&mut self.loop_depth, 1);
        syn::visit::visit_expr_closure(self, closure);
        self.loop_depth = depth;
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
        self.loop_depth += 1;
        syn::visit::visit_expr_while(self, e);
        self.loop_depth -= 1;
    }
    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        self.loop_depth += 1;
        syn::visit::visit_expr_for_loop(self, e);
        self.loop_depth -= 1;
    }
    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        self.loop_depth += 1;
        syn::visit::visit_expr_loop(self, e);
        self.loop_depth -= 1;
    }
    fn visit_expr_break(&mut self, e: &'ast syn::ExprBreak) {
        if self.loop_depth == 0 || e.label.is_some() {
            self.escapes = true;
        }
        syn::visit::visit_expr_break(self, e);
    }
    fn visit_expr_continue(&mut self, e: &'ast syn::ExprContinue) {
        if self.loop_depth == 0 || e.label.is_some() {
            self.escapes = true;
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
            Seg::Barrier(_) | Seg::Collective(_) => {}
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
