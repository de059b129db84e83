//! The high-precision reference of the f64 math (`tests/data/f64_reference.txt`, written by
//! `scripts/f64_math_reference.py` with mpmath at 300 bits) and the error of a result against it
//! in ULPs, for `math_f64.rs` here and the emulator test `tests/math_f64_kernel.rs`.
#![allow(dead_code)]

use std::string::String;
use std::vec::Vec;

/// The reference file, compiled in (about 0.5 MB).
const TEXT: &str = include_str!("../data/f64_reference.txt");

/// One reference point: `f(x)` (or `pow(x, y)`) = `hi + offset · ulp(hi)` to about 1e-7 ULP.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    hi: f64,
    offset: f64,
}

fn from_hex(word: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(word, 16).expect("a hex bit pattern"))
}

/// The spacing of f64s at |x| (2^-1074 among the subnormals).
pub fn ulp(x: f64) -> f64 {
    let biased = (x.abs().to_bits() >> 52).max(1);
    if biased > 52 {
        f64::from_bits((biased - 52) << 52)
    } else {
        f64::from_bits(1 << (biased - 1)) // 2^(biased - 1075), a subnormal
    }
}

impl Point {
    /// |got - exact| in ULPs of the exact value's f64 neighbourhood (infinite for a NaN or an
    /// infinity, since every reference value is finite).
    pub fn ulp_error(&self, got: f64) -> f64 {
        if !got.is_finite() {
            return f64::INFINITY;
        }
        ((got - self.hi) / ulp(self.hi) - self.offset).abs()
    }

    /// The exact value, rounded to f64 (almost always the correctly rounded one).
    pub fn value(&self) -> f64 {
        self.hi
    }
}

/// The points for `name` (`exp`, `exp2`, `ln`, `log2`, `sin`, `cos`, `erfc`, `normal_cdf`,
/// `pow`); `pow`'s have `y`, the others `y = 0`.
pub fn points(name: &str) -> Vec<Point> {
    let points: Vec<Point> = TEXT
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            (words[0] == name).then(|| {
                let n = words.len();
                Point {
                    x: from_hex(words[1]),
                    y: if n == 5 { from_hex(words[2]) } else { 0.0 },
                    hi: from_hex(words[n - 2]),
                    offset: words[n - 1].parse().expect("an offset"),
                }
            })
        })
        .collect();
    assert!(
        points.len() > 1000,
        "{name}: {} reference points",
        points.len()
    );
    points
}

/// The worst error of `f` over the points of `name`: (ULPs, the input, the result).
pub fn worst(name: &str, f: impl Fn(&Point) -> f64) -> (f64, Point, f64) {
    let mut worst: Option<(f64, Point, f64)> = None;
    for p in points(name) {
        let got = f(&p);
        let error = p.ulp_error(got);
        if worst.is_none_or(|w| error > w.0 || error.is_nan()) {
            worst = Some((error, p, got));
        }
    }
    worst.expect("points")
}

/// "name: max E ULP at x (got G, want W)".
pub fn describe(name: &str, (error, p, got): (f64, Point, f64)) -> String {
    std::format!(
        "{name}: max {error:.3} ULP at x = {:e}{} (got {got:e}, want {:e})",
        p.x,
        if name == "pow" {
            std::format!(", y = {:e}", p.y)
        } else {
            String::new()
        },
        p.hi
    )
}
