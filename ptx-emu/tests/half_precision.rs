//! `.f16` and `.bf16` known answers: arithmetic (scalar and packed `x2`), comparisons and
//! conversions, against references from the `half` crate and exact integer arithmetic, with
//! IEEE's corner cases (ties, subnormals, overflow to infinity, NaN).

mod support;

use half::{bf16, f16};
use support::*;

/// Runs 16-bit float `ops` on `.b16` registers %h1..%h3 (from the low halves of %r1..%r3),
/// the result in %h4, once per input triple; returns each result's 16 bits.
fn run16(ops: &str, inputs: &[[u16; 3]]) -> Vec<u16> {
    let instruction = format!(
        "{{ .reg .b16 %h<5>;\n cvt.u16.u32 %h1, %r1;\n cvt.u16.u32 %h2, %r2;\n cvt.u16.u32 %h3, %r3;\n\
         {ops}\n cvt.u32.u16 %r4, %h4; }}"
    );
    let bits: Vec<[u64; 3]> = inputs.iter().map(|v| v.map(u64::from)).collect();
    run_instruction(&instruction, false, &bits)
        .into_iter()
        .map(|b| b as u16)
        .collect()
}

/// Deterministic finite f16 bit patterns spread over every exponent, subnormals included.
fn sample_f16(seed: u64, n: usize) -> Vec<u16> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bits = (x >> 33) as u16;
            // Exponent 31 is infinity/NaN: fold it into the finite range.
            if bits & 0x7c00 == 0x7c00 {
                bits & !0x4000
            } else {
                bits
            }
        })
        .collect()
}

/// The f16 nearest (ties to even) to `s · 2^-48`, by exact integer comparison: every finite
/// f16 is an integer multiple of 2^-24, so of 2^-48 too. Infinite past the largest finite
/// value's rounding boundary, as IEEE's round to nearest says.
fn nearest_f16(s: i128) -> u16 {
    let scaled = |bits: u16| (f16::from_bits(bits).to_f64() * 2f64.powi(48)) as i128;
    let guess = f16::from_f64(s as f64 * 2f64.powi(-48));
    let sign = if s < 0 { 0x8000 } else { 0 };
    let magnitude = s.abs();
    // 65520 = 65504 + half an ulp: the tie goes to the even neighbour, infinity.
    if magnitude >= 65520i128 << 48 {
        return sign | 0x7c00;
    }
    let g = guess.to_bits() & 0x7fff;
    let candidates = [g.saturating_sub(1), g, (g + 1).min(0x7bff)];
    let best = candidates
        .iter()
        .copied()
        .min_by_key(|&c| ((scaled(c) - magnitude).abs(), c & 1))
        .unwrap();
    sign | best
}

/// f16 `x` as an integer multiple of 2^-24.
fn units(x: u16) -> i128 {
    (f16::from_bits(x).to_f64() * 2f64.powi(24)) as i128
}

#[test]
fn f16_add_sub_mul_fma_round_to_nearest_even_like_exact_arithmetic() {
    let (a, b, c) = (sample_f16(1, 400), sample_f16(2, 400), sample_f16(3, 400));
    let inputs: Vec<[u16; 3]> = (0..a.len()).map(|i| [a[i], b[i], c[i]]).collect();
    let shift = 1i128 << 24;
    let want = |f: &dyn Fn(i128, i128, i128) -> i128| -> Vec<u16> {
        inputs
            .iter()
            .map(|v| {
                let s = f(units(v[0]), units(v[1]), units(v[2]));
                let r = nearest_f16(s);
                // An exact zero takes IEEE's sign rules: checked separately below.
                if s == 0 {
                    0
                } else {
                    r
                }
            })
            .collect()
    };
    let got = |op: &str| -> Vec<u16> {
        run16(op, &inputs)
            .into_iter()
            .map(|r| if r & 0x7fff == 0 { 0 } else { r })
            .collect()
    };
    assert_eq!(
        got("add.rn.f16 %h4, %h1, %h2;"),
        want(&|x, y, _| (x + y) * shift)
    );
    assert_eq!(
        got("sub.rn.f16 %h4, %h1, %h2;"),
        want(&|x, y, _| (x - y) * shift)
    );
    assert_eq!(got("mul.rn.f16 %h4, %h1, %h2;"), want(&|x, y, _| x * y));
    assert_eq!(
        got("fma.rn.f16 %h4, %h1, %h2, %h3;"),
        want(&|x, y, z| x * y + z * shift)
    );
}

