//! What a kernel's signature may be, and its parameters as the expansion sees them.

use crate::options::KernelOptions;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, GenericParam, Ident, ItemFn, Pat, PathArguments, ReturnType, Type,
};

/// How a kernel parameter crosses to the device.
#[derive(Clone, Copy)]
pub(crate) enum Class {
    Slice,
    Output,
    Scalar,
    /// `grid: Grid`: given by a cooperative launch, not by the caller.
    Grid,
}

#[derive(Clone)]
pub(crate) struct KernelParam {
    pub(crate) name: Ident,
    pub(crate) class: Class,
    /// Element type for slices and outputs, the value type for scalars.
    pub(crate) ty: Type,
    /// Axes: 1 for `&[T]` and `Out<T>`, 2 or 3 for the array views, 0 for scalars.
    pub(crate) dims: usize,
}

/// The one element type of `Out<T>`, `Array2<'_, T>` and the like (lifetimes aside).
fn element_type(arguments: &PathArguments) -> Option<Type> {
    let PathArguments::AngleBracketed(args) = arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    });
    match (types.next(), types.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

/// The views by name (`Out`, `Array2`, ...): class and axes.
fn view_kind(name: &Ident) -> Option<(Class, usize)> {
    Some(match name.to_string().as_str() {
        "Out" => (Class::Output, 1),
        "Out2" => (Class::Output, 2),
        "Out3" => (Class::Output, 3),
        "Array2" => (Class::Slice, 2),
        "Array3" => (Class::Slice, 3),
        _ => return None,
    })
}

/// The parameter's class, its element (or value) type and its axes (1 for `&[T]`, `Out<T>`).
fn classify(ty: &Type) -> syn::Result<(Class, Type, usize)> {
    let (class, element, dims) = classify_any(ty)?;
    if matches!(class, Class::Slice | Class::Output) && is_bool(&element) {
        return Err(syn::Error::new(
            ty.span(),
            "`bool` is not an element type of kernel memory: a `bool` must be 0 or 1, and GPU \
             memory may hold any byte. Use `u8` elements (`&[u8]`, `Out<u8>`, which has atomics: \
             `flags.atomic_exchange(i, 1)`), holding 0 or 1, and `x[i] != 0` to read one. A \
             single `bool` parameter by value works as it is",
        ));
    }
    Ok((class, element, dims))
}

/// Whether `ty` is `bool`.
pub(crate) fn is_bool(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("bool"))
}

fn classify_any(ty: &Type) -> syn::Result<(Class, Type, usize)> {
    match ty {
        Type::Reference(reference) => match (&*reference.elem, reference.mutability) {
            (Type::Slice(slice), None) => Ok((Class::Slice, (*slice.elem).clone(), 1)),
            (Type::Slice(_), Some(_)) => Err(syn::Error::new(
                ty.span(),
                "outputs are `ferrocuda_std::Out<T>`, not `&mut [T]`: all threads of a launch write the \
                 same buffer, which a `&mut` cannot be shared for",
            )),
            _ => Err(syn::Error::new(
                ty.span(),
                "a reference parameter must be a slice `&[T]`; pass single values by value",
            )),
        },
        Type::Ptr(_) => Err(syn::Error::new(
            ty.span(),
            "raw pointer parameters are not supported: take `&[T]` or `Out<T>` and use \
             `.as_ptr()` / `.as_mut_ptr()` inside an `unsafe` block",
        )),
        _ if crate::grid::is_grid(ty) => Ok((Class::Grid, ty.clone(), 0)),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last().expect("a path has a segment");
            let Some((class, dims)) = view_kind(&last.ident) else {
                return Ok((Class::Scalar, ty.clone(), 0));
            };
            element_type(&last.arguments)
                .map(|t| (class, t, dims))
                .ok_or_else(|| {
                    let name = &last.ident;
                    syn::Error::new(
                        ty.span(),
                        format!("`{name}` takes one element type, e.g. `{name}<f32>`"),
                    )
                })
        }
        _ => Ok((Class::Scalar, ty.clone(), 0)),
    }
}

