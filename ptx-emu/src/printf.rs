//! `vprintf`, CUDA's device-side printf: the format string is read from device memory, the
//! arguments from the buffer the caller packed (each aligned to its size: `int` 4 bytes,
//! `long long`, `double` and pointers 8, as CUDA C packs them), and the line is rendered as
//! glibc's printf renders it. What a launch printed is kept in order per thread and written
//! out when the launch ends (the driver's "printed at the next synchronisation").
//!
//! Limits, as CUDA's printf has them: a launch's output goes to a buffer of [`BUFFER`] bytes
//! (`cudaLimitPrintfFifoSize`'s default); a call whose text does not fit in what is left of it
//! is dropped whole (it returns -1) and the launch says on stderr how many were. Rendering stops
//! as soon as a call's text outgrows the buffer, so no width, precision (`%.99999999999999999999d`)
//! or count of conversions makes it run long or allocate more than the buffer. As on CUDA, a
//! call takes at most [`MAX_ARGS`] arguments; a conversion past them is printed as written.

use crate::block::{resolve, Block, Grid, Place, Trouble};
use crate::ir::Space;
use crate::FaultKind;

/// Longest format string or `%s` argument read (the GPU's printf has no such limit, but a
/// missing NUL must end somewhere).
const MAX_STRING: usize = 64 * 1024;

/// Bytes of printf output one launch keeps: CUDA's default printf FIFO (1 MiB).
pub(crate) const BUFFER: usize = 1 << 20;

/// Arguments one printf call takes (CUDA's limit; later conversions are printed as written).
const MAX_ARGS: usize = 32;

/// Widths and precisions are clamped to this: anything wider gives a text longer than the
/// buffer, which is dropped however much longer it would be.
const MAX_FIELD: usize = BUFFER + 1;

/// Runs `vprintf(format, args)` for thread `t`: appends the rendered text to the grid's output
/// if it fits in what is left of the launch's [`BUFFER`]; whether it did (else the call is
/// dropped, and counted in `grid.printf_dropped`).
pub(crate) fn vprintf(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    format: u64,
    args: u64,
) -> Result<bool, Trouble> {
    let text = read_string(grid, block, t, format, usize::MAX)?;
    let mut reader = ArgReader {
        grid,
        block,
        t,
        base: args,
        offset: 0,
    };
    let left = {
        let printed = grid.printed.lock().unwrap_or_else(|p| p.into_inner());
        BUFFER.saturating_sub(printed.len())
    };
    let rendered = render(&text, &mut reader, left)?;
    let mut printed = grid.printed.lock().unwrap_or_else(|p| p.into_inner());
    match rendered {
        Some(rendered) if printed.len() + rendered.len() <= BUFFER => {
            printed.extend_from_slice(&rendered);
            Ok(true)
        }
        _ => {
            grid.printf_dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(false)
        }
    }
}

fn read_byte(grid: &Grid, block: &mut Block, t: usize, address: u64) -> Result<u8, Trouble> {
    Ok(
        match resolve(grid, block, t, Space::Generic, address, 1, 1)? {
            Place::Global(i, offset) => grid.globals[i].load(offset, 1) as u8,
            Place::Shared(o) => block.shared.bytes[o],
            Place::Local(o) => block.local[o],
            Place::KernelParam(o) => grid.params[o],
            Place::Frame(o) => block.frame[o],
        },
    )
}

/// The NUL-terminated string at `address`, at most `limit` bytes of it (a `%.Ns` reads no more).
fn read_string(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    address: u64,
    limit: usize,
) -> Result<Vec<u8>, Trouble> {
    let mut text = Vec::new();
    while text.len() < limit {
        if text.len() == MAX_STRING {
            return Err(Trouble::new(
                FaultKind::IllegalAddress,
                format!("printf string at {address:#x} has no NUL in its first {MAX_STRING} bytes"),
            ));
        }
        match read_byte(grid, block, t, address + text.len() as u64)? {
            0 => break,
            byte => text.push(byte),
        }
    }
    Ok(text)
}