#[test]
fn f16_corner_cases_ties_subnormals_overflow_nan() {
    let h = |x: f64| f16::from_f64(x).to_bits();
    let one = h(1.0);
    let tie = h(2f64.powi(-11)); // half an ulp of 1: exactly representable (normal)
    let smallest = 0x0001; // 2^-24, the smallest subnormal
    let add = |a: u16, b: u16| run16("add.rn.f16 %h4, %h1, %h2;", &[[a, b, 0]])[0];
    assert_eq!(add(one, tie), one, "a tie rounds to the even neighbour");
    assert_eq!(add(h(1.0 + 2f64.powi(-10)), tie), h(1.0 + 2f64.powi(-9)));
    assert_eq!(add(smallest, smallest), 0x0002, "subnormals add exactly");
    assert_eq!(add(h(65504.0), h(32.0)), 0x7c00, "overflow gives infinity");
    assert_eq!(
        add(h(65504.0), h(16.0)),
        0x7c00,
        "the tie at 65520 goes to even: infinity"
    );
    assert_eq!(
        add(h(65504.0), h(8.0)),
        0x7bff,
        "below the boundary stays finite"
    );
    assert_eq!(
        add(0x7c00, 0xfc00),
        0x7fff,
        "inf - inf is the canonical NaN"
    );
    assert_eq!(
        add(0x7e01, one),
        0x7fff,
        "a NaN operand gives the canonical NaN"
    );
    assert_eq!(add(0x8000, 0x8000), 0x8000, "-0 + -0 is -0");
    assert_eq!(add(0x8000, 0x0000), 0x0000, "-0 + +0 is +0");
    // half of the smallest subnormal is a tie between 0 and it: to zero (even).
    let mul = |op: &str, a: u16, b: u16| run16(op, &[[a, b, 0]])[0];
    assert_eq!(mul("mul.rn.f16 %h4, %h1, %h2;", smallest, h(0.5)), 0);
    assert_eq!(
        mul("mul.rn.f16 %h4, %h1, %h2;", smallest, h(0.75)),
        smallest
    );
    // .ftz flushes subnormal operands and results to zero of their sign.
    assert_eq!(mul("mul.rn.ftz.f16 %h4, %h1, %h2;", 0x83ff, one), 0x8000);
    assert_eq!(mul("add.rn.ftz.f16 %h4, %h1, %h2;", 0x03ff, 0x0001), 0);
    // .sat clamps to [0, 1] and NaN to 0.
    assert_eq!(mul("add.rn.sat.f16 %h4, %h1, %h2;", h(0.75), h(0.5)), one);
    assert_eq!(mul("add.rn.sat.f16 %h4, %h1, %h2;", h(-0.75), h(0.5)), 0);
    assert_eq!(mul("add.rn.sat.f16 %h4, %h1, %h2;", 0x7e00, one), 0);
    // fma rounds once: (1 + 2^-10)(1 - 2^-10) - 1 = -2^-20, which a rounded product loses.
    let fused = run16(
        "fma.rn.f16 %h4, %h1, %h2, %h3;",
        &[[h(1.0 + 2f64.powi(-10)), h(1.0 - 2f64.powi(-10)), h(-1.0)]],
    )[0];
    assert_eq!(fused, h(-(2f64.powi(-20))));
    // fma.relu: negative results to +0, NaN kept canonical.
    let relu = |a: u16| run16("fma.rn.relu.f16 %h4, %h1, %h2, %h3;", &[[a, one, 0]])[0];
    assert_eq!(relu(h(-3.0)), 0);
    assert_eq!(relu(h(3.0)), h(3.0));
    assert_eq!(relu(0x7d00), 0x7fff);
}

