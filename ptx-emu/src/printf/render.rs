//! printf's formatting, as glibc's printf renders it: flags, width, precision, lengths and the
//! conversions CUDA C passes, from arguments an [`Args`] reads (device memory in `vprintf`, a
//! packed buffer in the tests), within CUDA's limits on the output and the argument count.

use crate::block::Trouble;

/// Bytes of printf output one launch keeps: CUDA's default printf FIFO (1 MiB).
pub(crate) const BUFFER: usize = 1 << 20;

/// Arguments one printf call takes (CUDA's limit; later conversions are printed as written).
pub(super) const MAX_ARGS: usize = 32;

/// Widths and precisions are clamped to this: anything wider gives a text longer than the
/// buffer, which is dropped however much longer it would be.
const MAX_FIELD: usize = BUFFER + 1;

/// Where a conversion's argument comes from.
pub(super) trait Args {
    /// The next argument of `bytes` (4 or 8), aligned to its size.
    fn next(&mut self, bytes: u64) -> Result<u64, Trouble>;
    /// The string at `address`, at most `limit` bytes.
    fn string(&mut self, address: u64, limit: usize) -> Result<Vec<u8>, Trouble>;
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
pub(super) fn render(
    format: &[u8],
    args: &mut dyn Args,
    limit: usize,
) -> Result<Option<Vec<u8>>, Trouble> {
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
