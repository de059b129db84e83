//! Block-uniform `let`s of a split body: a top-level `let` whose value every thread of a block
//! computes alike (a `shared!` array, `thread::block_dim()`, a parameter's length, casts and
//! arithmetic of those) is hoisted above the regions, evaluated once per block and read by every
//! region, instead of being carried per thread from region to region (a store slot per thread
//! per region boundary: the split path's main cost in kernels with many barriers).
//!
//! Only what cannot panic differently per block and cannot observe time is hoisted: no calls
//! but the block's geometry, `len()` and a constant table's `view()`, no division or
//! remainder, no indexing, no reads of shared memory. The name must be bound once in the body
//! and not be a parameter's, so that hoisting changes no name's meaning.
//!
//! The analysis works on bindings, not on spellings: a name bound anywhere in the body (a
//! `let`, a pattern, a closure's parameter) is never taken for a parameter or a constant there,
//! whatever its case (`let n = n * 2;` shadows the parameter `n`; `let mut K = 5;` is no
//! constant). And a value that can fail (arithmetic that overflows in a debug build) is not
//! hoisted above a statement that may leave the body first (`if x.is_empty() { return; }`, a
//! `?`, a macro such as `assert!`): the guard would no longer guard it.

use super::names::{idents_of, is_assignment};
use super::segments::{loop_depth, Leave, Seg};
use super::uniform_expr::{can_fail, may_leave, seg_may_leave, Uniform};
use std::collections::{BTreeMap, BTreeSet};
use syn::visit::Visit;
use syn::{Block, Expr, FnArg, Pat, Stmt};