#[test]
fn f16_min_max_neg_abs_follow_the_nan_and_zero_rules() {
    let h = |x: f64| f16::from_f64(x).to_bits();
    let nan = 0x7e00;
    let two = |op: &str, a: u16, b: u16| run16(op, &[[a, b, 0]])[0];
    assert_eq!(two("min.f16 %h4, %h1, %h2;", h(2.0), h(-3.0)), h(-3.0));
    assert_eq!(two("max.f16 %h4, %h1, %h2;", h(2.0), h(-3.0)), h(2.0));
    assert_eq!(two("min.f16 %h4, %h1, %h2;", nan, h(5.0)), h(5.0));
    assert_eq!(two("max.f16 %h4, %h1, %h2;", h(5.0), nan), h(5.0));
    assert_eq!(two("min.f16 %h4, %h1, %h2;", nan, nan), 0x7fff);
    assert_eq!(two("min.NaN.f16 %h4, %h1, %h2;", nan, h(5.0)), 0x7fff);
    assert_eq!(two("max.NaN.f16 %h4, %h1, %h2;", h(5.0), h(6.0)), h(6.0));
    assert_eq!(two("min.f16 %h4, %h1, %h2;", 0x0000, 0x8000), 0x8000);
    assert_eq!(two("max.f16 %h4, %h1, %h2;", 0x8000, 0x0000), 0x0000);
    assert_eq!(two("neg.f16 %h4, %h1;", h(1.5), 0), h(-1.5));
    assert_eq!(two("abs.f16 %h4, %h1;", h(-1.5), 0), h(1.5));
    assert_eq!(
        two("neg.f16 %h4, %h1;", 0x7e01, 0),
        0xfe01,
        "neg flips the sign bit only"
    );
    assert_eq!(two("abs.ftz.f16 %h4, %h1;", 0x8001, 0), 0x0000);
}

#[test]
fn f16_approximations_are_within_the_isa_bounds() {
    let xs: Vec<f64> = (-40..=40).map(|k| k as f64 * 0.37).collect();
    let inputs: Vec<[u16; 3]> = xs
        .iter()
        .map(|&x| [f16::from_f64(x).to_bits(), 0, 0])
        .collect();
    let ex2 = run16("ex2.approx.f16 %h4, %h1;", &inputs);
    let tanh = run16("tanh.approx.f16 %h4, %h1;", &inputs);
    for (i, v) in inputs.iter().enumerate() {
        let x = f16::from_bits(v[0]).to_f64();
        let got = f16::from_bits(ex2[i]).to_f64();
        // PTX ISA: ex2.approx.f16, maximum relative error 2^-9.9.
        assert!(
            ((got - x.exp2()) / x.exp2()).abs() <= 2f64.powi(-9) * 1.1,
            "ex2({x}) = {got}"
        );
        let got = f16::from_bits(tanh[i]).to_f64();
        // PTX ISA: tanh.approx.f16, maximum absolute error 2^-10.987.
        assert!(
            (got - x.tanh()).abs() <= 2f64.powf(-10.987),
            "tanh({x}) = {got}"
        );
    }
}