/// Where a conversion's argument comes from.
trait Args {
    /// The next argument of `bytes` (4 or 8), aligned to its size.
    fn next(&mut self, bytes: u64) -> Result<u64, Trouble>;
    /// The string at `address`, at most `limit` bytes.
    fn string(&mut self, address: u64, limit: usize) -> Result<Vec<u8>, Trouble>;
}

struct ArgReader<'g, 'b> {
    grid: &'g Grid<'g>,
    block: &'b mut Block,
    t: usize,
    base: u64,
    offset: u64,
}

impl Args for ArgReader<'_, '_> {
    fn next(&mut self, bytes: u64) -> Result<u64, Trouble> {
        self.offset = self.offset.next_multiple_of(bytes);
        let mut value = 0u64;
        for k in 0..bytes {
            let address = self.base.wrapping_add(self.offset + k);
            let byte = read_byte(self.grid, self.block, self.t, address)?;
            value |= u64::from(byte) << (8 * k);
        }
        self.offset += bytes;
        Ok(value)
    }

    fn string(&mut self, address: u64, limit: usize) -> Result<Vec<u8>, Trouble> {
        read_string(self.grid, self.block, self.t, address, limit)
    }
}

/// One conversion's flags, width and precision.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

/// Counts the arguments a call takes, refusing those past [`MAX_ARGS`].
struct Counted<'a> {
    args: &'a mut dyn Args,
    taken: usize,
}

impl Counted<'_> {
    /// The next argument, or `None` past the call's [`MAX_ARGS`].
    fn next(&mut self, bytes: u64) -> Result<Option<u64>, Trouble> {
        if self.taken == MAX_ARGS {
            return Ok(None);
        }
        self.taken += 1;
        self.args.next(bytes).map(Some)
    }
}

