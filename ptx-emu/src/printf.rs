//! `vprintf`, CUDA's device-side printf: the format string is read from device memory, the
//! arguments from the buffer the caller packed (each aligned to its size: `int` 4 bytes,
//! `long long`, `double` and pointers 8, as CUDA C packs them), and the line is rendered as
//! glibc's printf renders it. What a launch printed is kept in order per thread and written
//! out when the launch ends (the driver's "printed at the next synchronisation").

use crate::block::{resolve, Block, Grid, Place, Trouble};
use crate::ir::Space;
use crate::FaultKind;

/// Longest format string or `%s` argument read (the GPU's printf has no such limit, but a
/// missing NUL must end somewhere).
const MAX_STRING: usize = 64 * 1024;

/// Runs `vprintf(format, args)` for thread `t`: appends the rendered text to the grid's output.
pub(crate) fn vprintf(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    format: u64,
    args: u64,
) -> Result<(), Trouble> {
    let text = read_string(grid, block, t, format, usize::MAX)?;
    let mut reader = ArgReader {
        grid,
        block,
        t,
        base: args,
        offset: 0,
    };
    let rendered = render(&text, &mut reader)?;
    grid.printed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend_from_slice(&rendered);
    Ok(())
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

/// Renders `format` as C's printf does: flags `-+ #0`, width and precision (`*` taking an
/// `int`), lengths `hh h l ll z j t L`, conversions `d i u o x X c s p f F e E g G %`.
fn render(format: &[u8], args: &mut dyn Args) -> Result<Vec<u8>, Trouble> {
    let mut out = Vec::with_capacity(format.len() + 32);
    let mut i = 0;
    while i < format.len() {
        let c = format[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
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
            let width = args.next(4)? as u32 as i32;
            spec.left |= width < 0;
            spec.width = width.unsigned_abs() as usize;
            i += 1;
        } else {
            spec.width = number(format, &mut i);
        }
        if format.get(i) == Some(&b'.') {
            i += 1;
            spec.precision = Some(if format.get(i) == Some(&b'*') {
                i += 1;
                (args.next(4)? as u32 as i32).max(0) as usize
            } else {
                number(format, &mut i)
            });
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
        let int_bytes = if wide { 8 } else { 4 };
        let text: Vec<u8> = match conversion {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let raw = args.next(int_bytes)?;
                let value = if wide {
                    raw as i64
                } else {
                    i64::from(raw as u32 as i32)
                };
                let sign = sign_of(value < 0, &spec);
                integer(value.unsigned_abs(), 10, false, sign, "", &spec)
            }
            b'u' | b'o' | b'x' | b'X' => {
                let raw = args.next(int_bytes)?;
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
            b'c' => pad(vec![args.next(4)? as u8], &spec),
            b's' => {
                let address = args.next(8)?;
                let text = if address == 0 {
                    b"(null)".to_vec()
                } else {
                    args.string(address, spec.precision.unwrap_or(usize::MAX))?
                };
                pad(text, &spec)
            }
            b'p' => {
                let address = args.next(8)?;
                let text = if address == 0 {
                    "(nil)".into()
                } else {
                    format!("{address:#x}")
                };
                pad(text.into_bytes(), &spec)
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let value = f64::from_bits(args.next(8)?);
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
    Ok(out)
}

fn number(format: &[u8], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d) = format.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as usize);
        *i += 1;
    }
    n
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
        while digits.len() < precision {
            digits.insert(0, '0');
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
            _ => general_form(magnitude, precision, spec.alternate),
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
        String::from_utf8(render(format.as_bytes(), &mut args).unwrap()).unwrap()
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
}