#[test]
fn f16x2_and_bf16x2_compute_each_half_like_the_scalar_form() {
    let (a, b, c) = (sample_f16(7, 64), sample_f16(8, 64), sample_f16(9, 64));
    let pack = |lo: u16, hi: u16| (hi as u64) << 16 | lo as u64;
    for (scalar, packed, bfloat) in [
        (
            "fma.rn.f16 %h4, %h1, %h2, %h3;",
            "fma.rn.f16x2 %r4, %r1, %r2, %r3;",
            false,
        ),
        (
            "mul.rn.bf16 %h4, %h1, %h2;",
            "mul.rn.bf16x2 %r4, %r1, %r2;",
            true,
        ),
        ("max.bf16 %h4, %h1, %h2;", "max.bf16x2 %r4, %r1, %r2;", true),
    ] {
        let lows: Vec<[u16; 3]> = (0..32).map(|i| [a[i], b[i], c[i]]).collect();
        let highs: Vec<[u16; 3]> = (32..64).map(|i| [a[i], b[i], c[i]]).collect();
        let (lo, hi) = (run16(scalar, &lows), run16(scalar, &highs));
        let both: Vec<[u64; 3]> = (0..32)
            .map(|i| [0, 1, 2].map(|k| pack(lows[i][k], highs[i][k])))
            .collect();
        let got = run_instruction(packed, false, &both);
        let want: Vec<u64> = (0..32).map(|i| pack(lo[i], hi[i])).collect();
        assert_eq!(got, want, "{packed} (bf16: {bfloat})");
    }
}

#[test]
fn bf16_arithmetic_rounds_like_the_half_crate_from_exact_sums() {
    // Values within 2^±20 of one another, so that their f64 sums and products are exact and
    // one rounding by the half crate is the correctly rounded reference.
    let values: Vec<f64> = (0..200)
        .map(|i| (((i * 7919) % 1000) as f64 - 500.0) * 2f64.powi((i % 30) - 15) / 7.0)
        .map(|x| bf16::from_f64(x).to_f64())
        .collect();
    let bits = |x: f64| bf16::from_f64(x).to_bits();
    let inputs: Vec<[u16; 3]> = (0..100)
        .map(|i| [bits(values[i]), bits(values[i + 100]), 0])
        .collect();
    let want = |f: fn(f64, f64) -> f64| -> Vec<u16> {
        (0..100)
            .map(|i| bits(f(values[i], values[i + 100])))
            .collect()
    };
    assert_eq!(
        run16("add.rn.bf16 %h4, %h1, %h2;", &inputs),
        want(|x, y| x + y)
    );
    assert_eq!(
        run16("sub.rn.bf16 %h4, %h1, %h2;", &inputs),
        want(|x, y| x - y)
    );
    assert_eq!(
        run16("mul.rn.bf16 %h4, %h1, %h2;", &inputs),
        want(|x, y| x * y)
    );
    assert_eq!(run16("neg.bf16 %h4, %h1;", &inputs), want(|x, _| -x));
    // bf16 has f32's range: 2^127 · 2 overflows to infinity, not at f16's 65504.
    let big = bits(2f64.powi(127));
    assert_eq!(
        run16("mul.rn.bf16 %h4, %h1, %h2;", &[[big, bits(2.0), 0]]),
        [0x7f80]
    );
    assert_eq!(
        run16(
            "mul.rn.bf16 %h4, %h1, %h2;",
            &[[bits(65504.0), bits(2.0), 0]]
        ),
        [bits(131008.0)]
    );
}

