//! printf's rendering against what glibc's printf prints for the same format and arguments.

use super::render::{render, Args, BUFFER};
use crate::block::Trouble;

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