/// Renders `format` as C's printf does: flags `-+ #0`, width and precision (`*` taking an
/// `int`), lengths `hh h l ll z j t L`, conversions `d i u o x X c s p f F e E g G %`. `None`
/// once the text is longer than `limit` (the rest is not rendered).
fn render(format: &[u8], args: &mut dyn Args, limit: usize) -> Result<Option<Vec<u8>>, Trouble> {
    let mut args = Counted { args, taken: 0 };
    let mut out = Vec::with_capacity((format.len() + 32).min(limit + 1));
    let mut i = 0;
    while i < format.len() {
        if out.len() > limit {
            return Ok(None);
        }
        let c = format[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let start = i - 1;
        // A conversion past the call's arguments is printed as written, from `%` on.
        macro_rules! arg {
            ($bytes:expr) => {
                match args.next($bytes)? {
                    Some(value) => value,
                    None => {
                        out.extend_from_slice(&format[start..i]);
                        continue;
                    }
                }
            };
        }
        let mut spec = Spec::default();
        while let Some(&flag) = format.get(i) {
            match flag {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alternate = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if format.get(i) == Some(&b'*') {
            i += 1;
            let width = arg!(4) as u32 as i32;
            spec.left |= width < 0;
            spec.width = (width.unsigned_abs() as usize).min(MAX_FIELD);
        } else {
            spec.width = number(format, &mut i);
        }
        if format.get(i) == Some(&b'.') {
            i += 1;
            spec.precision = Some(if format.get(i) == Some(&b'*') {
                i += 1;
                // A negative precision is taken as none given (C's rule).
                match arg!(4) as u32 as i32 {
                    p if p < 0 => None,
                    p => Some((p as usize).min(MAX_FIELD)),
                }
            } else {
                Some(number(format, &mut i))
            })
            .flatten();
        }
        let mut wide = false;
        while let Some(&length) = format.get(i) {
            match length {
                b'h' => {}
                b'l' | b'z' | b'j' | b't' | b'L' | b'q' => wide = true,
                _ => break,
            }
            i += 1;
        }
        let Some(&conversion) = format.get(i) else {
            out.push(b'%');
            break;
        };
        i += 1;
        // The conversion's text is at least its width long, and for these at least its
        // precision: past the buffer, the call cannot fit (and is not rendered further).
        let precise = b"diuoxXfFeE".contains(&conversion)
            || (spec.alternate && matches!(conversion, b'g' | b'G'));
        let least = match spec.precision {
            Some(p) if precise => spec.width.max(p),
            _ => spec.width,
        };
        if conversion != b'%' && out.len() + least > limit {
            return Ok(None);
        }
        let int_bytes = if wide { 8 } else { 4 };
        let text: Vec<u8> = match conversion {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let raw = arg!(int_bytes);
                let value = if wide {
                    raw as i64
                } else {
                    i64::from(raw as u32 as i32)
                };
                let sign = sign_of(value < 0, &spec);
                integer(value.unsigned_abs(), 10, false, sign, "", &spec)
            }
            b'u' | b'o' | b'x' | b'X' => {
                let raw = arg!(int_bytes);
                let value = if wide { raw } else { raw as u32 as u64 };
                let (base, upper, prefix) = match conversion {
                    b'u' => (10, false, ""),
                    b'o' => (8, false, if spec.alternate { "0" } else { "" }),
                    b'x' => (
                        16,
                        false,
                        if spec.alternate && value != 0 {
                            "0x"
                        } else {
                            ""
                        },
                    ),
                    _ => (
                        16,
                        true,
                        if spec.alternate && value != 0 {
                            "0X"
                        } else {
                            ""
                        },
                    ),
                };
                integer(value, base, upper, "", prefix, &spec)
            }
            b'c' => pad(vec![arg!(4) as u8], &spec),
            b's' => {
                let address = arg!(8);
                let text = if address == 0 {
                    b"(null)".to_vec()
                } else {
                    // No more of it than could fit in the buffer.
                    let most = spec.precision.unwrap_or(usize::MAX).min(limit + 1);
                    args.args.string(address, most)?
                };
                pad(text, &spec)
            }
            b'p' => {
                let address = arg!(8);
                let text = if address == 0 {
                    "(nil)".into()
                } else {
                    format!("{address:#x}")
                };
                pad(text.into_bytes(), &spec)
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let value = f64::from_bits(arg!(8));
                float(value, conversion, &spec)
            }
            other => {
                // An unknown conversion is printed as written, as glibc does.
                let mut text = vec![b'%'];
                text.push(other);
                text
            }
        };
        out.extend_from_slice(&text);
    }
    Ok((out.len() <= limit).then_some(out))
}

/// A width or precision as written, at most [`MAX_FIELD`].
fn number(format: &[u8], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d) = format.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as usize);
        *i += 1;
    }
    n.min(MAX_FIELD)
}

fn sign_of(negative: bool, spec: &Spec) -> &'static str {
    match (negative, spec.plus, spec.space) {
        (true, _, _) => "-",
        (false, true, _) => "+",
        (false, false, true) => " ",
        _ => "",
    }
}

fn integer(value: u64, base: u32, upper: bool, sign: &str, prefix: &str, spec: &Spec) -> Vec<u8> {
    let mut digits = match base {
        8 => format!("{value:o}"),
        16 if upper => format!("{value:X}"),
        16 => format!("{value:x}"),
        _ => value.to_string(),
    };
    if let Some(precision) = spec.precision {
        if precision == 0 && value == 0 {
            digits.clear();
        }
        // Zeros in front up to the precision, in one pass.
        let zeros = precision.saturating_sub(digits.len());
        if zeros > 0 {
            digits = "0".repeat(zeros) + &digits;
        }
    }
    if prefix == "0" && digits.starts_with('0') {
        digits.remove(0); // `%#o` of a number that already starts with 0
    }
    let head = format!("{sign}{prefix}");
    let zero_pad = spec.zero && spec.precision.is_none();
    pad_number(head, digits, spec, zero_pad)
}