#[test]
fn bf16_and_f16_compare_and_round_to_integers() {
    let b = |x: f64| bf16::from_f64(x).to_bits();
    let x = b(3.25);
    // cvt.rXi.bf16.bf16: bfloat16's trunc, ceil, floor and rint (Numba's math functions).
    let cvt = |op: &str, x: u16| run16(&format!("{op} %h4, %h1;"), &[[x, 0, 0]])[0];
    assert_eq!(cvt("cvt.rzi.bf16.bf16", x), b(3.0));
    assert_eq!(cvt("cvt.rpi.bf16.bf16", x), b(4.0));
    assert_eq!(cvt("cvt.rmi.bf16.bf16", b(-3.25)), b(-4.0));
    assert_eq!(cvt("cvt.rni.bf16.bf16", b(2.5)), b(2.0));
    assert_eq!(
        cvt("cvt.rni.f16.f16", f16::from_f64(3.5).to_bits()),
        f16::from_f64(4.0).to_bits()
    );
    assert_eq!(
        cvt("cvt.rn.bf16.f16", f16::from_f64(1.0 / 3.0).to_bits()),
        b(1.0 / 3.0)
    );
    let setp = |cmp: &str, x: u16, y: u16, ty: &str| {
        let ops =
            format!("{{ .reg .pred %q; setp.{cmp}.{ty} %q, %h1, %h2; selp.b16 %h4, 1, 0, %q; }}");
        run16(&ops, &[[x, y, 0]])[0]
    };
    // Compared as values, not as bits: -2 < 1 though its bits are larger.
    assert_eq!(setp("lt", b(-2.0), b(1.0), "bf16"), 1);
    assert_eq!(setp("gt", b(-2.0), b(1.0), "bf16"), 0);
    assert_eq!(setp("eq", 0x8000, 0x0000, "bf16"), 1, "-0 == +0");
    assert_eq!(setp("neu", 0x7fc0, 0x7fc0, "bf16"), 1, "NaN is unordered");
    assert_eq!(setp("eq", 0x7fc0, 0x7fc0, "bf16"), 0);
    let h = |x: f64| f16::from_f64(x).to_bits();
    assert_eq!(setp("le", h(-0.5), h(-0.25), "f16"), 1);
    assert_eq!(setp("ge", h(-0.5), h(-0.25), "f16"), 0);
}

/// CUDA's fp16 headers in Numba's inline assembly: `.reg.b16` with no space, bare register
/// names, `set.eq.f16.f16` giving 1.0 or 0.0 as an f16, used to correct one input by an ulp.
#[test]
fn cuda_fp16_header_assembly_set_and_correct_one_input() {
    let h = |x: f64| f16::from_f64(x).to_bits();
    let ops = "{.reg.b16 spc, ulp, p;\n mov.b16 spc,0X32B3U;\n mov.b16 ulp,0x0800U;\n\
               set.eq.f16.f16 p,%h1, spc;\n fma.rn.f16 %h4,p,ulp,%h1;\n}";
    let special = 0x32b3;
    let got = run16(ops, &[[special, 0, 0], [h(0.25), 0, 0]]);
    let corrected = f16::from_bits(special).to_f64() + f16::from_bits(0x0800).to_f64();
    assert_eq!(got, [h(corrected), h(0.25)]);
    // set with an integer destination: all ones, or 0.
    let ops = "{ .reg .b32 %w; set.lt.u32.f16 %w, %h1, %h2; cvt.u16.u32 %h4, %w; }";
    assert_eq!(
        run16(ops, &[[h(-1.0), h(1.0), 0], [h(1.0), h(-1.0), 0]]),
        [0xffff, 0]
    );
}

/// `min`/`max.xorsign.abs` by the PTX ISA's definition, from the operands' values (the half
/// crate): the smaller or larger magnitude (a NaN operand gives the other, `.NaN` makes any
/// NaN the result), signed with the XOR of the operands' sign bits; a NaN result is the
/// canonical NaN, its sign not XORed.
fn xorsign_reference(a: u16, b: u16, max: bool, nan: bool, bfloat: bool) -> u16 {
    let value = |x: u16| match bfloat {
        true => bf16::from_bits(x).to_f64(),
        false => f16::from_bits(x).to_f64(),
    };
    let (x, y) = (value(a), value(b));
    if (x.is_nan() && y.is_nan()) || (nan && (x.is_nan() || y.is_nan())) {
        return 0x7fff;
    }
    let (ma, mb) = (a & 0x7fff, b & 0x7fff);
    let pick_a = if y.is_nan() {
        true
    } else if x.is_nan() {
        false
    } else if max {
        x.abs() >= y.abs()
    } else {
        x.abs() <= y.abs()
    };
    (if pick_a { ma } else { mb }) | ((a ^ b) & 0x8000)
}

