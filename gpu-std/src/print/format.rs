//! What [`println!`](crate::println) compiles a call into: the C format string CUDA's `printf`
//! takes ([`CFormat`], built at compile time from the Rust format string and the arguments'
//! [`Kind`]s), and the arguments packed as CUDA C packs them ([`PrintArg`], [`PrintArgs`]) or, for
//! the CPU executor, as values the host renders ([`Value`]). Below both the language's
//! `print` (which calls the backend) and the backends that print.

#[cfg(not(target_arch = "nvptx64"))]
use std::vec::Vec;

/// Most bytes of a compiled C format string, its NUL included: a longer one is a compile error.
pub const MAX_FORMAT_BYTES: usize = 256;

/// What C conversion an argument takes, and how its value is packed.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `i8`, `i16`, `i32` (promoted to `int`, as C promotes them): `%d`.
    I32,
    /// `u8`, `u16`, `u32`: `%u`.
    U32,
    /// `i64`, `isize`: `%lld`.
    I64,
    /// `u64`, `usize`: `%llu`.
    U64,
    /// `f32` (promoted to `double`), `f64`: `%f`.
    F64,
    /// A NUL-terminated string's address: `%s`.
    Str,
}

/// A value as the host renders it.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Signed integers.
    Signed(i64),
    /// Unsigned integers.
    Unsigned(u64),
    /// Floats, widened.
    Float(f64),
    /// A string, without its NUL.
    Str(&'static str),
}

mod sealed {
    pub trait Sealed {}
}

/// A type [`println!`](crate::println) can print: integers, `f32`, `f64`, `bool`, `&CStr`
/// and, written in place in the call, string and char literals.
///
/// Sealed: the packing must match the C conversion exactly, or the GPU's `vprintf` would read
/// the wrong bytes (or, for `%s`, a pointer that is not one).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be printed from a kernel",
    note = "`ferrocuda_std::println!` prints integers, f32, f64, bool, &CStr, and string or \
            char literals written in the call; a `&str` that is not a literal has no \
            NUL terminator for the GPU's printf"
)]
pub trait PrintArg: Copy + sealed::Sealed {
    /// The conversion.
    #[doc(hidden)]
    const KIND: Kind;
    /// The value as `vprintf` reads it.
    #[doc(hidden)]
    type Slot: Copy;
    /// The packed value.
    #[doc(hidden)]
    fn slot(self) -> Self::Slot;
    /// The value for the host's rendering.
    #[doc(hidden)]
    #[cfg(not(target_arch = "nvptx64"))]
    fn value(self) -> Value;
}

/// Each row: the types that print alike => their `vprintf` slot, their host rendering.
macro_rules! print_arg {
    ($($($ty:ty),+ => $kind:ident as $slot:ty, $value:ident as $host:ty;)*) => {$($(
        impl sealed::Sealed for $ty {}
        impl PrintArg for $ty {
            const KIND: Kind = Kind::$kind;
            type Slot = $slot;
            #[inline(always)]
            fn slot(self) -> $slot {
                self as $slot
            }
            #[cfg(not(target_arch = "nvptx64"))]
            fn value(self) -> Value {
                Value::$value(self as $host)
            }
        }
    )+)*};
}

print_arg! {
    i8, i16, i32 => I32 as i32, Signed as i64;
    u8, u16, u32 => U32 as u32, Unsigned as u64;
    i64, isize => I64 as i64, Signed as i64;
    u64, usize => U64 as u64, Unsigned as u64;
    f32, f64 => F64 as f64, Float as f64;
}

/// A string literal with a NUL at its end, made by [`println!`](crate::println) for a literal
/// argument (`concat!(literal, "\0")`).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct LiteralStr(&'static str);

impl LiteralStr {
    /// # Panics
    /// If `text` does not end with a NUL (`println!` gives it `concat!(literal, "\0")`).
    pub const fn new(text: &'static str) -> Self {
        let bytes = text.as_bytes();
        assert!(
            !bytes.is_empty() && bytes[bytes.len() - 1] == 0,
            "a printed string literal must end with a NUL"
        );
        LiteralStr(text)
    }
}