/// Takes the block-uniform `let`s out of the top-level code segments of `segs`, in order.
pub(super) fn hoist(
    segs: &mut Vec<Seg>,
    block: &Block,
    inputs: impl IntoIterator<Item = FnArg>,
) -> Vec<Stmt> {
    let mut bindings = BTreeMap::<String, usize>::new();
    count_bindings(block, &mut bindings);
    let params: BTreeSet<String> = inputs
        .into_iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => match *typed.pat {
                Pat::Ident(p) => Some(p.ident.to_string()),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();
    // A parameter's name bound in the body is the local's there (shadowing), not the parameter.
    let params: BTreeSet<String> = params
        .into_iter()
        .filter(|name| !bindings.contains_key(name))
        .collect();
    let mut uniform = Uniform {
        names: BTreeSet::new(),
        params: &params,
        bound: &bindings,
    };
    let mut hoisted = Vec::new();
    // Whether a statement before (not hoisted) may leave the body or panic first.
    let mut guarded = false;
    for seg in segs.iter_mut() {
        let stmts = match seg {
            Seg::Code(stmts) => stmts,
            Seg::While { .. } | Seg::For { .. } => {
                guarded |= seg_may_leave(seg);
                continue;
            }
            _ => continue,
        };
        stmts.retain(|stmt| {
            let hoistable = match stmt {
                Stmt::Local(local) => local.init.as_ref().is_some_and(|init| {
                    let mut names = Vec::new();
                    init.diverge.is_none()
                        && simple_names(&local.pat, &mut names)
                        && names.iter().all(|name| bindings.get(name) == Some(&1))
                        && uniform.expr(&init.expr)
                        && !(guarded && can_fail(&init.expr))
                        && {
                            uniform.names.extend(names);
                            true
                        }
                }),
                _ => false,
            };
            if hoistable {
                hoisted.push(stmt.clone());
            } else {
                guarded |= may_leave(stmt);
            }
            !hoistable
        });
    }
    hoisted.extend(variables(segs, &mut uniform, &bindings));
    lift_leaves(segs, &uniform, &mut Vec::new());
    segs.retain(|seg| !matches!(seg, Seg::Code(stmts) if stmts.is_empty()));
    hoisted
}

/// Takes `if cond { break; }` (or `continue`, labelled or not) with a block-uniform `cond` out
/// of the start and the end of the regions of split loops into [`Seg::Leave`]s: every thread
/// would leave there alike, so the block decides once and jumps (Rodinia hotspot's `if i ==
/// iteration - 1 { break; }` between its barriers), where each thread would otherwise test it
/// and wait (`Regions::leave`). Only at a region's edges, so that no region is cut in two.
/// `loops`: the labels of the split loops around `segs`.
fn lift_leaves(segs: &mut Vec<Seg>, uniform: &Uniform, loops: &mut Vec<Option<String>>) {
    let leave = |stmt: &Stmt, loops: &[Option<String>]| -> Option<Leave> {
        let Stmt::Expr(Expr::If(e), _) = stmt else {
            return None;
        };
        if e.else_branch.is_some() || !e.attrs.is_empty() || e.then_branch.stmts.len() != 1 {
            return None;
        }
        let (label, is_break, span) = match &e.then_branch.stmts[0] {
            Stmt::Expr(Expr::Break(b), _) if b.expr.is_none() && b.attrs.is_empty() => {
                (&b.label, true, b.break_token.span)
            }
            Stmt::Expr(Expr::Continue(c), _) if c.attrs.is_empty() => {
                (&c.label, false, c.continue_token.span)
            }
            _ => return None,
        };
        let depth = loop_depth(loops, label.as_ref())?;
        uniform.expr(&e.cond).then(|| Leave {
            cond: (*e.cond).clone(),
            depth,
            is_break,
            span,
        })
    };
    let mut out = Vec::new();
    for mut seg in std::mem::take(segs) {
        match &mut seg {
            Seg::While { body, exits, .. } | Seg::For { body, exits, .. } => {
                loops.push(exits.label.clone());
                lift_leaves(body, uniform, loops);
                loops.pop();
                out.push(seg);
            }
            Seg::Code(stmts) if !loops.is_empty() => {
                let mut first = 0;
                while let Some(l) = stmts.get(first).and_then(|s| leave(s, loops)) {
                    out.push(Seg::Leave(l));
                    first += 1;
                }
                let mut after = Vec::new();
                let mut last = stmts.len();
                while last > first {
                    match leave(&stmts[last - 1], loops) {
                        Some(l) => after.push(Seg::Leave(l)),
                        None => break,
                    }
                    last -= 1;
                }
                let code: Vec<Stmt> = stmts[first..last].to_vec();
                if !code.is_empty() {
                    out.push(Seg::Code(code));
                }
                out.extend(after.into_iter().rev());
            }
            _ => out.push(seg),
        }
    }
    *segs = out;
}

/// The block-uniform variables of `segs`, after the immutable ones are in `uniform`: a `let mut`
/// at the body's top level whose value is block-uniform (`let mut offset = 1;`) and whose only
/// changes are top-level statements of the body or of its split loops assigning it a
/// block-uniform value (`offset *= 2;`), and the names a split `for` over a block-uniform
/// iterator binds. Every thread would hold the same value at each barrier, so the block holds
/// one: the `let mut`s are taken out (returned, for hoisting), each assignment becomes a
/// [`Seg::Uniform`] between the regions around it, and the split loops whose condition or
/// iterator is then block-uniform are marked so (decided once per trip, with no vote). The
/// split loops run every thread the same number of trips (else barrier divergence), so an
/// assignment in one is made the same number of times in every thread.
///
/// A variable is taken only where nothing else can change it: it is not borrowed (`&`,
/// `&mut`), not a method's receiver (which may borrow it mutably), not named in a macro, and
/// not assigned anywhere else (in an `if`, a closure, a nested block).
fn variables(
    segs: &mut Vec<Seg>,
    uniform: &mut Uniform,
    bindings: &BTreeMap<String, usize>,
) -> Vec<Stmt> {
    let plain = |name: &String| bindings.get(name) == Some(&1) && !uniform.params.contains(name);
    // Candidates: the top-level `let mut`s with a block-uniform value (one that can fail only
    // where no statement before may leave the body first), and the split `for`s' plain names.
    let mut lets = BTreeMap::new();
    let mut guarded = false;
    for seg in segs.iter() {
        let Seg::Code(stmts) = seg else {
            guarded |= seg_may_leave(seg);
            continue;
        };
        for stmt in stmts {
            match mutable_let(stmt) {
                Some((name, init))
                    if plain(&name) && uniform.expr(init) && !(guarded && can_fail(init)) =>
                {
                    lets.insert(name, stmt.clone());
                }
                _ => guarded |= may_leave(stmt),
            }
        }
    }
    let mut loops = Vec::new();
    collect_loops(segs, &mut loops);
    let loops: Vec<(Vec<String>, Expr)> = loops
        .into_iter()
        .filter(|(names, _)| names.iter().all(plain))
        .collect();
    let mut candidates: BTreeSet<String> = lets.keys().cloned().collect();
    candidates.extend(loops.iter().flat_map(|(names, _)| names.iter().cloned()));
    let mut assignments = Vec::new();
    let mut uses = Uses {
        candidates: &candidates,
        changed: BTreeSet::new(),
    };
    scan(segs, &candidates, &mut assignments, &mut uses, false);
    let mut names: BTreeSet<String> = candidates.difference(&uses.changed).cloned().collect();
    // A `for` name is assigned never (it is not `mut`); drop what depends on a dropped name
    // until nothing changes.
    let base = uniform.names.clone();
    loop {
        uniform.names = base.union(&names).cloned().collect();
        let mut dropped: Vec<String> = assignments
            .iter()
            .filter(|(name, value)| !(lets.contains_key(name) && uniform.expr(value)))
            .map(|(name, _)| name.clone())
            .collect();
        for (bound, iter) in &loops {
            if !uniform.iter(iter) {
                dropped.extend(bound.iter().cloned());
            }
        }
        let before = names.len();
        dropped.iter().for_each(|name| {
            names.remove(name);
        });
        if names.len() == before {
            break;
        }
    }
    uniform.names = base.union(&names).cloned().collect();
    let mut hoisted = Vec::new();
    for seg in segs.iter_mut() {
        let Seg::Code(stmts) = seg else { continue };
        stmts.retain(|stmt| {
            let taken = mutable_let(stmt).is_some_and(|(name, _)| names.contains(&name));
            if taken {
                hoisted.push(stmt.clone());
            }
            !taken
        });
    }
    split_assignments(segs, &names, uniform);
    hoisted
}

/// The name and value of `let mut name = value;` (or `let mut name: T = value;`).
fn mutable_let(stmt: &Stmt) -> Option<(String, &Expr)> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let init = local.init.as_ref().filter(|init| init.diverge.is_none())?;
    let pat = match &local.pat {
        Pat::Type(t) => &*t.pat,
        pat => pat,
    };
    match pat {
        Pat::Ident(p) if p.mutability.is_some() && p.by_ref.is_none() && p.subpat.is_none() => {
            Some((p.ident.to_string(), &init.expr))
        }
        _ => None,
    }
}

