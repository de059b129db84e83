//! `mma.sync.aligned` known answers for every shape and type the emulator implements, with each
//! fragment's lane mapping checked against a reference written from the PTX ISA's text ("Matrix
//! fragments for mma.m16n8k16 / m16n8k8 / m16n8k32": the `groupID`/`threadID_in_group`
//! formulas), not from the emulator's tables, plus spot checks read off the ISA's figures.

mod support;

use ferrocuda_ptx_emu::{FaultKind, Module};
use support::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    F16,
    Bf16,
    Tf32,
    /// (A signed, B signed, .satfinite)
    Int(bool, bool, bool),
}

impl Kind {
    fn mnk(self) -> (usize, usize, usize) {
        match self {
            Kind::F16 | Kind::Bf16 => (16, 8, 16),
            Kind::Tf32 => (16, 8, 8),
            Kind::Int(..) => (16, 8, 32),
        }
    }
    fn instruction(self) -> String {
        let body = match self {
            Kind::F16 => "m16n8k16.row.col.f32.f16.f16.f32".to_string(),
            Kind::Bf16 => "m16n8k16.row.col.f32.bf16.bf16.f32".to_string(),
            Kind::Tf32 => "m16n8k8.row.col.f32.tf32.tf32.f32".to_string(),
            Kind::Int(a, b, sat) => format!(
                "m16n8k32.row.col{}.s32.{}8.{}8.s32",
                if sat { ".satfinite" } else { "" },
                if a { "s" } else { "u" },
                if b { "s" } else { "u" }
            ),
        };
        format!("mma.sync.aligned.{body} {{%d0,%d1,%d2,%d3}}, {{%a0,%a1,%a2,%a3}}, {{%b0,%b1}}, {{%c0,%c1,%c2,%c3}};")
    }
    /// Bits of one A/B element in a register.
    fn bits(self) -> usize {
        match self {
            Kind::F16 | Kind::Bf16 => 16,
            Kind::Tf32 => 32,
            Kind::Int(..) => 8,
        }
    }
    fn encode(self, v: f64, signed: bool) -> u32 {
        match self {
            Kind::F16 => half::f16::from_f64(v).to_bits() as u32,
            Kind::Bf16 => half::bf16::from_f64(v).to_bits() as u32,
            Kind::Tf32 => (v as f32).to_bits(),
            Kind::Int(..) if signed => v as i8 as u8 as u32,
            Kind::Int(..) => v as u8 as u32,
        }
    }
}

// The ISA's fragment formulas, as its text states them (groupID = laneid >> 2,
// threadID_in_group = laneid % 4): (row, col) of element i of a lane's fragment.

fn a_at(kind: Kind, lane: usize, i: usize) -> (usize, usize) {
    let (group, tig) = (lane >> 2, lane % 4);
    match kind {
        Kind::F16 | Kind::Bf16 => {
            let row = if i < 2 || (4..6).contains(&i) {
                group
            } else {
                group + 8
            };
            let col = tig * 2 + (i & 1) + if i < 4 { 0 } else { 8 };
            (row, col)
        }
        Kind::Tf32 => {
            let row = if i == 0 || i == 2 { group } else { group + 8 };
            let col = if i < 2 { tig } else { tig + 4 };
            (row, col)
        }
        Kind::Int(..) => {
            let row = if i < 4 || (8..12).contains(&i) {
                group
            } else {
                group + 8
            };
            let col = tig * 4 + (i & 3) + if i < 8 { 0 } else { 16 };
            (row, col)
        }
    }
}

fn b_at(kind: Kind, lane: usize, i: usize) -> (usize, usize) {
    let (group, tig) = (lane >> 2, lane % 4);
    let row = match kind {
        Kind::F16 | Kind::Bf16 => tig * 2 + (i & 1) + if i < 2 { 0 } else { 8 },
        Kind::Tf32 => {
            if i == 0 {
                tig
            } else {
                tig + 4
            }
        }
        Kind::Int(..) => tig * 4 + (i & 3) + if i < 4 { 0 } else { 16 },
    };
    (row, group)
}

fn c_at(lane: usize, i: usize) -> (usize, usize) {
    let (group, tig) = (lane >> 2, lane % 4);
    (if i < 2 { group } else { group + 8 }, tig * 2 + (i & 1))
}