#[test]
fn min_max_xorsign_abs_take_the_magnitude_and_xor_the_signs() {
    let mut values = sample_f16(11, 48);
    // Signed zeros, infinities, NaNs of both signs, equal magnitudes of opposite signs.
    values.extend([
        0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x3c00, 0xbc00,
    ]);
    let pairs: Vec<[u16; 3]> = values
        .iter()
        .flat_map(|&a| [values[7], values[20], 0x8000, 0xfe00, 0xbc00].map(|b| [a, b, 0]))
        .collect();
    for bfloat in [false, true] {
        let ty = if bfloat { "bf16" } else { "f16" };
        for (max, nan) in [(false, false), (true, false), (false, true), (true, true)] {
            let name = if max { "max" } else { "min" };
            let nan_modifier = if nan { ".NaN" } else { "" };
            let scalar = format!("{name}{nan_modifier}.xorsign.abs.{ty} %h4, %h1, %h2;");
            let want: Vec<u16> = pairs
                .iter()
                .map(|p| xorsign_reference(p[0], p[1], max, nan, bfloat))
                .collect();
            assert_eq!(run16(&scalar, &pairs), want, "{scalar}");
            // The packed form: the same pairs, the high half reversed.
            let packed = format!("{name}{nan_modifier}.xorsign.abs.{ty}x2 %r4, %r1, %r2;");
            let n = pairs.len();
            let both: Vec<[u64; 3]> = (0..n)
                .map(|i| {
                    let (lo, hi) = (pairs[i], pairs[n - 1 - i]);
                    [0, 1, 2].map(|k| (hi[k] as u64) << 16 | lo[k] as u64)
                })
                .collect();
            let want: Vec<u64> = (0..n)
                .map(|i| (want[n - 1 - i] as u64) << 16 | want[i] as u64)
                .collect();
            assert_eq!(run_instruction(&packed, false, &both), want, "{packed}");
        }
    }
    let h = |x: f64| f16::from_f64(x).to_bits();
    let two = |op: &str, a: u16, b: u16| run16(op, &[[a, b, 0]])[0];
    assert_eq!(
        two("min.xorsign.abs.f16 %h4, %h1, %h2;", h(-5.0), h(3.0)),
        h(-3.0)
    );
    assert_eq!(
        two("max.xorsign.abs.f16 %h4, %h1, %h2;", h(-5.0), h(-3.0)),
        h(5.0)
    );
}

#[test]
fn fma_oob_zeroes_a_lane_with_an_oob_nan_operand_and_is_fma_otherwise() {
    // 0x7fff: the OOB-NaN; 0x7e00 and 0xffff: other NaNs, which stay NaN.
    let special = [0x7fff, 0x7e00, 0xffff];
    let (a, b, c) = (sample_f16(21, 40), sample_f16(22, 40), sample_f16(23, 40));
    let mut inputs: Vec<[u16; 3]> = (0..40).map(|i| [a[i], b[i], c[i]]).collect();
    for (k, &s) in special.iter().enumerate() {
        for position in 0..3 {
            let mut v = [a[k], b[k], c[k]];
            v[position] = s;
            inputs.push(v);
        }
    }
    for ty in ["f16", "bf16"] {
        let plain = run16(&format!("fma.rn.{ty} %h4, %h1, %h2, %h3;"), &inputs);
        for relu in [false, true] {
            let modifier = if relu { ".relu" } else { "" };
            let oob = format!("fma.rn.oob{modifier}.{ty} %h4, %h1, %h2, %h3;");
            let got = run16(&oob, &inputs);
            let infinity = if ty == "f16" { 0x7c00 } else { 0x7f80 };
            for (i, v) in inputs.iter().enumerate() {
                // Below zero, infinity included (not a NaN; -0 is `.relu`'s own business).
                let magnitude = plain[i] & 0x7fff;
                let negative = plain[i] & 0x8000 != 0 && magnitude != 0 && magnitude <= infinity;
                let want = if v.contains(&0x7fff) || (relu && negative) {
                    0
                } else {
                    plain[i]
                };
                assert_eq!(got[i], want, "{oob} on {v:04x?}");
            }
        }
        // Each half of the packed form on its own: the OOB-NaN in the high half only.
        let packed = format!("fma.rn.oob.{ty}x2 %r4, %r1, %r2, %r3;");
        let one = if ty == "f16" { 0x3c00 } else { 0x3f80 };
        let got = run_instruction(&packed, false, &[[0x7fff << 16 | one, one << 16 | one, 0]]);
        assert_eq!(got, [one], "{packed}");
    }
}

