//! What every test file uses: `#[kernel]` expanded from strings, to its text or its error.

use crate::kernel::expand;
use crate::options::KernelOptions;
use syn::ItemFn;

pub(super) fn expand_str(attr: &str, item: &str) -> syn::Result<String> {
    let options: KernelOptions = syn::parse_str(attr)?;
    let function: ItemFn = syn::parse_str(item)?;
    expand(options, function).map(|tokens| tokens.to_string())
}

pub(super) fn error_of(attr: &str, item: &str) -> String {
    match expand_str(attr, item) {
        Ok(_) => panic!("expected an error for {item}"),
        Err(error) => error.to_string(),
    }
}