impl sealed::Sealed for LiteralStr {}
impl PrintArg for LiteralStr {
    const KIND: Kind = Kind::Str;
    type Slot = *const u8;
    #[inline(always)]
    fn slot(self) -> *const u8 {
        self.0.as_ptr()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn value(self) -> Value {
        Value::Str(&self.0[..self.0.len() - 1])
    }
}

impl sealed::Sealed for &'static core::ffi::CStr {}
impl PrintArg for &'static core::ffi::CStr {
    const KIND: Kind = Kind::Str;
    type Slot = *const u8;
    #[inline(always)]
    fn slot(self) -> *const u8 {
        self.as_ptr().cast()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn value(self) -> Value {
        // A kernel's C string is printed as far as it is UTF-8, as a terminal would show it.
        Value::Str(match self.to_str() {
            Ok(text) => text,
            Err(error) => {
                let valid = &self.to_bytes()[..error.valid_up_to()];
                core::str::from_utf8(valid).unwrap_or_default()
            }
        })
    }
}

impl sealed::Sealed for bool {}
impl PrintArg for bool {
    const KIND: Kind = Kind::Str;
    type Slot = *const u8;
    #[inline(always)]
    fn slot(self) -> *const u8 {
        if self { c"true" } else { c"false" }.as_ptr().cast()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn value(self) -> Value {
        Value::Str(if self { "true" } else { "false" })
    }
}

/// A literal argument of [`println!`](crate::println): string and char literals are printed
/// from a NUL-terminated copy (`concat!(literal, "\0")`), the others as their value.
#[doc(hidden)]
pub trait Literal {
    /// What is printed.
    type Arg: PrintArg;
    /// The argument, given the literal and its text with a NUL after it.
    fn arg(self, with_nul: &'static str) -> Self::Arg;
}

macro_rules! literal_as_text {
    ($($ty:ty)*) => {$(
        impl Literal for $ty {
            type Arg = LiteralStr;
            #[inline(always)]
            fn arg(self, with_nul: &'static str) -> LiteralStr {
                LiteralStr::new(with_nul)
            }
        }
    )*};
}

literal_as_text!(&'static str char);

macro_rules! literal_as_value {
    ($($ty:ty)*) => {$(
        impl Literal for $ty {
            type Arg = $ty;
            #[inline(always)]
            fn arg(self, _: &'static str) -> $ty {
                self
            }
        }
    )*};
}

literal_as_value!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64 bool);

/// The arguments of one [`println!`](crate::println): a tuple of [`PrintArg`]s.
#[doc(hidden)]
pub trait PrintArgs: Copy {
    /// Each argument's conversion, in order.
    const KINDS: &'static [Kind];
    /// The `vprintf` argument buffer: a `#[repr(C)]` struct of the slots, which lays them out
    /// as CUDA C does (each aligned to its size).
    type Packed: Copy;
    /// The buffer.
    fn pack(self) -> Self::Packed;
    /// The values for the host's rendering.
    #[cfg(not(target_arch = "nvptx64"))]
    fn values(self) -> Vec<Value>;
}

impl PrintArgs for () {
    const KINDS: &'static [Kind] = &[];
    type Packed = u64;
    #[inline(always)]
    fn pack(self) -> u64 {
        0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn values(self) -> Vec<Value> {
        Vec::new()
    }
}

macro_rules! print_args {
    ($($pack:ident($($t:ident $i:tt),*);)*) => {$(
        /// A `vprintf` argument buffer.
        #[doc(hidden)]
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct $pack<$($t),*>($($t),*);

        impl<$($t: PrintArg),*> PrintArgs for ($($t,)*) {
            const KINDS: &'static [Kind] = &[$($t::KIND),*];
            type Packed = $pack<$($t::Slot),*>;
            #[inline(always)]
            fn pack(self) -> Self::Packed {
                $pack($(self.$i.slot()),*)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            fn values(self) -> Vec<Value> {
                std::vec![$(self.$i.value()),*]
            }
        }
    )*};
}

print_args! {
    Pack1(A 0);
    Pack2(A 0, B 1);
    Pack3(A 0, B 1, C 2);
    Pack4(A 0, B 1, C 2, D 3);
    Pack5(A 0, B 1, C 2, D 3, E 4);
    Pack6(A 0, B 1, C 2, D 3, E 4, F 5);
    Pack7(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
    Pack8(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
    Pack9(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
    Pack10(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
    Pack11(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
    Pack12(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
}

/// The Rust format string of one [`println!`](crate::println), as a type (the macro makes one
/// per call), so that its C format string is a constant of [`print`]'s instance.
#[doc(hidden)]
pub trait Format {
    /// The format string, its `\n` included.
    const TEXT: &'static str;
}

/// A C format string, NUL-terminated, in a fixed buffer (a constant's length cannot depend on
/// a generic parameter on stable Rust).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct CFormat {
    bytes: [u8; MAX_FORMAT_BYTES],
    /// Bytes before the NUL.
    len: usize,
}

impl CFormat {
    /// The C format string without its NUL.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.split_at(self.len).0
    }

    /// The C format string's address, NUL-terminated.
    pub fn as_ptr(&self) -> *const u8 {
        self.bytes.as_ptr()
    }

    const fn push(mut self, text: &[u8]) -> Self {
        let mut i = 0;
        while i < text.len() {
            // One byte is kept for the NUL.
            assert!(
                self.len + 1 < MAX_FORMAT_BYTES,
                "println! format string too long for the GPU's printf (at most 255 bytes in C)"
            );
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Turns a Rust format string (`{}`, `{:.N}` for floats, `{:x}` for integers, `{{`, `}}`)
    /// into the C one for arguments of `kinds`.
    ///
    /// # Panics
    /// At compile time, with the reason: a placeholder this does not know, a count of
    /// placeholders different from the arguments', a precision on a non-float, hex on a
    /// non-integer, a NUL in the text, or more than [`MAX_FORMAT_BYTES`].
    pub const fn compile(text: &str, kinds: &[Kind]) -> CFormat {
        let text = text.as_bytes();
        let mut out = CFormat {
            bytes: [0; MAX_FORMAT_BYTES],
            len: 0,
        };
        let (mut i, mut arg) = (0, 0);
        while i < text.len() {
            let c = text[i];
            assert!(c != 0, "println! format string has a NUL byte");
            if c == b'%' {
                out = out.push(b"%%");
            } else if c == b'{' && i + 1 < text.len() && text[i + 1] == b'{' {
                out = out.push(b"{");
                i += 1;
            } else if c == b'}' {
                assert!(
                    i + 1 < text.len() && text[i + 1] == b'}',
                    "println! format string has a lone `}}` (write `}}}}` for one)"
                );
                out = out.push(b"}");
                i += 1;
            } else if c == b'{' {
                assert!(
                    arg < kinds.len(),
                    "println! format string has more `{{}}` than arguments"
                );
                let (spec, end) = Spec::parse(text, i + 1);
                out = spec.write(out, kinds[arg]);
                arg += 1;
                i = end;
            } else {
                out = out.push(&[c]);
            }
            i += 1;
        }
        assert!(
            arg == kinds.len(),
            "println! has more arguments than `{{}}` in its format string"
        );
        out
    }
}

/// One placeholder's options.
struct Spec {
    precision: Option<u8>,
    hex: bool,
}

impl Spec {
    /// Parses the placeholder starting after `{` at `start`; returns it and where its `}` is.
    const fn parse(text: &[u8], start: usize) -> (Spec, usize) {
        let mut spec = Spec {
            precision: None,
            hex: false,
        };
        let mut i = start;
        if i < text.len() && text[i] == b':' {
            i += 1;
            if i < text.len() && text[i] == b'x' {
                spec.hex = true;
                i += 1;
            } else if i < text.len() && text[i] == b'.' {
                i += 1;
                let mut digits = 0u32;
                let mut precision = 0u32;
                while i < text.len() && text[i].is_ascii_digit() {
                    precision = precision * 10 + (text[i] - b'0') as u32;
                    digits += 1;
                    i += 1;
                }
                assert!(
                    digits > 0 && precision <= 30,
                    "println! precision must be `{{:.N}}` with N from 0 to 30"
                );
                spec.precision = Some(precision as u8);
            }
        }
        assert!(
            i < text.len() && text[i] == b'}',
            "println! placeholders are `{{}}`, `{{:.N}}` (floats) and `{{:x}}` (integers)"
        );
        (spec, i)
    }

    const fn write(&self, out: CFormat, kind: Kind) -> CFormat {
        if let Some(precision) = self.precision {
            assert!(
                matches!(kind, Kind::F64),
                "println! `{{:.N}}` is for floats only"
            );
            let out = out.push(b"%.");
            let out = if precision >= 10 {
                out.push(&[b'0' + precision / 10])
            } else {
                out
            };
            return out.push(&[b'0' + precision % 10, b'f']);
        }
        if self.hex {
            return out.push(match kind {
                Kind::I32 | Kind::U32 => b"%x",
                Kind::I64 | Kind::U64 => b"%llx",
                _ => panic!("println! `{{:x}}` is for integers only"),
            });
        }
        out.push(match kind {
            Kind::I32 => b"%d",
            Kind::U32 => b"%u",
            Kind::I64 => b"%lld",
            Kind::U64 => b"%llu",
            Kind::F64 => b"%f",
            Kind::Str => b"%s",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(text: &str, kinds: &[Kind]) -> std::string::String {
        let format = CFormat::compile(text, kinds);
        std::string::String::from_utf8(format.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn placeholders_take_the_conversion_of_their_argument_s_type() {
        use Kind::*;
        assert_eq!(
            compiled("{} {} {} {} {} {}\n", &[I32, U32, I64, U64, F64, Str]),
            "%d %u %lld %llu %f %s\n"
        );
        assert_eq!(
            compiled("{:.3} {:.12} {:x} {:x} {:.0}", &[F64, F64, U32, I64, F64]),
            "%.3f %.12f %x %llx %.0f"
        );
        assert_eq!(compiled("100% {{{}}} }}", &[I32]), "100%% {%d} }");
    }

    #[test]
    fn the_buffer_keeps_a_nul_after_the_text() {
        let format = CFormat::compile("{}", &[Kind::I32]);
        assert_eq!(format.bytes[format.len], 0);
        let long = "a".repeat(MAX_FORMAT_BYTES);
        let refused = std::panic::catch_unwind(|| CFormat::compile(&long, &[]));
        assert!(refused.is_err());
        let fits = CFormat::compile(&long[1..], &[]);
        assert_eq!(fits.as_bytes().len(), MAX_FORMAT_BYTES - 1);
        assert_eq!(fits.bytes[MAX_FORMAT_BYTES - 1], 0);
    }

    #[test]
    fn bad_format_strings_are_refused_with_the_reason() {
        use Kind::*;
        let cases: &[(&str, &[Kind], &str)] = &[
            ("{} {}", &[I32], "more `{}` than arguments"),
            ("{}", &[I32, I32], "more arguments than `{}`"),
            ("{:.2}", &[I32], "for floats only"),
            ("{:x}", &[F64], "for integers only"),
            ("{:?}", &[I32], "placeholders are"),
            ("a } b", &[], "lone `}`"),
            ("{:.}", &[F64], "precision must be"),
        ];
        for &(text, kinds, expected) in cases {
            let message = std::panic::catch_unwind(|| CFormat::compile(text, kinds))
                .expect_err(text)
                .downcast::<&str>()
                .map(|m| std::string::String::from(*m))
                .unwrap_or_else(|p| *p.downcast::<std::string::String>().unwrap());
            assert!(message.contains(expected), "{text}: {message}");
        }
    }

    #[test]
    fn arguments_are_packed_as_c_packs_varargs() {
        use core::mem::{offset_of, size_of_val};
        // i32 at 0, f64 (from f32) at 8, u32 at 16, a pointer at 24: each aligned to its size.
        let packed = (7i32, 1.5f32, 9u32, true).pack();
        type Four = Pack4<i32, f64, u32, *const u8>;
        assert_eq!(
            [
                offset_of!(Four, 1),
                offset_of!(Four, 2),
                offset_of!(Four, 3)
            ],
            [8, 16, 24]
        );
        assert_eq!(size_of_val(&packed), 32);
        assert_eq!((packed.0, packed.1, packed.2), (7, 1.5, 9));
        assert_eq!(packed.3, c"true".as_ptr().cast());
        type Three = Pack3<u32, i32, u64>;
        assert_eq!([offset_of!(Three, 1), offset_of!(Three, 2)], [4, 8]);
        assert_eq!(size_of_val(&(1u8, 2i16, 3u64).pack()), 16);
    }
}