/// Refuses what a PTX entry cannot be; type parameters only where `generic` (the kernel has
/// `instances(...)`).
pub(crate) fn check_signature(function: &ItemFn, generic: bool) -> syn::Result<()> {
    let sig = &function.sig;
    let fail = |span: Span, message: &str| Err(syn::Error::new(span, message));
    if let Some(token) = &sig.unsafety {
        return fail(
            token.span(),
            "a kernel cannot be `unsafe fn`: its launch is checked and safe; put raw-pointer code \
             in `unsafe` blocks inside it",
        );
    }
    if let Some(token) = &sig.asyncness {
        return fail(token.span(), "a kernel cannot be `async`");
    }
    if let Some(token) = &sig.constness {
        return fail(token.span(), "a kernel cannot be `const`");
    }
    if let Some(abi) = &sig.abi {
        return fail(
            abi.span(),
            "a kernel has no `extern` ABI of its own: `#[kernel]` gives it one",
        );
    }
    if let Some(variadic) = &sig.variadic {
        return fail(variadic.span(), "a kernel cannot be variadic");
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return fail(
            ty.span(),
            "a kernel returns nothing: write results into an `Out<T>` parameter",
        );
    }
    for param in &sig.generics.params {
        match param {
            GenericParam::Lifetime(lifetime) => {
                return fail(
                    lifetime.span(),
                    "a kernel cannot have lifetime parameters: its slices and outputs are \
                     borrowed for one launch only, so leave their lifetimes out (`x: &[f32]`, \
                     `out: Out<f32>`)",
                )
            }
            GenericParam::Const(constant) => {
                return fail(
                    constant.span(),
                    "a kernel cannot have const parameters; make the value a scalar parameter \
                     or a `const` of the kernel's module",
                )
            }
            GenericParam::Type(ty) if !generic => {
                return fail(
                    ty.span(),
                    "a kernel cannot be generic without `instances(...)`: a PTX entry has one \
                     concrete signature; `#[kernel(instances(f32, f64))]` builds one entry per \
                     type",
                )
            }
            GenericParam::Type(_) => {}
        }
    }
    if let (Some(clause), false) = (&sig.generics.where_clause, generic) {
        return fail(clause.span(), "a kernel cannot have a `where` clause");
    }
    Ok(())
}

/// The most parameters a kernel may take (a cooperative kernel's `Grid` not counted): the host's
/// `KernelArgs` tuples go up to this length. `ferrocuda_std::abi::MAX_KERNEL_PARAMS` is the same
/// number (`tests/many_params.rs` launches a kernel of this many).
pub(crate) const MAX_KERNEL_PARAMS: usize = 32;

pub(crate) fn parse_params(function: &ItemFn) -> syn::Result<Vec<KernelParam>> {
    let mut params = Vec::new();
    for input in &function.sig.inputs {
        let typed = match input {
            FnArg::Typed(typed) => typed,
            FnArg::Receiver(receiver) => {
                return Err(syn::Error::new(
                    receiver.span(),
                    "a kernel cannot take `self`",
                ))
            }
        };
        let name = match &*typed.pat {
            Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                ident.ident.clone()
            }
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "kernel parameters must be plain names (`x: &[f32]`)",
                ))
            }
        };
        reject_named_lifetimes(&typed.ty)?;
        let (class, ty, dims) = classify(&typed.ty)?;
        if let Class::Grid = class {
            crate::grid::check_last(params.len(), function.sig.inputs.len(), &ty)?;
        }
        params.push(KernelParam {
            name,
            class,
            ty,
            dims,
        });
    }
    let passed = params
        .iter()
        .filter(|p| !matches!(p.class, Class::Grid))
        .count();
    if passed > MAX_KERNEL_PARAMS {
        return Err(syn::Error::new(
            function.sig.inputs.span(),
            format!(
                "this kernel takes {passed} parameters, but `launch!` passes at most \
                 {MAX_KERNEL_PARAMS} (ferrocuda_std::abi::MAX_KERNEL_PARAMS): group related \
                 scalars into a `#[derive(Pod)]` struct passed as one parameter"
            ),
        ));
    }
    Ok(params)
}

