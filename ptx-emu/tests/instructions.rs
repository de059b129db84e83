//! Instruction-level known answers: float rounding modes, cvt's saturation and rounding, the
//! approx functions' error bounds as the PTX ISA states them, integer corner cases.

mod support;

use ferrocuda_ptx_emu::Module;
use support::*;

fn f32s(instruction: &str, inputs: &[[f32; 3]]) -> Vec<f32> {
    let bits: Vec<[u64; 3]> = inputs
        .iter()
        .map(|v| v.map(|x| x.to_bits() as u64))
        .collect();
    run_instruction(instruction, false, &bits)
        .into_iter()
        .map(|b| f32::from_bits(b as u32))
        .collect()
}

#[test]
fn f32_add_mul_fma_in_every_rounding_mode() {
    let tiny = 2f32.powi(-30);
    let above = 1.0f32.next_up();
    let cases = [[1.0, tiny, 0.0], [-1.0, -tiny, 0.0]];
    assert_eq!(f32s("add.rn.f32 %r4, %r1, %r2;", &cases), [1.0, -1.0]);
    assert_eq!(f32s("add.rz.f32 %r4, %r1, %r2;", &cases), [1.0, -1.0]);
    assert_eq!(f32s("add.rm.f32 %r4, %r1, %r2;", &cases), [1.0, -above]);
    assert_eq!(f32s("add.rp.f32 %r4, %r1, %r2;", &cases), [above, -1.0]);
    assert_eq!(
        f32s("sub.rz.f32 %r4, %r1, %r2;", &[[1.0, tiny, 0.0]]),
        [1.0f32.next_down()]
    );
    // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: nearest and toward zero drop the 2^-46, up adds an ulp.
    let sq = [[above, above, 0.0]];
    let exact_low = 1.0 + 2f32.powi(-22);
    assert_eq!(f32s("mul.rn.f32 %r4, %r1, %r2;", &sq), [exact_low]);
    assert_eq!(f32s("mul.rz.f32 %r4, %r1, %r2;", &sq), [exact_low]);
    assert_eq!(
        f32s("mul.rp.f32 %r4, %r1, %r2;", &sq),
        [exact_low.next_up()]
    );
    // fma rounds once: (1 + 2^-23)^2 - (1 + 2^-22) is exactly 2^-46.
    let fused = [[above, above, -exact_low]];
    assert_eq!(
        f32s("fma.rn.f32 %r4, %r1, %r2, %r3;", &fused),
        [2f32.powi(-46)]
    );
    assert_eq!(
        f32s(
            "mul.rn.f32 %r5, %r1, %r2;\nadd.rn.f32 %r4, %r5, %r3;",
            &fused
        ),
        [0.0],
        "unfused loses it"
    );
    assert_eq!(
        f32s("fma.rm.f32 %r4, %r1, %r2, %r3;", &[[above, above, 1.0]]),
        [2.0 + 2f32.powi(-22)]
    );
    assert_eq!(
        f32s("fma.rp.f32 %r4, %r1, %r2, %r3;", &[[above, above, 1.0]]),
        [(2.0 + 2f32.powi(-22)).next_up()]
    );
    // Overflow: toward zero gives the largest finite, nearest gives infinity.
    let big = [[f32::MAX, f32::MAX, 0.0]];
    assert_eq!(f32s("add.rn.f32 %r4, %r1, %r2;", &big), [f32::INFINITY]);
    assert_eq!(f32s("add.rz.f32 %r4, %r1, %r2;", &big), [f32::MAX]);
    // ftz flushes a subnormal input and result to zero.
    let sub = f32::MIN_POSITIVE / 4.0;
    assert_eq!(
        f32s("add.rn.ftz.f32 %r4, %r1, %r2;", &[[sub, 0.0, 0.0]]),
        [0.0]
    );
    assert_eq!(f32s("add.rn.f32 %r4, %r1, %r2;", &[[sub, 0.0, 0.0]]), [sub]);
}

#[test]
fn f64_directed_rounding() {
    let tiny = 2f64.powi(-60);
    let bits = |v: [f64; 3]| v.map(f64::to_bits);
    let add = |mode: &str| {
        f64::from_bits(
            run_instruction(
                &format!("add.{mode}.f64 %rd4, %rd1, %rd2;"),
                true,
                &[bits([1.0, tiny, 0.0])],
            )[0],
        )
    };
    assert_eq!(add("rn"), 1.0);
    assert_eq!(add("rz"), 1.0);
    assert_eq!(add("rp"), 1.0f64.next_up());
    let third = f64::from_bits(
        run_instruction(
            "div.rn.f64 %rd4, %rd1, %rd2;",
            true,
            &[bits([1.0, 3.0, 0.0])],
        )[0],
    );
    assert_eq!(third, 1.0 / 3.0);
}