/// `head` (sign, prefix) then `body`, to the width: zeros between them, or spaces around.
fn pad_number(head: String, body: String, spec: &Spec, zero_pad: bool) -> Vec<u8> {
    let len = head.len() + body.len();
    let fill = spec.width.saturating_sub(len);
    let mut text = String::with_capacity(len + fill);
    if spec.left {
        text.push_str(&head);
        text.push_str(&body);
        text.extend(std::iter::repeat_n(' ', fill));
    } else if zero_pad {
        text.push_str(&head);
        text.extend(std::iter::repeat_n('0', fill));
        text.push_str(&body);
    } else {
        text.extend(std::iter::repeat_n(' ', fill));
        text.push_str(&head);
        text.push_str(&body);
    }
    text.into_bytes()
}

fn pad(mut text: Vec<u8>, spec: &Spec) -> Vec<u8> {
    let fill = spec.width.saturating_sub(text.len());
    if spec.left {
        text.extend(std::iter::repeat_n(b' ', fill));
        text
    } else {
        let mut padded = vec![b' '; fill];
        padded.append(&mut text);
        padded
    }
}

/// `%f`, `%e`, `%g` (and upper case) as glibc writes them: exact decimal rounding, ties to even
/// (as Rust's formatting rounds), `inf` and `nan` (`-nan` with the sign bit set).
fn float(value: f64, conversion: u8, spec: &Spec) -> Vec<u8> {
    let upper = conversion.is_ascii_uppercase();
    let sign = sign_of(value.is_sign_negative(), spec);
    let magnitude = value.abs();
    let body = if value.is_nan() {
        "nan".to_string()
    } else if value.is_infinite() {
        "inf".to_string()
    } else {
        let precision = spec.precision.unwrap_or(6);
        match conversion.to_ascii_lowercase() {
            b'f' => format!("{magnitude:.precision$}"),
            b'e' => exponent_form(magnitude, precision),
            // Without `#`, trailing zeros go: every double's exact decimal expansion has
            // fewer than 800 significant digits, so more precision changes nothing.
            _ if !spec.alternate => general_form(magnitude, precision.min(800), false),
            _ => general_form(magnitude, precision, true),
        }
    };
    let body = if upper { body.to_uppercase() } else { body };
    let zero_pad = spec.zero && value.is_finite();
    pad_number(sign.to_string(), body, spec, zero_pad)
}

