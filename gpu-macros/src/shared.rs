//! The `shared!` rewrite: each `shared!([T; N])` of a kernel body becomes a `.shared`
//! declaration of its own on the GPU and an array of the CPU executor's arena on the host.

use crate::instance::Substitution;
use proc_macro2::Span;
use quote::{format_ident, quote_spanned};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Ident, Pat};

/// Which compilation a kernel body is rewritten for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Ptx,
    Host,
}

/// Replaces each `shared!([T; N])` in a kernel body by code that gives the block's array: on
/// nvptx a `.shared` declaration of its own, named after the kernel, and its address; on the host
/// the array of the CPU executor's arena, with the declaration's name and place for reports.
/// In an instance of a generic kernel, `substitution` makes the arrays' sizes concrete (the body
/// stays generic; a `.shared` declaration cannot be).
pub(crate) fn rewrite_shared(
    block: &Block,
    kernel: &str,
    target: Target,
    substitution: &Substitution,
) -> syn::Result<Block> {
    let mut bound = BTreeMap::new();
    count_bindings(block, &mut bound);
    let mut rewriter = SharedRewriter {
        kernel,
        target,
        substitution,
        count: 0,
        consts: Vec::new(),
        bound_once: bound
            .into_iter()
            .filter_map(|(name, n)| (n == 1).then_some(name))
            .collect(),
        handles: Vec::new(),
        error: None,
    };
    let mut block = block.clone();
    rewriter.visit_block_mut(&mut block);
    match rewriter.error {
        Some(error) => Err(error),
        None => Ok(block),
    }
}

struct SharedRewriter<'a> {
    kernel: &'a str,
    target: Target,
    substitution: &'a Substitution,
    count: usize,
    /// The `const` items of each block enclosing the visit, outermost first: what a `shared!`
    /// size may name besides the module's items.
    consts: Vec<Vec<syn::ItemConst>>,
    /// Names bound once in the whole body (any pattern, closures' parameters included): a
    /// handle's name among them means the handle wherever its `let` is in scope.
    bound_once: BTreeSet<String>,
    /// Host: the names of each enclosing block's `let NAME = shared!(..)` and
    /// `let NAME = dynamic_shared()`, outermost first (names bound once only).
    handles: Vec<Vec<String>>,
    error: Option<syn::Error>,
}

/// How many times each name is bound anywhere in `block` (items' bodies left out).
pub(crate) fn count_bindings(block: &Block, counts: &mut BTreeMap<String, usize>) {
    struct Count<'a>(&'a mut BTreeMap<String, usize>);
    impl<'ast> syn::visit::Visit<'ast> for Count<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            *self.0.entry(p.ident.to_string()).or_default() += 1;
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    syn::visit::Visit::visit_block(&mut Count(counts), block);
}

/// The block scope parameter of a kernel body: mixed-site, so kernel code cannot name it.
pub(crate) fn scope_ident() -> Ident {
    Ident::new("__ferrocuda_scope", Span::mixed_site())
}

/// Whether `call` is `dynamic_shared()` / `dynamic_shared::<T>()` (any path ending so) with no
/// arguments: the kernel body's request for the block's dynamic shared memory.
fn is_dynamic_shared_call(call: &syn::ExprCall) -> bool {
    match &*call.func {
        Expr::Path(path) => {
            path.qself.is_none()
                && call.args.is_empty()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|last| last.ident == "dynamic_shared")
        }
        _ => false,
    }
}

fn is_shared_macro(path: &syn::Path) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    matches!(
        segments
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["shared"] | ["ferrocuda_std", "shared"]
    )
}