/// Matrices (row-major values) to each lane's 12 input words: A in 0..4, B in 4..6, C in 8..12.
fn pack(kind: Kind, a: &[f64], b: &[f64], c: &[u32]) -> Vec<u32> {
    let (m, n, k) = kind.mnk();
    let (a_signed, b_signed) = match kind {
        Kind::Int(x, y, _) => (x, y),
        _ => (true, true),
    };
    let per = 32 / kind.bits();
    let mut words = vec![0u32; 32 * 12];
    for lane in 0..32 {
        let w = &mut words[lane * 12..lane * 12 + 12];
        for i in 0..m * k / 32 {
            let (r, col) = a_at(kind, lane, i);
            w[i / per] |= kind.encode(a[r * k + col], a_signed) << (kind.bits() * (i % per));
        }
        for i in 0..k * n / 32 {
            let (r, col) = b_at(kind, lane, i);
            w[4 + i / per] |= kind.encode(b[r * n + col], b_signed) << (kind.bits() * (i % per));
        }
        for i in 0..4 {
            let (r, col) = c_at(lane, i);
            w[8 + i] = c[r * n + col];
        }
    }
    words
}

/// Runs one warp's mma on the matrices; D (row-major bits) read back through the ISA's layout.
fn run(kind: Kind, a: &[f64], b: &[f64], c: &[u32]) -> Vec<u32> {
    let ptx = format!(
        ".version 7.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .b32 %a<4>;\n.reg .b32 %b<2>;\n.reg .f32 %c<4>;\n.reg .f32 %d<4>;\n.reg .b32 %t;\n.reg .b64 %p<4>;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %p0, [in];\nmul.wide.u32 %p1, %t, 48;\nadd.s64 %p0, %p0, %p1;\n\
         ld.global.v4.b32 {{%a0,%a1,%a2,%a3}}, [%p0];\nld.global.v2.b32 {{%b0,%b1}}, [%p0+16];\n\
         ld.global.v4.b32 {{%c0,%c1,%c2,%c3}}, [%p0+32];\n{}\n\
         ld.param.u64 %p2, [out];\nmul.wide.u32 %p1, %t, 16;\nadd.s64 %p2, %p2, %p1;\n\
         st.global.v4.b32 [%p2], {{%d0,%d1,%d2,%d3}};\nret;\n}}\n",
        kind.instruction()
    );
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    let d = Device::new();
    let input = d.upload(&pack(kind, a, b, c));
    let out = d.zeros::<u32>(32 * 4);
    d.launch(
        &module,
        "k",
        [1, 1, 1],
        [32, 1, 1],
        0,
        &[value(input.addr), value(out.addr)],
    )
    .unwrap_or_else(|f| panic!("{kind:?}: {f}"));
    let words = d.download::<u32>(out);
    let mut dm = vec![0u32; 16 * 8];
    for lane in 0..32 {
        for i in 0..4 {
            let (r, col) = c_at(lane, i);
            dm[r * 8 + col] = words[lane * 4 + i];
        }
    }
    dm
}

/// The exact `c + a·b` in f64 (exact for the integer-valued and small-fraction inputs used).
fn reference(kind: Kind, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let (m, n, k) = kind.mnk();
    let mut d = c.to_vec();
    for r in 0..m {
        for col in 0..n {
            d[r * n + col] += (0..k).map(|x| a[r * k + x] * b[x * n + col]).sum::<f64>();
        }
    }
    d
}

fn f32_bits(v: &[f64]) -> Vec<u32> {
    v.iter().map(|&x| (x as f32).to_bits()).collect()
}

