//! Float method calls in a kernel body that name one of std's math methods (`x.exp()`,
//! `x.sqrt()`, `x.powf(y)`, …) are routed to ferrocuda-std's device math on both targets.
//!
//! On the host, Rust prefers std's inherent `f32::exp` to any trait method, so without this the
//! CPU executor would run std's `exp` and the GPU ferrocuda-std's: results that differ in the
//! last bits. The receiver is wrapped as `ferrocuda_std::__private::DeviceCall(x)`, whose own
//! methods for `f32` and `f64` (and references to them) are `math::DeviceMath`'s. For any other
//! receiver the wrapper has no such method and derefs to the receiver, so a user type's own
//! `exp` (or a generic `T: DeviceMath`'s) is found as before.

use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Block, ExprMethodCall};

/// std's float methods that `ferrocuda_std::math::DeviceMath` implements under the same name
/// (`mul_add` is not among them: std's is correctly rounded, as `Number::mul_add` is).
const ROUTED: &[&str] = &[
    "exp", "exp2", "ln", "log2", "sqrt", "sin", "cos", "sin_cos", "powf",
];

struct Router;

impl VisitMut for Router {
    fn visit_expr_method_call_mut(&mut self, call: &mut ExprMethodCall) {
        visit_mut::visit_expr_method_call_mut(self, call);
        if call.turbofish.is_none() && ROUTED.iter().any(|m| call.method == m) {
            let receiver = &call.receiver;
            *call.receiver = parse_quote!(::ferrocuda_std::__private::DeviceCall(#receiver));
        }
    }
}

/// `block` with its float math method calls routed to ferrocuda-std (see the module's doc).
pub(crate) fn route_math_methods(block: &Block) -> Block {
    let mut block = block.clone();
    Router.visit_block_mut(&mut block);
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn math_methods_are_routed_and_others_are_not() {
        let block: Block = parse_quote!({
            let a = x.exp().sqrt();
            let b = y.powf(a).len();
            let c = z.sin_cos();
        });
        let routed = route_math_methods(&block);
        let text = quote!(#routed).to_string().replace(' ', "");
        assert!(
            text.contains("DeviceCall(::ferrocuda_std::__private::DeviceCall(x).exp()).sqrt()"),
            "{text}"
        );
        assert!(text.contains("DeviceCall(y).powf(a).len()"), "{text}");
        assert!(text.contains("DeviceCall(z).sin_cos()"), "{text}");
        assert!(!text.contains("DeviceCall(a)"), "{text}");
    }
}