#[test]
fn cvt_saturates_and_rounds() {
    let i32s = |instruction: &str, x: &[f32]| -> Vec<i32> {
        let inputs: Vec<[u64; 3]> = x.iter().map(|v| [v.to_bits() as u64, 0, 0]).collect();
        run_instruction(instruction, false, &inputs)
            .into_iter()
            .map(|b| b as u32 as i32)
            .collect()
    };
    let x = [3e9, -3e9, f32::NAN, 2.5, -2.5, 3.5, -0.7];
    assert_eq!(
        i32s("cvt.rzi.s32.f32 %r4, %r1;", &x),
        [i32::MAX, i32::MIN, 0, 2, -2, 3, 0]
    );
    assert_eq!(
        i32s("cvt.rni.s32.f32 %r4, %r1;", &x),
        [i32::MAX, i32::MIN, 0, 2, -2, 4, -1]
    );
    assert_eq!(
        i32s("cvt.rmi.s32.f32 %r4, %r1;", &x),
        [i32::MAX, i32::MIN, 0, 2, -3, 3, -1]
    );
    assert_eq!(
        i32s("cvt.rpi.s32.f32 %r4, %r1;", &x),
        [i32::MAX, i32::MIN, 0, 3, -2, 4, 0]
    );
    let u = i32s("cvt.rzi.u32.f32 %r4, %r1;", &[-1.0, 5e9, 7.9]);
    assert_eq!(
        u.iter().map(|&v| v as u32).collect::<Vec<_>>(),
        [0, u32::MAX, 7]
    );
    // Integer saturation into a narrower type, and the float .sat clamp to [0, 1].
    let ints: Vec<[u64; 3]> = [300i64, -5, 200, -129]
        .iter()
        .map(|&v| [v as u32 as u64, 0, 0])
        .collect();
    assert_eq!(
        run_instruction("cvt.sat.u8.s32 %r4, %r1;", false, &ints),
        [255, 0, 200, 0]
    );
    // Sign-extended into the 32-bit destination register (PTX: a destination register wider
    // than the type gets the value sign-extended for signed types).
    assert_eq!(
        run_instruction("cvt.sat.s8.s32 %r4, %r1;", false, &ints),
        [127, 0xffff_fffb, 127, 0xffff_ff80]
    );
    assert_eq!(
        run_instruction("cvt.s32.s8 %r4, %r1;", false, &[[0x80, 0, 0]]),
        [0xffff_ff80],
        "sign extension"
    );
    assert_eq!(
        f32s(
            "cvt.sat.f32.f32 %r4, %r1;",
            &[[1.5, 0.0, 0.0], [-0.5, 0.0, 0.0], [0.25, 0.0, 0.0]]
        ),
        [1.0, 0.0, 0.25]
    );
    // Integer to float in each rounding mode: 2^24 + 1 is not an f32.
    let odd = [[(1u64 << 24) + 1, 0, 0]];
    assert_eq!(
        f32::from_bits(run_instruction("cvt.rn.f32.u32 %r4, %r1;", false, &odd)[0] as u32),
        16_777_216.0
    );
    assert_eq!(
        f32::from_bits(run_instruction("cvt.rp.f32.u32 %r4, %r1;", false, &odd)[0] as u32),
        16_777_218.0
    );
}