/// Selection products that expose the elements of A, of B and of C at known places of D, 64 at
/// a time: the exposed block holds 1..=64 (every type holds them exactly), every other element
/// 0, so an element read from the wrong place shows as a wrong value or a 0. Exact: D must
/// equal the reference bit for bit.
fn check_lane_mapping(kind: Kind) {
    let (m, n, k) = kind.mnk();
    let int = matches!(kind, Kind::Int(..));
    let c: Vec<f64> = (0..m * n).map(|i| (i * 1000) as f64).collect();
    let c_bits: Vec<u32> = if int {
        c.iter().map(|&x| x as i32 as u32).collect()
    } else {
        f32_bits(&c)
    };
    let decode = |bits: u32| {
        if int {
            bits as i32 as f64
        } else {
            f32::from_bits(bits) as f64
        }
    };
    let check = |a: &[f64], b: &[f64], what: String| {
        let got: Vec<f64> = run(kind, a, b, &c_bits).into_iter().map(decode).collect();
        assert_eq!(got, reference(kind, a, b, &c), "{kind:?}: {what}");
    };
    // A's columns offset..offset+4: B puts column offset+j of A into column j of D.
    for offset in (0..k).step_by(4) {
        let a: Vec<f64> = (0..m * k)
            .map(|i| {
                let (r, x) = (i / k, i % k);
                if (offset..offset + 4).contains(&x) {
                    (1 + r * 4 + x - offset) as f64
                } else {
                    0.0
                }
            })
            .collect();
        let b: Vec<f64> = (0..k * n)
            .map(|i| (i % n < 4 && i / n == offset + i % n) as u8 as f64)
            .collect();
        check(&a, &b, format!("A's columns {offset}.."));
    }
    // B's rows offset..offset+8: A puts row offset+r of B into row r of D.
    for offset in (0..k).step_by(8) {
        let a: Vec<f64> = (0..m * k)
            .map(|i| (i / k < 8 && i % k == offset + i / k) as u8 as f64)
            .collect();
        let b: Vec<f64> = (0..k * n)
            .map(|i| {
                let (x, col) = (i / n, i % n);
                if (offset..offset + 8).contains(&x) {
                    (1 + (x - offset) * n + col) as f64
                } else {
                    0.0
                }
            })
            .collect();
        check(&a, &b, format!("B's rows {offset}.."));
    }
}

#[test]
fn f16_lane_mapping() {
    check_lane_mapping(Kind::F16);
}

#[test]
fn bf16_lane_mapping() {
    check_lane_mapping(Kind::Bf16);
}

#[test]
fn tf32_lane_mapping() {
    check_lane_mapping(Kind::Tf32);
}

#[test]
fn int8_lane_mapping_in_every_signedness() {
    for (a, b) in [(true, true), (true, false), (false, true), (false, false)] {
        check_lane_mapping(Kind::Int(a, b, false));
    }
}

#[test]
fn the_isa_figures_spot_checks() {
    // Read off the ISA's figures: lane 0 holds A[0][0..2] in a0,a1 and A[8][0..2] in a2,a3;
    // lane 31 (group 7, thread 3) holds A[15][14..16] in a6,a7; C: lane 5 holds D[1][2..4].
    assert_eq!(a_at(Kind::F16, 0, 0), (0, 0));
    assert_eq!(a_at(Kind::F16, 0, 3), (8, 1));
    assert_eq!(a_at(Kind::F16, 31, 7), (15, 15));
    assert_eq!(b_at(Kind::F16, 31, 3), (15, 7));
    assert_eq!(c_at(5, 1), (1, 3));
    assert_eq!(a_at(Kind::Tf32, 6, 3), (9, 6));
    assert_eq!(b_at(Kind::Tf32, 6, 1), (6, 1));
    assert_eq!(a_at(Kind::Int(true, true, false), 7, 15), (9, 31));
    assert_eq!(b_at(Kind::Int(true, true, false), 7, 7), (31, 1));
}

/// Random inputs against the f64 reference, within the documented bound
/// K · 2^-24 · (|c| + Σ|a·b|) per element.
fn check_random(kind: Kind, seed: u64) {
    let (m, n, k) = kind.mnk();
    // Values each format holds exactly: f16 and tf32 hold 10 fraction bits, bf16 7.
    let scale = if kind == Kind::Bf16 { 128.0 } else { 1024.0 };
    let exact = |x: f32| (x as f64 * scale).round() / scale;
    let a: Vec<f64> = random_f32(seed, m * k).into_iter().map(exact).collect();
    let b: Vec<f64> = random_f32(seed + 1, k * n).into_iter().map(exact).collect();
    let c: Vec<f64> = random_f32(seed + 2, m * n)
        .into_iter()
        .map(|x| x as f64 * 4.0)
        .collect();
    let got = run(kind, &a, &b, &f32_bits(&c));
    let want = reference(kind, &a, &b, &c);
    for r in 0..m {
        for col in 0..n {
            let magnitude = c[r * n + col].abs()
                + (0..k)
                    .map(|x| (a[r * k + x] * b[x * n + col]).abs())
                    .sum::<f64>();
            let bound = k as f64 * 2f64.powi(-24) * magnitude;
            let g = f32::from_bits(got[r * n + col]) as f64;
            let w = want[r * n + col];
            assert!(
                (g - w).abs() <= bound,
                "{kind:?} D[{r}][{col}]: got {g}, want {w}, bound {bound:e}"
            );
        }
    }
}