/// The names each split `for` of `segs` binds (if all plain immutable names) and its iterator.
fn collect_loops(segs: &[Seg], out: &mut Vec<(Vec<String>, Expr)>) {
    for seg in segs {
        match seg {
            Seg::For {
                pat, iter, body, ..
            } => {
                let mut names = Vec::new();
                if simple_names(pat, &mut names) {
                    out.push((names, (**iter).clone()));
                }
                collect_loops(body, out);
            }
            Seg::While { body, .. } => collect_loops(body, out),
            _ => {}
        }
    }
}

/// The assignment `name = value;` or `name op= value;` to one of `candidates`, if `stmt` is one.
fn assignment<'s>(stmt: &'s Stmt, candidates: &BTreeSet<String>) -> Option<(String, &'s Expr)> {
    let Stmt::Expr(expr, _) = stmt else {
        return None;
    };
    let (left, right) = match expr {
        Expr::Assign(a) => (&*a.left, &*a.right),
        Expr::Binary(b) if is_assignment(&b.op) => (&*b.left, &*b.right),
        _ => return None,
    };
    let Expr::Path(path) = left else { return None };
    let name = path.path.get_ident()?.to_string();
    candidates.contains(&name).then_some((name, right))
}

/// Collects the top-level assignments to `candidates` in the code segments of `segs` (at any
/// depth of split loops), and every other use that may change one (`uses`). `left`: `segs`
/// are (in) the body of a split loop that a `break` or `continue` may leave: a thread that
/// leaves a trip skips the assignments after that point, which the others make, so a
/// variable assigned there is not the block's (it counts as changed).
fn scan(
    segs: &[Seg],
    candidates: &BTreeSet<String>,
    assignments: &mut Vec<(String, Expr)>,
    uses: &mut Uses,
    left: bool,
) {
    for seg in segs {
        let left = left || seg.exits().is_some_and(|exits| exits.left);
        match seg {
            Seg::Code(stmts) => {
                for stmt in stmts {
                    match assignment(stmt, candidates) {
                        Some((name, _)) if left => {
                            uses.changed.insert(name);
                            uses.visit_stmt(stmt);
                        }
                        Some((name, value)) => {
                            uses.visit_expr(value);
                            assignments.push((name, value.clone()));
                        }
                        None => uses.visit_stmt(stmt),
                    }
                }
            }
            Seg::While { cond, body, .. } => {
                uses.visit_expr(cond);
                scan(body, candidates, assignments, uses, left);
            }
            Seg::For { iter, body, .. } => {
                uses.visit_expr(iter);
                scan(body, candidates, assignments, uses, left);
            }
            Seg::Items(_) | Seg::Barrier(_) | Seg::Collective(_) | Seg::Uniform(_) => {}
            Seg::Leave(_) => {}
        }
    }
}