/// `d.ddde±XX`: Rust writes `1.5e3`; C writes the exponent signed, with two digits at least.
fn exponent_form(magnitude: f64, precision: usize) -> String {
    let rust = format!("{magnitude:.precision$e}");
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%g`: `%e` if the exponent is below -4 or at least the precision, else `%f`, with trailing
/// zeros removed (kept with `#`).
fn general_form(magnitude: f64, precision: usize, alternate: bool) -> String {
    let p = precision.max(1);
    let probe = format!("{magnitude:.*e}", p - 1);
    let exponent: i64 = probe
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let (mut text, exponent_part) = if exponent < -4 || exponent >= p as i64 {
        let full = exponent_form(magnitude, p - 1);
        let (mantissa, e) = full.split_once('e').unwrap_or((&full, ""));
        (mantissa.to_string(), format!("e{e}"))
    } else {
        let decimals = (p as i64 - 1 - exponent) as usize;
        (format!("{magnitude:.decimals$}"), String::new())
    };
    if !alternate && text.contains('.') {
        while text.ends_with('0') {
            text.pop();
        }
        if text.ends_with('.') {
            text.pop();
        }
    }
    text + &exponent_part
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments packed as CUDA C packs them, strings by address into `strings`.
    struct Packed {
        bytes: Vec<u8>,
        offset: usize,
        strings: Vec<(u64, &'static [u8])>,
    }

    impl Args for Packed {
        fn next(&mut self, bytes: u64) -> Result<u64, Trouble> {
            let at = self.offset.next_multiple_of(bytes as usize);
            self.offset = at + bytes as usize;
            let mut word = [0u8; 8];
            word[..bytes as usize].copy_from_slice(&self.bytes[at..at + bytes as usize]);
            Ok(u64::from_le_bytes(word))
        }
        fn string(&mut self, address: u64, limit: usize) -> Result<Vec<u8>, Trouble> {
            let (_, text) = self.strings.iter().find(|(a, _)| *a == address).unwrap();
            Ok(text[..text.len().min(limit)].to_vec())
        }
    }

    fn printf(format: &str, words: &[(u8, u64)]) -> String {
        let mut bytes = Vec::new();
        for &(size, value) in words {
            while bytes.len() % size as usize != 0 {
                bytes.push(0xee); // padding the reader must skip
            }
            bytes.extend_from_slice(&value.to_le_bytes()[..size as usize]);
        }
        let mut args = Packed {
            bytes,
            offset: 0,
            strings: vec![(0x1000, b"hello"), (0x2000, b"")],
        };
        let rendered = render(format.as_bytes(), &mut args, BUFFER).unwrap();
        String::from_utf8(rendered.expect("fits in the buffer")).unwrap()
    }

    fn f(v: f64) -> (u8, u64) {
        (8, v.to_bits())
    }

    // Expected strings are what glibc's printf prints for the same format and arguments.
    #[test]
    fn integers_with_flags_widths_and_precisions() {
        let minus_five = (-5i32) as u32 as u64;
        assert_eq!(
            printf(
                "%d|%5d|%-5d|%05d|%+d|% d|%.3d|%i",
                &[
                    (4, minus_five),
                    (4, 42),
                    (4, 42),
                    (4, minus_five),
                    (4, 7),
                    (4, 7),
                    (4, 7),
                    (4, 0)
                ]
            ),
            "-5|   42|42   |-0005|+7| 7|007|0"
        );
        assert_eq!(
            printf(
                "%u %x %X %#x %o %#o %lld %llu %lx %hhd",
                &[
                    (4, 0xffff_ffff),
                    (4, 255),
                    (4, 255),
                    (4, 255),
                    (4, 8),
                    (4, 8),
                    (8, i64::MIN as u64),
                    (8, u64::MAX),
                    (8, 1 << 40),
                    (4, 65)
                ]
            ),
            "4294967295 ff FF 0xff 10 010 -9223372036854775808 18446744073709551615 10000000000 65"
        );
        assert_eq!(
            printf(
                "%.0d|%#x|%*d|%-*d|",
                &[(4, 0), (4, 0), (4, 4), (4, 1), (4, 3), (4, 2)]
            ),
            "|0|   1|2  |"
        );
    }

    #[test]
    fn an_int_then_a_double_skips_the_padding_between_them() {
        assert_eq!(
            printf("%d %f %d", &[(4, 3), f(0.5), (4, 9)]),
            "3 0.500000 9"
        );
    }

    #[test]
    fn floats_in_fixed_exponent_and_general_form() {
        assert_eq!(
            printf(
                "%f %.2f %.0f %.0f %10.3f %-8.1f| %+.1f %e %.2E %g %g %g %g %G %#g",
                &[
                    f(3.25159),
                    f(2.675),
                    f(0.5),
                    f(1.5),
                    f(-3.25159),
                    f(2.25),
                    f(1.0),
                    f(12345.678),
                    f(0.000123),
                    f(100000.0),
                    f(1000000.0),
                    f(0.0001),
                    f(0.00001),
                    f(1e-10),
                    f(1.0)
                ]
            ),
            "3.251590 2.67 0 2     -3.252 2.2     | +1.0 1.234568e+04 1.23E-04 100000 1e+06 0.0001 1e-05 1E-10 1.00000"
        );
        assert_eq!(
            printf(
                "%f %f %f %5.1f %e %g",
                &[
                    f(f64::INFINITY),
                    f(-f64::INFINITY),
                    f(-f64::NAN),
                    f(f64::NAN),
                    f(0.0),
                    f(-0.0)
                ]
            ),
            "inf -inf -nan   nan 0.000000e+00 -0"
        );
        assert_eq!(
            printf("%010.2f|%-+8.2f|", &[f(-1.5), f(1.5)]),
            "-000001.50|+1.50   |"
        );
    }

    #[test]
    fn strings_characters_pointers_and_percent() {
        assert_eq!(
            printf(
                "%s|%8s|%-6s|%.3s|%s|%c%c|%p|%p|100%%",
                &[
                    (8, 0x1000),
                    (8, 0x1000),
                    (8, 0x1000),
                    (8, 0x1000),
                    (8, 0),
                    (4, b'o' as u64),
                    (4, b'k' as u64),
                    (8, 0xdead0),
                    (8, 0)
                ]
            ),
            "hello|   hello|hello |hel|(null)|ok|0xdead0|(nil)|100%"
        );
        assert_eq!(printf("[%s]", &[(8, 0x2000)]), "[]");
    }

    /// `render` of `format` within the whole buffer, or `None` when it does not fit; in a
    /// thread, with a deadline, so that a regression to a quadratic or endless loop fails.
    fn render_within(format: String, words: Vec<(u8, u64)>) -> Option<String> {
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            for (size, value) in words {
                while bytes.len() % size as usize != 0 {
                    bytes.push(0xee);
                }
                bytes.extend_from_slice(&value.to_le_bytes()[..size as usize]);
            }
            let mut args = Packed {
                bytes,
                offset: 0,
                strings: vec![(0x1000, b"hello")],
            };
            let rendered = render(format.as_bytes(), &mut args, BUFFER).unwrap();
            let _ = send.send(rendered.map(|r| String::from_utf8(r).unwrap()));
        });
        receive
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("rendered within 20 s")
    }

    /// Issue 29 (E2): `%.99999999999999999999d` padded one '0' at a time at the front, for
    /// ever. Widths and precisions past the buffer are dropped calls now, found at once.
    #[test]
    fn huge_widths_and_precisions_are_dropped_calls_not_hangs() {
        let seven = vec![(4, 7)];
        for format in [
            "%.99999999999999999999d",
            "%99999999999999999999d",
            "%.2000000d",
            "%.2000000f",
            "%#.2000000g",
            "%2000000s",
            "%-2000000c",
        ] {
            assert_eq!(
                render_within(format.into(), seven.clone()),
                None,
                "{format}"
            );
        }
        // `*` widths and precisions from the arguments, i32::MIN and i32::MAX included.
        let min = i32::MIN as u32 as u64;
        assert_eq!(render_within("%*d".into(), vec![(4, min), (4, 7)]), None);
        assert_eq!(
            render_within("%.*f".into(), vec![(4, i32::MAX as u64), (8, 1)]),
            None
        );
        // Many conversions, each within the buffer, all together past it.
        assert_eq!(render_within("%100000d".repeat(20), vec![(4, 1); 20]), None);
        // A long %g precision without `#` is short text, and exact.
        assert_eq!(
            render_within("%.99999g".into(), vec![(8, 0.1f64.to_bits())]).unwrap(),
            "0.1000000000000000055511151231257827021181583404541015625"
        );
    }

    #[test]
    fn precision_padding_and_negative_star_precision() {
        let padded = render_within("%.100000d".into(), vec![(4, 42)]).unwrap();
        assert_eq!(padded.len(), 100_000);
        assert!(padded.starts_with("000") && padded.ends_with("042"));
        let minus_one = (-1i32) as u32 as u64;
        // A negative `*` precision is taken as none (C's rule).
        assert_eq!(printf("[%.*d]", &[(4, minus_one), (4, 7)]), "[7]");
        assert_eq!(printf("[%.*s]", &[(4, minus_one), (8, 0x1000)]), "[hello]");
    }

    /// As on CUDA: at most 32 arguments; a conversion past them is printed as written.
    #[test]
    fn conversions_past_32_arguments_are_printed_as_written() {
        let words: Vec<(u8, u64)> = (0..40).map(|k| (4, k)).collect();
        let text = printf(&"%d ".repeat(34), &words);
        let want: String = (0..32).map(|k| format!("{k} ")).collect::<String>() + "%d %d ";
        assert_eq!(text, want);
        assert_eq!(printf("%*d|%d", &[(4, 3), (4, 1), (4, 2)]), "  1|2");
    }
}
