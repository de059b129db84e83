//! Printing from a kernel: [`println!`](crate::println).
//!
//! The format string is Rust's (`{}` placeholders), turned at compile time into the C format
//! string CUDA's `printf` takes: each placeholder's conversion comes from its argument's type
//! (`%d` for `i32`, `%llu` for `u64`, `%f` for floats, ...). On the GPU the line goes through PTX
//! `vprintf` (the arguments packed as CUDA C packs them: each aligned to its size, `f32` promoted
//! to `f64`) into the driver's printf buffer, which the host prints at its next synchronisation.
//! On the CPU executor the same C format string is rendered on the host, prefixed with the
//! thread's coordinates; see `ferrocuda_std::cpu::PrintCapture` for how tests read it.

pub(crate) mod format;

use crate::backend::{Backend, Machine};
#[cfg(not(target_arch = "nvptx64"))]
pub use format::Value;
pub use format::{
    CFormat, Format, Kind, Literal, LiteralStr, PrintArg, PrintArgs, MAX_FORMAT_BYTES,
};

/// What [`println!`](crate::println) calls: prints `args` with the format of `F`.
#[doc(hidden)]
#[inline(always)]
pub fn print<F: Format, A: PrintArgs>(args: A) {
    let format: &'static CFormat = const { &CFormat::compile(F::TEXT, A::KINDS) };
    Machine::print(format, args);
}

/// Prints a line from a kernel, as Rust's `println!` does, with `{}` placeholders:
///
/// ```
/// # let (i, x, ok) = (3usize, 0.5f32, true);
/// ferrocuda_std::println!("thread {}: x = {:.3}, ok = {}, {}", i, x, ok, "done");
/// ```
///
/// Arguments: integers, `f32`, `f64`, `bool`, `&'static CStr` values, and literals written in
/// the call (a string or char literal is printed as written; a `&str` that is not a literal has no
/// NUL for the GPU's printf, and a `c"..."` literal cannot be `concat!`ed: write it as `"..."`). Placeholders: `{}`, `{:.N}`
/// (floats, N decimals) and `{:x}` (integers, hex); `{{` and `}}` print braces. Floats print as
/// C's `%f` does (six decimals for `{}`), on the GPU and on the CPU alike; at most 12 arguments.
/// Anything else is a compile error saying why:
///
/// ```compile_fail
/// let name: &str = "x";
/// ferrocuda_std::println!("{}", name); // a &str has no NUL for the GPU's printf
/// ```
///
/// ```compile_fail
/// ferrocuda_std::println!("{} {}", 1u32); // one argument for two placeholders
/// ```
///
/// On the GPU, this is CUDA's `printf` (PTX `vprintf`): the line goes to a buffer the driver
/// prints at the host's next synchronisation, lines of different threads in no set order, and
/// lines past the buffer's size (1 MiB by default) are lost. On the CPU executor each line is
/// prefixed with the thread's coordinates, `[block (0, 0, 0) thread (3, 0, 0)] `, each thread's
/// lines in its order; `ferrocuda_std::cpu::PrintCapture` collects them for tests.
#[macro_export]
macro_rules! println {
    ($format:literal $(,)?) => {
        $crate::__print_args!([$format] [])
    };
    ($format:literal, $($args:tt)+) => {
        $crate::__print_args!([$format] [] $($args)+)
    };
}

/// [`println!`](crate::println)'s argument muncher: literals become NUL-terminated strings.
#[doc(hidden)]
#[macro_export]
macro_rules! __print_args {
    ([$format:literal] [$($done:expr,)*]) => {{
        struct __FerrocudaFormat;
        impl $crate::print::Format for __FerrocudaFormat {
            const TEXT: &'static str = ::core::concat!($format, "\n");
        }
        $crate::print::print::<__FerrocudaFormat, _>(($($done,)*))
    }};
    // A leading `-` would commit the `literal` matcher below to a literal (`-(a + b)` is not
    // one, and the error would be fatal): such an argument is an expression.
    ([$format:literal] [$($done:expr,)*] - $($rest:tt)*) => {
        $crate::__print_args!(@expression [$format] [$($done,)*] - $($rest)*)
    };
    ([$format:literal] [$($done:expr,)*] $literal:literal $(, $($rest:tt)*)?) => {
        $crate::__print_args!(
            [$format]
            [$($done,)* $crate::print::Literal::arg($literal, ::core::concat!($literal, "\0")),]
            $($($rest)*)?
        )
    };
    ([$format:literal] [$($done:expr,)*] $arg:expr $(, $($rest:tt)*)?) => {
        $crate::__print_args!([$format] [$($done,)* $arg,] $($($rest)*)?)
    };
    (@expression [$format:literal] [$($done:expr,)*] $arg:expr $(, $($rest:tt)*)?) => {
        $crate::__print_args!([$format] [$($done,)* $arg,] $($($rest)*)?)
    };
}