/// The PTX ISA's stated bounds: ex2.approx.f32 max relative error 2^-22 (2 ulp) over the range,
/// lg2.approx.f32 absolute 2^-22.6 on [0.5, 2], rsqrt.approx.f32 relative 2^-22.9,
/// sin/cos.approx.f32 absolute 2^-20.9 on [-pi, pi].
#[test]
fn approx_functions_are_within_the_isa_error_bounds() {
    let n = 1024;
    let sweep = |lo: f32, hi: f32| -> Vec<[f32; 3]> {
        (0..n)
            .map(|i| [lo + (hi - lo) * i as f32 / (n - 1) as f32, 0.0, 0.0])
            .collect()
    };
    let check = |instruction: &str,
                 inputs: &[[f32; 3]],
                 want: fn(f64) -> f64,
                 relative: bool,
                 bound: f64| {
        for (x, got) in inputs.iter().zip(f32s(instruction, inputs)) {
            let w = want(x[0] as f64);
            let err = if relative {
                (got as f64 - w).abs() / w.abs()
            } else {
                (got as f64 - w).abs()
            };
            assert!(
                err <= bound,
                "{instruction} at {}: {got} vs {w} (error {err:e} > {bound:e})",
                x[0]
            );
        }
    };
    let wide = sweep(-100.0, 100.0);
    check(
        "ex2.approx.ftz.f32 %r4, %r1;",
        &wide,
        f64::exp2,
        true,
        2f64.powi(-22),
    );
    check(
        "lg2.approx.ftz.f32 %r4, %r1;",
        &sweep(0.5, 2.0),
        f64::log2,
        false,
        2f64.powf(-22.6),
    );
    check(
        "rsqrt.approx.f32 %r4, %r1;",
        &sweep(1e-3, 1e3),
        |x| 1.0 / x.sqrt(),
        true,
        2f64.powf(-22.9),
    );
    let pi = std::f32::consts::PI;
    check(
        "sin.approx.f32 %r4, %r1;",
        &sweep(-pi, pi),
        f64::sin,
        false,
        2f64.powf(-20.9),
    );
    check(
        "cos.approx.f32 %r4, %r1;",
        &sweep(-pi, pi),
        f64::cos,
        false,
        2f64.powf(-20.9),
    );
    // Special values.
    let special = [
        [f32::NEG_INFINITY, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
    ];
    let ex2 = f32s("ex2.approx.f32 %r4, %r1;", &special);
    assert_eq!(ex2[..2], [0.0, 1.0]);
    let lg2 = f32s("lg2.approx.f32 %r4, %r1;", &special);
    assert!(
        lg2[0].is_nan() && lg2[1] == f32::NEG_INFINITY && lg2[2].is_nan(),
        "{lg2:?}"
    );
}

#[test]
fn integer_corner_cases() {
    let r = |instruction: &str, a: u32, b: u32, c: u32| {
        run_instruction(instruction, false, &[[a as u64, b as u64, c as u64]])[0] as u32
    };
    assert_eq!(r("bfe.u32 %r4, %r1, %r2, %r3;", 0xf0f0_1234, 4, 8), 0x23);
    assert_eq!(
        r("bfe.s32 %r4, %r1, %r2, %r3;", 0x0000_0f00, 8, 4),
        0xffff_ffff,
        "sign bit of the field"
    );
    assert_eq!(
        r("bfe.u32 %r4, %r1, %r2, %r3;", 0xffff_ffff, 40, 8),
        0,
        "position past the width"
    );
    assert_eq!(
        r("bfi.b32 %r4, %r1, %r2, %r3, 8;", 0xab, 0x1111_1111, 4),
        0x1111_1ab1
    );
    assert_eq!(r("popc.b32 %r4, %r1;", 0xf0f0_0001, 0, 0), 9);
    // sad: c + |a - b|, the difference taken at the type's signedness (PTX ISA).
    assert_eq!(r("sad.u32 %r4, %r1, %r2, %r3;", 3, 10, 100), 107);
    assert_eq!(
        r("sad.u32 %r4, %r1, %r2, %r3;", 0xffff_fffe, 1, 5),
        2,
        "wraps at 32 bits"
    );
    assert_eq!(r("sad.s32 %r4, %r1, %r2, %r3;", -2i32 as u32, 1, 5), 8);
    assert_eq!(
        r(
            "sad.s32 %r4, %r1, %r2, %r3;",
            i32::MIN as u32,
            i32::MAX as u32,
            1
        ),
        0,
        "|MIN - MAX| = 2^32 - 1, plus 1 wraps"
    );
    let sad64 = run_instruction(
        "sad.s64 %rd4, %rd1, %rd2, %rd3;",
        true,
        &[[-5i64 as u64, 7, 1]],
    );
    assert_eq!(sad64, [13]);
    assert_eq!(
        r("shr.s32 %r4, %r1, %r2;", 0x8000_0000, 40, 0),
        0xffff_ffff,
        "shift past the width: sign fill"
    );
    assert_eq!(
        r("shl.b32 %r4, %r1, %r2;", 1, 32, 0),
        0,
        "shift past the width: zero"
    );
    assert_eq!(
        r("mul.hi.s32 %r4, %r1, %r2;", (-3i32) as u32, 0x4000_0000, 0),
        0xffff_ffff
    );
    assert_eq!(
        r("mul.hi.u32 %r4, %r1, %r2;", 0xffff_ffff, 0xffff_ffff, 0),
        0xffff_fffe
    );
    assert_eq!(
        r("div.u32 %r4, %r1, %r2;", 7, 0, 0),
        0xffff_ffff,
        "division by zero: all ones"
    );
    assert_eq!(
        r("rem.s32 %r4, %r1, %r2;", (-7i32) as u32, 3, 0),
        (-1i32) as u32
    );
    assert_eq!(
        r("min.s32 %r4, %r1, %r2;", (-1i32) as u32, 5, 0),
        (-1i32) as u32
    );
    assert_eq!(r("min.u32 %r4, %r1, %r2;", (-1i32) as u32, 5, 0), 5);
    assert_eq!(
        r(
            "copysign.f32 %r4, %r1, %r2;",
            (-1f32).to_bits(),
            2f32.to_bits(),
            0
        ),
        (-2f32).to_bits(),
        "sign of a onto b"
    );
    assert_eq!(
        r(
            "setp.ltu.f32 %p1, %r1, %r2;\nselp.u32 %r4, 1, 0, %p1;",
            f32::NAN.to_bits(),
            0,
            0
        ),
        1,
        "unordered"
    );
    assert_eq!(
        r(
            "setp.lt.f32 %p1, %r1, %r2;\nselp.u32 %r4, 1, 0, %p1;",
            f32::NAN.to_bits(),
            0,
            0
        ),
        0,
        "ordered"
    );
}

/// Instructions our kernels do not emit today but LLVM does for common Rust (rotates, byte
/// swaps, ilog2, is_infinite, saturating adds), checked so that a kernel change using them runs.
#[test]
fn funnel_shifts_permutes_bit_finds_and_float_tests() {
    let r = |instruction: &str, a: u32, b: u32, c: u32| {
        run_instruction(instruction, false, &[[a as u64, b as u64, c as u64]])[0] as u32
    };
    let x = 0x8000_0001u32;
    assert_eq!(
        r("shf.l.wrap.b32 %r4, %r1, %r2, %r3;", x, x, 4),
        x.rotate_left(4)
    );
    assert_eq!(
        r("shf.r.wrap.b32 %r4, %r1, %r2, %r3;", x, x, 36),
        x.rotate_right(4)
    );
    assert_eq!(
        r("shf.r.clamp.b32 %r4, %r1, %r2, %r3;", x, 1, 40),
        1,
        "clamped to 32: the high word"
    );
    let (a, b) = (0x4433_2211, 0x8877_6655);
    assert_eq!(r("prmt.b32 %r4, %r1, %r2, %r3;", a, b, 0x3210), a);
    assert_eq!(r("prmt.b32 %r4, %r1, %r2, %r3;", a, b, 0x7654), b);
    assert_eq!(
        r("prmt.b32 %r4, %r1, %r2, %r3;", a, b, 0x0123),
        a.swap_bytes()
    );
    assert_eq!(
        r("prmt.b32 %r4, %r1, %r2, %r3;", a, b, 0x000f),
        0x1111_11ff,
        "sign replication of byte 7"
    );
    assert_eq!(r("bfind.u32 %r4, %r1;", 0x0001_0000, 0, 0), 16);
    assert_eq!(r("bfind.shiftamt.u32 %r4, %r1;", 0x0001_0000, 0, 0), 15);
    assert_eq!(r("bfind.u32 %r4, %r1;", 0, 0, 0), u32::MAX);
    assert_eq!(
        r("bfind.s32 %r4, %r1;", 0xffff_0000, 0, 0),
        15,
        "negative: the highest 0 bit"
    );
    assert_eq!(r("bfind.s32 %r4, %r1;", u32::MAX, 0, 0), u32::MAX);
    let test = |t: &str, v: f32| {
        r(
            &format!("testp.{t}.f32 %p1, %r1;\nselp.u32 %r4, 1, 0, %p1;"),
            v.to_bits(),
            0,
            0,
        )
    };
    assert_eq!(
        [
            test("infinite", f32::INFINITY),
            test("infinite", 1.0),
            test("finite", f32::NAN)
        ],
        [1, 0, 0]
    );
    assert_eq!(
        [
            test("subnormal", f32::MIN_POSITIVE / 2.0),
            test("normal", 0.0),
            test("normal", 1.0)
        ],
        [1, 0, 1]
    );
    assert_eq!(
        [test("notanumber", f32::NAN), test("number", f32::NAN)],
        [1, 0]
    );
    assert_eq!(
        r("mul24.lo.u32 %r4, %r1, %r2;", 0x0100_0003, 2, 0),
        6,
        "operands are 24-bit"
    );
    assert_eq!(
        r("mul24.hi.u32 %r4, %r1, %r2;", 0xff_ffff, 0xff_ffff, 0),
        0xffff_fe00
    );
    assert_eq!(
        r("mad24.lo.s32 %r4, %r1, %r2, %r3;", (-2i32) as u32, 3, 1),
        (-5i32) as u32
    );
    assert_eq!(
        r("add.sat.s32 %r4, %r1, %r2;", i32::MAX as u32, 1, 0),
        i32::MAX as u32
    );
    assert_eq!(
        r("sub.sat.s32 %r4, %r1, %r2;", i32::MIN as u32, 1, 0),
        i32::MIN as u32
    );
    assert_eq!(r("cnot.b32 %r4, %r1;", 0, 0, 0), 1);
    assert_eq!(r("cnot.b32 %r4, %r1;", 7, 0, 0), 0);
    // tanh.approx.f32: the ISA's bound is a relative error of 2^-10.987.
    for i in 0..200 {
        let v = -5.0 + i as f32 * 0.05 + 0.01;
        let got = f32::from_bits(r("tanh.approx.f32 %r4, %r1;", v.to_bits(), 0, 0));
        let want = (v as f64).tanh();
        assert!(
            ((got as f64 - want) / want).abs() <= 2f64.powf(-10.987),
            "tanh({v}) = {got}"
        );
    }
}

/// Every opcode the decoder knows, with no operands or too few: a parse error or a module, not
/// a panic (an operand read before its count was checked would index out of bounds).
#[test]
fn every_opcode_with_missing_operands_is_an_error_not_a_panic() {
    let opcodes = [
        "mov.u32",
        "add.s32",
        "mul.wide.u32",
        "mad.lo.s32",
        "not.b32",
        "fma.rn.f32",
        "selp.b32",
        "setp.lt.f32",
        "cvt.rn.f32.s32",
        "cvta.to.global.u64",
        "bfe.u32",
        "bfi.b32",
        "shf.l.wrap.b32",
        "prmt.b32",
        "bfind.u32",
        "testp.finite.f32",
        "cnot.b32",
        "mul24.lo.u32",
        "mad24.lo.u32",
        "ld.global.u32",
        "st.global.u32",
        "ld.shared.v4.b32",
        "atom.global.add.u32",
        "atom.global.cas.b32",
        "red.global.add.u32",
        "bra",
        "brx.idx",
        "call",
        "bar.sync",
        "bar.red.popc.u32",
        "bar.warp.sync",
        "shfl.sync.idx.b32",
        "vote.sync.ballot.b32",
        "ex2.approx.f32",
        "copysign.f32",
    ];
    for opcode in opcodes {
        for operands in ["", " %r1", " %r1, %r2", " [%r1], %r2"] {
            let ptx = format!(".version 7.0\n.target sm_70\n.visible .entry k()\n{{\n.reg .b32 %r<3>;\n{opcode}{operands};\nret;\n}}\n");
            let _ = Module::parse(&ptx);
        }
    }
}

#[test]
fn sat_clamps_float_results_to_the_unit_interval_and_nan_to_zero() {
    // PTX ISA: `.sat` clamps the result to [0.0, 1.0]; NaN results become +0.0. ferrocuda-std's
    // default exp uses `fma.rn.sat.f32` for its range reduction.
    let inputs = [
        [2.0, 3.0, 1.0],
        [0.25, 0.5, 0.0],
        [-2.0, 3.0, 1.0],
        [8.72e8, 1.0, 0.0],
        [f32::INFINITY, 0.0, 1.0],
    ];
    let fused = f32s("fma.rn.sat.f32 %r4, %r1, %r2, %r3;", &inputs);
    assert_eq!(fused, [1.0, 0.125, 0.0, 1.0, 0.0]);
    assert!(fused.iter().all(|r| r.is_sign_positive()));
    let added = f32s("add.rn.sat.f32 %r4, %r1, %r2;", &inputs);
    assert_eq!(added, [1.0, 0.75, 1.0, 1.0, 1.0]);
    let multiplied = f32s("mul.rn.sat.f32 %r4, %r1, %r2;", &inputs);
    assert_eq!(multiplied, [1.0, 0.125, 0.0, 1.0, 0.0]);
}

/// `WARP_SZ`, PTX's predefined warp-size constant (Numba's `cuda.warpsize`), is 32.
#[test]
fn warp_sz_is_the_constant_32() {
    let got = run_instruction("mov.u32 %r4, WARP_SZ;", false, &[[0, 0, 0]]);
    assert_eq!(got, [32]);
    let got = run_instruction("add.u32 %r4, %r1, WARP_SZ;", false, &[[10, 0, 0]]);
    assert_eq!(got, [42]);
}