/// Refuses a parameter type that names a lifetime (`&'static [u32]`, `Out<'a, f32>`): the launch
/// borrows its buffers only until the kernel has finished, so a kernel that could keep them longer
/// (in a static, say) would read freed memory. Elided lifetimes (`&[u32]`, `'_`) are fresh for each
/// call of the kernel body and cannot escape it.
fn reject_named_lifetimes(ty: &Type) -> syn::Result<()> {
    reject_lifetimes_in(quote!(#ty))
}

fn reject_lifetimes_in(tokens: TokenStream2) -> syn::Result<()> {
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        use proc_macro2::TokenTree;
        match token {
            TokenTree::Punct(quote) if quote.as_char() == '\'' => {
                if let Some(TokenTree::Ident(name)) = tokens.peek() {
                    if name != "_" {
                        let span = quote.span().join(name.span()).unwrap_or(name.span());
                        return Err(syn::Error::new(
                            span,
                            format!(
                                "a kernel parameter cannot name a lifetime (`'{name}`): the launch \
                                 lends its slices and outputs only until the kernel finishes; \
                                 leave the lifetime out (`&[T]`, `Out<T>`)"
                            ),
                        ));
                    }
                }
            }
            TokenTree::Group(group) => {
                // Lifetimes inside brackets (`&[&'static u32]`, `Out<Wrapper<'a>>`).
                reject_lifetimes_in(group.stream())?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn same_len_indices(
    options: &KernelOptions,
    params: &[KernelParam],
) -> syn::Result<Vec<Vec<usize>>> {
    options
        .same_len
        .iter()
        .map(|group| {
            group
                .iter()
                .map(|name| {
                    let index = params.iter().position(|p| p.name == *name).ok_or_else(|| {
                        syn::Error::new(name.span(), format!("no kernel parameter named `{name}`"))
                    })?;
                    match params[index].class {
                        _ if params[index].dims > 1 => Err(syn::Error::new(
                            name.span(),
                            format!(
                                "`{name}` is a {}D array: `same_len` takes `&[T]` and `Out<T>` \
                                 (a view's shape is checked against its memory at every launch)",
                                params[index].dims
                            ),
                        )),
                        Class::Slice | Class::Output => Ok(index),
                        Class::Scalar | Class::Grid => Err(syn::Error::new(
                            name.span(),
                            format!("`{name}` is not a slice or an output: it has no length"),
                        )),
                    }
                })
                .collect()
        })
        .collect()
}

/// What every launch checks about lengths, as parameter indices: the `same_len` groups, and each
/// `len(x = a * b)` (the slice or output, its factors); the `index32` views; the
/// `transposed(out, a)` pairs; and the `block(x, y, z)` shape.
pub(crate) struct LengthRules {
    pub(crate) same_len: Vec<Vec<usize>>,
    pub(crate) products: Vec<(usize, Vec<usize>)>,
    /// `index32(a, out)`: the 2D and 3D views indexed in 32 bits.
    pub(crate) index32: Vec<usize>,
    /// `transposed(out, a)`: pairs of 2D views, `out`'s shape `a`'s reversed.
    pub(crate) transposed: Vec<(usize, usize)>,
    /// `block(x, y, z)`, missing sizes 1.
    pub(crate) block: Option<[syn::Expr; 3]>,
}

/// The `same_len` groups, `len` products and block shape of `options`, checked against `params`.
pub(crate) fn length_rules(
    options: &KernelOptions,
    params: &[KernelParam],
) -> syn::Result<LengthRules> {
    let position = |name: &Ident| {
        params.iter().position(|p| p.name == *name).ok_or_else(|| {
            syn::Error::new(name.span(), format!("no kernel parameter named `{name}`"))
        })
    };
    let products = options
        .len_products
        .iter()
        .map(|(name, factors)| {
            let index = position(name)?;
            let param = &params[index];
            if !matches!(param.class, Class::Slice | Class::Output) || param.dims != 1 {
                return Err(syn::Error::new(
                    name.span(),
                    format!("`len` takes a `&[T]` or `Out<T>` parameter, and `{name}` is not one"),
                ));
            }
            let factors = factors
                .iter()
                .map(|factor| {
                    let index = position(factor)?;
                    let ty = &params[index].ty;
                    match params[index].class {
                        Class::Scalar if quote!(#ty).to_string() == "u32" => Ok(index),
                        _ => Err(syn::Error::new(
                            factor.span(),
                            format!("`{factor}` is not a `u32` parameter: `len` multiplies `u32`s"),
                        )),
                    }
                })
                .collect::<syn::Result<Vec<usize>>>()?;
            Ok((index, factors))
        })
        .collect::<syn::Result<_>>()?;
    let index32 = options
        .index32
        .iter()
        .map(|name| {
            let index = position(name)?;
            let param = &params[index];
            match param.class {
                Class::Slice | Class::Output if param.dims > 1 => Ok(index),
                _ => Err(syn::Error::new(
                    name.span(),
                    format!(
                        "`index32` takes 2D and 3D views (`Array2<T>`, `Out2<T>`, ...), and \
                         `{name}` is not one (for `&[T]` and `Out<T>`: `len(x = a * b)`)"
                    ),
                )),
            }
        })
        .collect::<syn::Result<_>>()?;
    let view_2d = |name: &Ident| {
        let index = position(name)?;
        let param = &params[index];
        match param.class {
            Class::Slice | Class::Output if param.dims == 2 => Ok(index),
            _ => Err(syn::Error::new(
                name.span(),
                format!(
                    "`transposed` takes 2D views (`Array2<T>`, `Out2<T>`), and `{name}` is not \
                     one"
                ),
            )),
        }
    };
    let transposed = options
        .transposed
        .iter()
        .map(|(out, a)| Ok((view_2d(out)?, view_2d(a)?)))
        .collect::<syn::Result<_>>()?;
    let block = options.block.as_ref().map(|dims| {
        let one: syn::Expr = syn::parse_quote!(1);
        let dim = |i: usize| dims.get(i).cloned().unwrap_or_else(|| one.clone());
        [dim(0), dim(1), dim(2)]
    });
    Ok(LengthRules {
        same_len: same_len_indices(options, params)?,
        products,
        index32,
        transposed,
        block,
    })
}
