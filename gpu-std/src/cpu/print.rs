//! Where `println!` from a kernel goes on the CPU executor: stdout, each line prefixed with the
//! thread's coordinates, or a [`PrintCapture`] that a test reads.
//!
//! The line is rendered from the same C format string the GPU's `printf` gets, so a kernel prints
//! the same text on both (floats as C's `%f`).

use crate::print::Value;
use std::cell::RefCell;
use std::io::Write;
use std::string::String;
use std::sync::{Arc, Mutex};
use std::vec::Vec;

/// Collects the lines kernels print on the CPU executor (give it to the executor's options), so
/// that a test can compare them. Each entry is one `println!`, without its newline, prefixed
/// `[block (x, y, z) thread (x, y, z)] `; each thread's lines are in its order, threads
/// interleave as they ran. Clones share the lines.
///
/// ```
/// let capture = ferrocuda_std::cpu::PrintCapture::new();
/// assert!(capture.take().is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct PrintCapture {
    lines: Arc<Mutex<Vec<String>>>,
}

impl PartialEq for PrintCapture {
    /// The same capture (one a clone of the other).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.lines, &other.lines)
    }
}
impl Eq for PrintCapture {}

impl PrintCapture {
    /// An empty capture.
    pub fn new() -> Self {
        Self::default()
    }

    /// The lines printed so far, which it forgets.
    pub fn take(&self) -> Vec<String> {
        core::mem::take(&mut *self.lines.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn push(&self, line: String) {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }
}

std::thread_local! {
    static CAPTURE: RefCell<Option<PrintCapture>> = const { RefCell::new(None) };
}

/// Runs `f` (blocks of a launch) with this OS thread's kernel prints going to `capture`, or to
/// stdout for `None`; the previous destination is restored after, also when `f` unwinds. An
/// executor internal.
#[doc(hidden)]
pub fn with_print_capture<R>(capture: Option<&PrintCapture>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<PrintCapture>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CAPTURE.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CAPTURE.with(|c| c.replace(capture.cloned()));
    let _restore = Restore(previous);
    f()
}

/// Prints one line of a kernel (`println!` on the host): `c_format` is the C format string the
/// GPU would get, `values` its arguments.
pub(crate) fn print_line(c_format: &[u8], values: &[Value]) {
    let text = render(c_format, values);
    let line = if super::context::in_kernel() {
        let block = super::context::current_block().block_idx;
        std::format!(
            "[block {block} thread {}] {text}",
            super::context::current_thread()
        )
    } else {
        text
    };
    let captured = CAPTURE.with(|c| match &*c.borrow() {
        Some(capture) => {
            capture.push(line.strip_suffix('\n').unwrap_or(&line).into());
            true
        }
        None => false,
    });
    if !captured {
        // One write per line, so lines of threads on other OS threads never mix within a line;
        // a closed stdout loses the line, as the GPU's full printf buffer would.
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }
}

/// Renders the C conversions `print::CFormat::compile` writes (`%d`, `%u`, `%lld`, `%llu`,
/// `%x`, `%llx`, `%f`, `%.Nf`, `%s`, `%%`) as C's printf does.
pub(crate) fn render(c_format: &[u8], values: &[Value]) -> String {
    let mut out = Vec::with_capacity(c_format.len() + 16);
    let mut values = values.iter();
    let mut i = 0;
    while i < c_format.len() {
        let c = c_format[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let mut precision = None;
        if c_format.get(i) == Some(&b'.') {
            i += 1;
            let mut p = 0usize;
            while let Some(d) = c_format.get(i).filter(|d| d.is_ascii_digit()) {
                p = p * 10 + (d - b'0') as usize;
                i += 1;
            }
            precision = Some(p);
        }
        let long = c_format[i..].starts_with(b"ll");
        if long {
            i += 2;
        }
        let conversion = c_format.get(i).copied().unwrap_or(b'%');
        i += 1;
        if conversion == b'%' {
            out.push(b'%');
            continue;
        }
        let text = match (conversion, values.next()) {
            (b'd' | b'u', Some(Value::Signed(v))) => std::format!("{v}"),
            (b'd' | b'u', Some(Value::Unsigned(v))) => std::format!("{v}"),
            (b'x', Some(&Value::Signed(v))) if long => std::format!("{:x}", v as u64),
            (b'x', Some(&Value::Signed(v))) => std::format!("{:x}", v as u32),
            (b'x', Some(&Value::Unsigned(v))) => std::format!("{v:x}"),
            (b'f', Some(&Value::Float(v))) => c_fixed(v, precision.unwrap_or(6)),
            (b's', Some(Value::Str(s))) => String::from(*s),
            // `compile` writes one conversion per value, of its kind.
            (c, v) => unreachable!("conversion {} for {v:?}", c as char),
        };
        out.extend_from_slice(text.as_bytes());
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `%.Nf` as glibc writes it: exact decimal rounding, ties to even (Rust's fixed-precision
/// formatting does the same), and `inf`, `-inf`, `nan`, `-nan`.
pub(crate) fn c_fixed(v: f64, precision: usize) -> String {
    match (v.is_nan(), v.is_infinite(), v.is_sign_negative()) {
        (true, _, false) => "nan".into(),
        (true, _, true) => "-nan".into(),
        (_, true, false) => "inf".into(),
        (_, true, true) => "-inf".into(),
        _ => std::format!("{v:.precision$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_conversion_renders_as_c_printf_does() {
        let values = [
            Value::Signed(-3),
            Value::Unsigned(u64::MAX),
            Value::Float(0.5),
            Value::Float(2.675),
            Value::Str("abc"),
            Value::Signed(-1),
            Value::Signed(-1),
            Value::Unsigned(255),
        ];
        assert_eq!(
            render(b"%d %llu %f %.2f %s %x %llx %x 100%%\n", &values),
            "-3 18446744073709551615 0.500000 2.67 abc ffffffff ffffffffffffffff ff 100%\n"
        );
    }

    #[test]
    fn non_finite_floats_are_spelled_as_glibc_spells_them() {
        assert_eq!(c_fixed(f64::NAN, 6), "nan");
        assert_eq!(c_fixed(-f64::NAN, 6), "-nan");
        assert_eq!(c_fixed(f64::NEG_INFINITY, 2), "-inf");
        // Ties to even on the exact binary value: 0.125 is exact, 0.375 too.
        assert_eq!(c_fixed(0.125, 2), "0.12");
        assert_eq!(c_fixed(0.375, 2), "0.38");
        assert_eq!(c_fixed(-0.0, 1), "-0.0");
    }

    #[test]
    fn a_capture_takes_the_lines_of_its_scope_and_restores_stdout_after() {
        let capture = PrintCapture::new();
        with_print_capture(Some(&capture), || {
            print_line(b"a %d\n", &[Value::Signed(1)]);
            let inner = PrintCapture::new();
            with_print_capture(Some(&inner), || print_line(b"b\n", &[]));
            assert_eq!(inner.take(), ["b"]);
            print_line(b"c\n", &[]);
        });
        assert_eq!(capture.take(), ["a 1", "c"]);
        assert!(CAPTURE.with(|c| c.borrow().is_none()));
    }
}