impl SharedRewriter<'_> {
    /// The `const` items in scope here, innermost first where two share a name.
    fn consts_in_scope(&self) -> Vec<&syn::ItemConst> {
        let mut in_scope: Vec<&syn::ItemConst> = Vec::new();
        for item in self.consts.iter().rev().flatten() {
            if !in_scope.iter().any(|c| c.ident == item.ident) {
                in_scope.push(item);
            }
        }
        in_scope
    }

    fn rewrite(&mut self, mac: &syn::Macro, name: &str) -> Option<Expr> {
        let array: syn::TypeArray = match syn::parse2(mac.tokens.clone()) {
            Ok(array) => array,
            Err(_) => {
                self.error.get_or_insert(syn::Error::new(
                    mac.span(),
                    "`shared!` takes an array type: `shared!([f32; 256])`",
                ));
                return None;
            }
        };
        let (elem, len) = (&array.elem, &array.len);
        let scope = scope_ident();
        let index = self.count;
        self.count += 1;
        let span = mac.span();
        // Invoking the user's own path marks their `use ferrocuda_std::shared` as used (and needs it).
        let path = &mac.path;
        let mark_used = quote_spanned!(span=> #path!(@rewritten_by_kernel););
        // The size is computed in a module of its own (`global_asm!` is an item, and a macro in
        // statement position cannot expand to one), which sees the kernel's module through
        // `use super::*` and the kernel body's `const` items through copies: `N` may name
        // either. The host computes it the same way, so a size that the PTX build cannot
        // compute fails the host build too, with the same error.
        let module = format_ident!("__ferrocuda_shared_{}", index);
        let substitution = self.substitution;
        let consts: Vec<syn::ItemConst> = self
            .consts_in_scope()
            .into_iter()
            .map(|c| substitution.apply(c, Substitution::visit_item_const_mut))
            .collect();
        // What a `.shared` declaration's size is computed from: the instance's types.
        let concrete_elem = substitution.apply(&**elem, Substitution::visit_type_mut);
        let concrete_len = substitution.apply(len, Substitution::visit_expr_mut);
        let size = quote_spanned!(span=> ::core::mem::size_of::<[#concrete_elem; #concrete_len]>());
        let size_item = match self.target {
            Target::Ptx => {
                let symbol = format!("__ferrocuda_shared_{}_{index}", self.kernel);
                let declare = format!(".shared .align 16 .b8 {symbol}[{{size}}];");
                quote_spanned!(span=> ::core::arch::global_asm!(#declare, size = const #size);)
            }
            Target::Host => quote_spanned!(span=> const _: usize = #size;),
        };
        let size_module = quote_spanned! {span=>
            #[allow(non_snake_case, non_upper_case_globals, unused_imports, dead_code)]
            mod #module {
                use super::*;
                #(#consts)*
                #size_item
            }
        };
        let tokens = match self.target {
            Target::Ptx => {
                let symbol = format!("__ferrocuda_shared_{}_{index}", self.kernel);
                let address = format!("cvta.shared.u64 {{0}}, {symbol};");
                let window = format!("mov.u32 {{0}}, {symbol};");
                // Mixed-site: a kernel's own `address` stays visible in `N`.
                let address_var = Ident::new("address", Span::mixed_site());
                let window_var = Ident::new("window", Span::mixed_site());
                quote_spanned! {span=> {
                    #mark_used
                    const _: () = ::ferrocuda_std::__private::assert_pod::<#concrete_elem>();
                    const _: () = ::core::assert!(
                        ::core::mem::align_of::<#concrete_elem>() <= 16,
                        "shared arrays are 16-byte aligned"
                    );
                    #size_module
                    let (#address_var, #window_var): (u64, u32);
                    // SAFETY: reads the generic and the shared-window address of this array's
                    // `.shared` declaration.
                    unsafe {
                        ::core::arch::asm!(#address, out(reg64) #address_var, options(pure, nomem, nostack));
                        ::core::arch::asm!(#window, out(reg32) #window_var, options(pure, nomem, nostack));
                    }
                    // SAFETY: the declaration above holds `len` elements, 16-byte aligned, at
                    // both addresses, and the scope is the one the entry lent to this run of the
                    // body.
                    unsafe {
                        ::ferrocuda_std::Shared::<#elem>::from_raw_parts_in_window(
                            #scope, #address_var as *mut #elem, #window_var, #len,
                        )
                    }
                }}
            }
            Target::Host => quote_spanned! {span=> {
                #mark_used
                #size_module
                static __FERROCUDA_SITE: ::ferrocuda_std::cpu::SharedSite = ::ferrocuda_std::cpu::SharedSite {
                    index: #index,
                    name: #name,
                    file: ::core::file!(),
                    line: ::core::line!(),
                };
                // SAFETY: the body runs inside the block `run_block` runs, and the scope is the
                // one the CPU entry lent to it.
                // `__FERROCUDA_SHARED_CHECKS`: a constant of each function `#[kernel]` puts the body in
                // (`false` in the split path's copy for unchecked launches).
                unsafe { ::ferrocuda_std::__private::shared_array::<#elem>(#scope, &__FERROCUDA_SITE, #len) }
                    .__checks_if(__FERROCUDA_SHARED_CHECKS)
            }},
        };
        Some(Expr::Verbatim(tokens))
    }
}

/// `Shared` methods without checked-mode checks, whose calls stay as written (`len()` keeps
/// a `let` of it block-uniform for the split path).
const UNCHECKED_METHODS: [&str; 4] = ["len", "is_empty", "clone", "__checks_if"];

impl SharedRewriter<'_> {
    /// Whether `expr` names a handle of a `let` in scope (host only).
    fn is_handle(&self, expr: &Expr) -> bool {
        let Expr::Path(path) = expr else { return false };
        path.qself.is_none()
            && path.path.get_ident().is_some_and(|name| {
                let name = name.to_string();
                self.handles.iter().flatten().any(|h| *h == name)
            })
    }
}

impl VisitMut for SharedRewriter<'_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        // Items are visible in their whole block, before and after their declaration.
        let consts = block
            .stmts
            .iter()
            .filter_map(|stmt| match stmt {
                syn::Stmt::Item(syn::Item::Const(item)) => Some(item.clone()),
                _ => None,
            })
            .collect();
        self.consts.push(consts);
        self.handles.push(Vec::new());
        visit_mut::visit_block_mut(self, block);
        self.handles.pop();
        self.consts.pop();
    }

    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        let name = match &local.pat {
            Pat::Ident(p) => Some(p.ident.to_string()),
            Pat::Type(typed) => match &*typed.pat {
                Pat::Ident(p) => Some(p.ident.to_string()),
                _ => None,
            },
            _ => None,
        };
        if let (Some(name), Some(init)) = (name, local.init.as_mut()) {
            let handle = match &*init.expr {
                Expr::Macro(m) if is_shared_macro(&m.mac.path) => {
                    if let Some(expr) = self.rewrite(&m.mac.clone(), &name) {
                        *init.expr = expr;
                    }
                    true
                }
                Expr::Call(call) if is_dynamic_shared_call(call) => {
                    self.visit_expr_mut(&mut init.expr);
                    true
                }
                _ => false,
            };
            if handle {
                // Its uses from here to the end of the block (the initialiser cannot name it).
                if self.target == Target::Host && self.bound_once.contains(&name) {
                    if let Some(names) = self.handles.last_mut() {
                        names.push(name);
                    }
                }
                return;
            }
        }
        visit_mut::visit_local_mut(self, local);
    }

    fn visit_item_mut(&mut self, item: &mut syn::Item) {
        // A nested item cannot name the body's handles: its own bindings of their names are not
        // handles.
        let handles = std::mem::take(&mut self.handles);
        visit_mut::visit_item_mut(self, item);
        self.handles = handles;
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Call(call) = expr {
            if is_dynamic_shared_call(call) {
                // The block's scope is its argument: the handle borrows the block.
                let scope = scope_ident();
                call.args.push(syn::parse_quote!(#scope));
                if self.target == Target::Host {
                    // As `shared!` handles: no checked-mode calls in the unchecked copies.
                    let call = call.clone();
                    *expr = syn::parse_quote!(#call.__checks_if(__FERROCUDA_SHARED_CHECKS));
                }
                return;
            }
        }
        if let Expr::Macro(m) = expr {
            if is_shared_macro(&m.mac.path) {
                if let Some(new) = self.rewrite(&m.mac.clone(), "") {
                    *expr = new;
                }
                return;
            }
        }
        visit_mut::visit_expr_mut(self, expr);
        if let Expr::MethodCall(call) = expr {
            if self.is_handle(&call.receiver)
                && !UNCHECKED_METHODS.contains(&&*call.method.to_string())
            {
                // The handle again with this function's checked-mode constant, at each access:
                // where the handle came through memory (a closure's capture seen from a function
                // it was passed to, a value carried across a barrier by the split path), its
                // `checked` field is no constant, and each access kept its test and call.
                let handle = &call.receiver;
                *call.receiver = syn::parse_quote!(
                    ::ferrocuda_std::Shared::__checks_if(#handle, __FERROCUDA_SHARED_CHECKS)
                );
            }
        }
    }
}
