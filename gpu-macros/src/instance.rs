//! The data `instances(...)` gives: each instance's types ([`Instance`], parsed from the options)
//! and the generic parameter → type map an instance applies ([`Substitution`]). It sits at the
//! bottom, below the options, the signature, shared memory and the expansion, which all read it.

use syn::parse::{Parse, ParseStream};
use syn::visit_mut::{self, VisitMut};
use syn::{Ident, Token, Type};

/// One entry of `instances(...)`: the types of the kernel's type parameters (one type, or a
/// tuple with one type per parameter), optionally `as entry_name`.
pub(crate) struct Instance {
    pub(crate) types: Type,
    pub(crate) rename: Option<Ident>,
}

impl Parse for Instance {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let types = input.parse()?;
        let rename = if input.peek(Token![as]) {
            input.parse::<Token![as]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Instance { types, rename })
    }
}

/// Generic parameter → concrete type, applied to what must be concrete in an instance.
#[derive(Default)]
pub(crate) struct Substitution(pub(crate) Vec<(Ident, Type)>);

impl Substitution {
    /// `node` with each generic parameter replaced by its type.
    pub(crate) fn apply<T: Clone>(&self, node: &T, visit: fn(&mut Self, &mut T)) -> T {
        let mut node = node.clone();
        let mut this = Substitution(self.0.clone());
        visit(&mut this, &mut node);
        node
    }
}

impl VisitMut for Substitution {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(path) = ty {
            if path.qself.is_none() {
                if let Some(ident) = path.path.get_ident() {
                    if let Some((_, concrete)) = self.0.iter().find(|(param, _)| param == ident) {
                        *ty = concrete.clone();
                        return;
                    }
                }
            }
        }
        visit_mut::visit_type_mut(self, ty);
    }
}