/// Finds the candidates some code may change other than by a top-level assignment.
struct Uses<'a> {
    candidates: &'a BTreeSet<String>,
    changed: BTreeSet<String>,
}

impl Uses<'_> {
    /// `expr` as a place: the variable it is part of (`x`, `x.f`, `x[i]`), if a candidate.
    fn place(&mut self, expr: &Expr) {
        let mut base = expr;
        loop {
            base = match base {
                Expr::Field(e) => &e.base,
                Expr::Index(e) => &e.expr,
                Expr::Paren(e) => &e.expr,
                Expr::Group(e) => &e.expr,
                _ => break,
            };
        }
        if let Expr::Path(path) = base {
            if let Some(name) = path.path.get_ident().map(ToString::to_string) {
                if self.candidates.contains(&name) {
                    self.changed.insert(name);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_expr_assign(&mut self, e: &'ast syn::ExprAssign) {
        self.place(&e.left);
        syn::visit::visit_expr_assign(self, e);
    }
    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        if is_assignment(&e.op) {
            self.place(&e.left);
        }
        syn::visit::visit_expr_binary(self, e);
    }
    fn visit_expr_reference(&mut self, e: &'ast syn::ExprReference) {
        self.place(&e.expr);
        syn::visit::visit_expr_reference(self, e);
    }
    fn visit_expr_method_call(&mut self, e: &'ast syn::ExprMethodCall) {
        self.place(&e.receiver);
        syn::visit::visit_expr_method_call(self, e);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let mut named = BTreeSet::new();
        idents_of(mac.tokens.clone(), &mut named);
        self.changed
            .extend(named.intersection(self.candidates).cloned());
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Moves the top-level assignments to `names` out of the code segments of `segs` into
/// [`Seg::Uniform`] segments between the code before and after them, and marks the split loops
/// whose condition or iterator is block-uniform.
fn split_assignments(segs: &mut Vec<Seg>, names: &BTreeSet<String>, uniform: &Uniform) {
    let mut out = Vec::new();
    for seg in std::mem::take(segs) {
        match seg {
            Seg::Code(stmts) => {
                let mut code = Vec::new();
                for stmt in stmts {
                    if assignment(&stmt, names).is_none() {
                        code.push(stmt);
                        continue;
                    }
                    if !code.is_empty() {
                        out.push(Seg::Code(std::mem::take(&mut code)));
                    }
                    match out.last_mut() {
                        Some(Seg::Uniform(assigned)) => assigned.push(stmt),
                        _ => out.push(Seg::Uniform(vec![stmt])),
                    }
                }
                if !code.is_empty() {
                    out.push(Seg::Code(code));
                }
            }
            Seg::While {
                cond,
                mut body,
                span,
                exits,
                ..
            } => {
                split_assignments(&mut body, names, uniform);
                let uniform_cond = uniform.expr(&cond);
                out.push(Seg::While {
                    cond,
                    body,
                    span,
                    uniform: uniform_cond,
                    exits,
                });
            }
            Seg::For {
                pat,
                iter,
                mut body,
                span,
                exits,
                ..
            } => {
                split_assignments(&mut body, names, uniform);
                let mut bound = Vec::new();
                let uniform_iter =
                    simple_names(&pat, &mut bound) && bound.iter().all(|n| names.contains(n));
                out.push(Seg::For {
                    pat,
                    iter,
                    body,
                    span,
                    uniform: uniform_iter,
                    exits,
                });
            }
            seg => out.push(seg),
        }
    }
    *segs = out;
}

/// The names of `pat` if it is made of plain immutable bindings only (`x`, `(a, b)`, `x: T`).
fn simple_names(pat: &Pat, names: &mut Vec<String>) -> bool {
    match pat {
        Pat::Ident(p) => {
            names.push(p.ident.to_string());
            p.mutability.is_none() && p.by_ref.is_none() && p.subpat.is_none()
        }
        Pat::Tuple(t) => t.elems.iter().all(|p| simple_names(p, names)),
        Pat::Type(t) => simple_names(&t.pat, names),
        _ => false,
    }
}

/// How many times each name is bound anywhere in `block`.
fn count_bindings(block: &Block, counts: &mut BTreeMap<String, usize>) {
    struct Count<'a>(&'a mut BTreeMap<String, usize>);
    impl<'ast> Visit<'ast> for Count<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            *self.0.entry(p.ident.to_string()).or_default() += 1;
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    Count(counts).visit_block(block);
}