#[test]
fn setp_on_packed_pairs_compares_each_half_into_its_own_predicate() {
    let values = [
        0x3c00u16, 0xbc00, 0x0000, 0x8000, 0x7e00, 0x4000, 0x0001, 0x7c00,
    ];
    let f16_value = |x: u16| f16::from_bits(x).to_f64();
    let bf16_value = |x: u16| bf16::from_bits(x).to_f64();
    let holds = |cmp: &str, x: f64, y: f64| match cmp {
        "lt" => x < y,
        "ge" => x >= y,
        "eq" => x == y,
        "neu" => x != y,
        "equ" => x.is_nan() || y.is_nan() || x == y,
        "nan" => x.is_nan() || y.is_nan(),
        _ => unreachable!(),
    };
    let mut inputs = Vec::new();
    for &x in &values {
        for &y in &values {
            // Low halves (x, y), high halves (y, x); c alternates.
            let c = (inputs.len() % 2) as u64;
            inputs.push([(y as u64) << 16 | x as u64, (x as u64) << 16 | y as u64, c]);
        }
    }
    for (ty, value) in [
        ("f16x2", &f16_value as &dyn Fn(u16) -> f64),
        ("bf16x2", &bf16_value),
    ] {
        for cmp in ["lt", "ge", "eq", "neu", "equ", "nan"] {
            for combine in ["", ".and", ".xor"] {
                let c = if combine.is_empty() { "" } else { ", !%p3" };
                let instruction = format!(
                    "setp.ne.u32 %p3, %r3, 0;\n setp.{cmp}{combine}.{ty} %p1|%p2, %r1, %r2{c};\n\
                     selp.u32 %r5, 1, 0, %p1;\n selp.u32 %r6, 2, 0, %p2;\n or.b32 %r4, %r5, %r6;"
                );
                let got = run_instruction(&instruction, false, &inputs);
                let want: Vec<u64> = inputs
                    .iter()
                    .map(|v| {
                        let not_c = v[2] == 0;
                        let half = |shift: u32| {
                            let (a, b) = ((v[0] >> shift) as u16, (v[1] >> shift) as u16);
                            let t = holds(cmp, value(a), value(b));
                            match combine {
                                ".and" => t && not_c,
                                ".xor" => t != not_c,
                                _ => t,
                            }
                        };
                        half(0) as u64 | (half(16) as u64) << 1
                    })
                    .collect();
                assert_eq!(got, want, "{instruction}");
            }
        }
    }
    // `.ftz`: the subnormal 0x0001 equals zero.
    let pair = [[0x0001_0001u64, 0x0000_8000, 0]];
    let eq = |ftz: &str| {
        let i = format!(
            "setp.eq{ftz}.f16x2 %p1|%p2, %r1, %r2;\n selp.u32 %r5, 1, 0, %p1;\n \
             selp.u32 %r6, 2, 0, %p2;\n or.b32 %r4, %r5, %r6;"
        );
        run_instruction(&i, false, &pair)[0]
    };
    assert_eq!((eq(""), eq(".ftz")), (0, 3));
}
