//! The split path's first pass: decides how the CPU expansion runs a body ([`plan`]), cuts it at
//! its barriers and collectives into segments (`structure`), checks what a region may hold, then
//! runs the analyses (`collective_segs`'s declarations, `uniform`'s hoisting) over the segments.

use super::collective_segs::{self, Group};
use super::names::{collect_all_locals, declared, has_warp_operation, path_names, pattern_names};
use super::segments::{Exits, Plan, Seg, SegPlan, Targets};
use super::{collective, unassigned, uniform};
use proc_macro2::Span;
use std::collections::BTreeSet;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, ExprPath, FnArg, Pat, Stmt, Token};

/// How deep split loops a `break`/`continue` may leave can nest (`ferrocuda_std::cpu`'s limit).
const MAX_LEAVE_DEPTH: usize = 8;

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
    items.extend(collective_segs::declarations(&segs));
    items.extend(uniform::hoist(&mut segs, block, inputs.iter().cloned()));
    if !items.is_empty() {
        segs.insert(0, Seg::Items(items));
    }
    Plan::Regions(segs.into_iter().map(SegPlan).collect())
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
    let mut group = Group::default();
    for stmt in stmts {
        if let Some(call) = collective::call_stmt(stmt) {
            for arg in &call.args {
                // `mma(&a, &b, &c)`: the region before hands the fragments over at once, so a
                // reference to a local there is never carried.
                let arg = match arg {
                    Expr::Reference(r) if call.kind.is_mma() => &*r.expr,
                    arg => arg,
                };
                check_code_expr(arg, locals)?;
            }
            if !group.admits(&call) {
                group.end(&mut code, &mut segs);
            }
            let mma = call.kind.is_mma();
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
        let saved = self.targets.enter(label, is_loop);
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