#[test]
fn floating_point_products_within_the_documented_bound() {
    for seed in [1, 7, 42] {
        check_random(Kind::F16, seed);
        check_random(Kind::Bf16, seed);
        check_random(Kind::Tf32, seed);
    }
}

#[test]
fn accumulation_order_is_c_then_k_ascending_each_step_rounded() {
    // c = 2^24 and two unit products: adding each to 2^24 rounds back to 2^24 (ties to even),
    // where summing the products first would give 2^24 + 2. Pins the documented order.
    let (m, n, k) = Kind::F16.mnk();
    let mut a = vec![0.0; m * k];
    let mut b = vec![0.0; k * n];
    a[0] = 1.0;
    a[1] = 1.0;
    b[0] = 1.0;
    b[n] = 1.0;
    let mut c = vec![0.0; m * n];
    c[0] = 2f64.powi(24);
    let got = run(Kind::F16, &a, &b, &f32_bits(&c));
    assert_eq!(f32::from_bits(got[0]), 2f32.powi(24));
    // Cancellation is exact in each step: c = 1, products 2^20 and -2^20 give 1.
    a[0] = 1024.0;
    a[1] = -1024.0;
    b[0] = 1024.0;
    b[n] = 1024.0;
    c[0] = 1.0;
    let got = run(Kind::F16, &a, &b, &f32_bits(&c));
    assert_eq!(f32::from_bits(got[0]), 1.0);
}

#[test]
fn tf32_ignores_the_low_13_bits() {
    let (m, n, k) = Kind::Tf32.mnk();
    let (mut a, mut b) = (vec![0.0; m * k], vec![0.0; k * n]);
    // 1 + 2^-20 is not a tf32 value (10 fraction bits): it counts as 1.
    a[0] = 1.0 + 2f64.powi(-20);
    b[0] = 3.0;
    let got = run(Kind::Tf32, &a, &b, &vec![0; m * n]);
    assert_eq!(f32::from_bits(got[0]), 3.0);
}

#[test]
fn int8_wraps_and_satfinite_clamps() {
    let (m, n, k) = (16, 8, 32);
    // Every product 127·127, 32 of them, on top of c = i32::MAX - 1000.
    let a = vec![127.0; m * k];
    let b = vec![127.0; k * n];
    let c = vec![(i32::MAX - 1000) as u32; m * n];
    let exact = (i32::MAX - 1000) as i64 + 32 * 127 * 127;
    let wrapped = run(Kind::Int(true, true, false), &a, &b, &c);
    assert!(wrapped.iter().all(|&d| d as i32 == exact as i32));
    let clamped = run(Kind::Int(true, true, true), &a, &b, &c);
    assert!(clamped.iter().all(|&d| d as i32 == i32::MAX));
    // u8 255 is 255, s8 0xff is -1.
    let a = vec![255.0; m * k];
    let b = vec![-1.0; k * n];
    let got = run(Kind::Int(false, true, false), &a, &b, &vec![0; m * n]);
    assert!(got.iter().all(|&d| d as i32 == -255 * 32));
}

const DIVERGENT: &str = ".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .entry k()\n{\n.reg .b32 %r<20>;\n.reg .pred %p;\n\
    mov.u32 %r0, %tid.x;\nsetp.eq.u32 %p, %r0, 5;\n@%p ret;\n\
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1,%r2,%r3,%r4}, {%r5,%r6,%r7,%r8}, {%r9,%r10}, {%r11,%r12,%r13,%r14};\n\
    ret;\n}\n";

#[test]
fn a_lane_that_does_not_reach_the_mma_is_divergence() {
    let module = Module::parse(DIVERGENT).unwrap();
    let d = Device::new();
    let fault = d
        .launch(&module, "k", [1, 1, 1], [32, 1, 1], 0, &[])
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(
        fault.message.contains("mma.sync.aligned") && fault.message.contains("lane 5"),
        "{fault}"
    );
    // A block of 16 threads has no full warp.
    let fault = d
        .launch(&module, "k", [1, 1, 1], [4, 1, 1], 0, &[])
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(fault.message.contains("does not exist"), "{fault}");
}

#[test]
fn unsupported_mma_forms_fault_when_run() {
    // f16 accumulators are another form: the module loads, running it faults.
    let ptx = DIVERGENT.replace("f32.f16.f16.f32", "f16.f16.f16.f16");
    let module = Module::parse(&ptx).unwrap();
    let fault = Device::new()
        .launch(&module, "k", [1, 1, 1], [32, 1, 1], 0, &[])
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Unsupported, "{fault}");
}
