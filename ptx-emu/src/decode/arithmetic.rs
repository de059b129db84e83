//! Decoding arithmetic, logic, comparison, conversion and `mov` instructions.

use super::*;

const S32: Ty = Ty {
    kind: Kind::Signed,
    bytes: 4,
};

impl<'a> Decoder<'a> {
    pub(super) fn arithmetic(&mut self, scope: &mut Scope<'a>, c: &Opcode) -> Result<Op, String> {
        if let Some(op) = self.half(scope, c)? {
            return Ok(op);
        }
        let (parts, o, last_ty, ftz) = (&c.parts, c.operands, c.last_ty(), c.has("ftz"));
        let (has, need, round, unsupported) = (
            |m: &str| c.has(m),
            |n: usize| c.need(n),
            || c.round(),
            || c.unsupported(),
        );
        Ok(match parts[0] {
            "mov" => {
                need(2)?;
                let t = last_ty.ok_or_else(unsupported)?;
                if let Operand::Vector(items) = &o[0] {
                    let (n, bits) = pieces(t, items.len())?;
                    let mut d = [0; 4];
                    for (k, item) in items.iter().enumerate() {
                        d[k] = self.dst(scope, item)?;
                    }
                    return Ok(Op::Unpack {
                        d,
                        n,
                        bits,
                        a: self.src(scope, &o[1], t)?,
                    });
                }
                let d = self.dst(scope, &o[0])?;
                if let Operand::Vector(items) = &o[1] {
                    let (n, bits) = pieces(t, items.len())?;
                    let piece = Ty {
                        kind: Kind::Unsigned,
                        bytes: bits / 8,
                    };
                    let mut s = [Src::Imm(0); 4];
                    for (k, item) in items.iter().enumerate() {
                        s[k] = self.src(scope, item, piece)?;
                    }
                    return Ok(Op::Pack { d, s, n, bits });
                }
                if let Operand::Name(n) = &o[1] {
                    if let Some(which) = special(n) {
                        return Ok(Op::Special { d, which });
                    }
                }
                Op::Mov {
                    d,
                    a: self.src(scope, &o[1], t)?,
                }
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "copysign" => {
                need(3)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                let shift = matches!(parts[0], "shl" | "shr");
                let b_ty = if shift {
                    Ty {
                        kind: Kind::Unsigned,
                        bytes: 4,
                    }
                } else {
                    t
                };
                if parts[0] == "mul" && has("wide") {
                    let (a, b) = (self.src(scope, &o[1], t)?, self.src(scope, &o[2], t)?);
                    return Ok(Op::MulWide { ty: t, d, a, b });
                }
                let (a, b) = (self.src(scope, &o[1], t)?, self.src(scope, &o[2], b_ty)?);
                match t.kind {
                    Kind::Float => {
                        let op = match parts[0] {
                            "add" => FloatOp::Add,
                            "sub" => FloatOp::Sub,
                            "mul" => FloatOp::Mul,
                            "div" => FloatOp::Div,
                            "min" => FloatOp::Min,
                            "max" => FloatOp::Max,
                            "copysign" => FloatOp::Copysign,
                            _ => return Err(unsupported()),
                        };
                        if op == FloatOp::Div && (has("approx") || has("full")) && t.bytes == 4 {
                            // div.approx/.full.f32: within 2 ulp; the correctly rounded quotient is.
                        }
                        Op::Float {
                            op,
                            f64: t.bytes == 8,
                            round: round(),
                            ftz,
                            sat: has("sat"),
                            d,
                            a,
                            b,
                        }
                    }
                    Kind::Pred => {
                        let op = match parts[0] {
                            "and" => BoolOp::And,
                            "or" => BoolOp::Or,
                            "xor" => BoolOp::Xor,
                            _ => return Err(unsupported()),
                        };
                        Op::PredLogic { op, d, a, b }
                    }
                    _ => {
                        let op = match parts[0] {
                            "add" => IntOp::Add,
                            "sub" => IntOp::Sub,
                            "mul" if has("hi") => IntOp::MulHi,
                            "mul" => IntOp::MulLo,
                            "div" => IntOp::Div,
                            "rem" => IntOp::Rem,
                            "min" => IntOp::Min,
                            "max" => IntOp::Max,
                            "and" => IntOp::And,
                            "or" => IntOp::Or,
                            "xor" => IntOp::Xor,
                            "shl" => IntOp::Shl,
                            "shr" => IntOp::Shr,
                            _ => return Err(unsupported()),
                        };
                        let op = match (op, has("sat")) {
                            (IntOp::Add, true) if t == S32 => IntOp::AddSat,
                            (IntOp::Sub, true) if t == S32 => IntOp::SubSat,
                            (_, true) => return Err(unsupported()),
                            (op, false) => op,
                        };
                        if has("cc") {
                            return Err(unsupported());
                        }
                        Op::Int { op, ty: t, d, a, b }
                    }
                }
            }
            "not" | "neg" | "abs" | "popc" | "clz" | "brev" | "sqrt" | "rcp" | "rsqrt" | "ex2"
            | "lg2" | "sin" | "cos" | "tanh" => {
                need(2)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                let a = self.src(scope, &o[1], t)?;
                match t.kind {
                    Kind::Float => {
                        let approx = has("approx");
                        let op = match parts[0] {
                            "neg" => FloatUnOp::Neg,
                            "abs" => FloatUnOp::Abs,
                            "sqrt" if approx => FloatUnOp::SqrtApprox,
                            "sqrt" => FloatUnOp::Sqrt,
                            "rcp" if approx => FloatUnOp::RcpApprox,
                            "rcp" => FloatUnOp::Rcp,
                            "rsqrt" => FloatUnOp::Rsqrt,
                            "ex2" => FloatUnOp::Ex2,
                            "lg2" => FloatUnOp::Lg2,
                            "sin" => FloatUnOp::Sin,
                            "cos" => FloatUnOp::Cos,
                            "tanh" => FloatUnOp::Tanh,
                            _ => return Err(unsupported()),
                        };
                        Op::FloatUn {
                            op,
                            f64: t.bytes == 8,
                            ftz,
                            d,
                            a,
                        }
                    }
                    Kind::Pred if parts[0] == "not" => Op::PredLogic {
                        op: BoolOp::Xor,
                        d,
                        a,
                        b: Src::Imm(1),
                    },
                    _ => {
                        let op = match parts[0] {
                            "not" => UnOp::Not,
                            "neg" => UnOp::Neg,
                            "abs" => UnOp::Abs,
                            "popc" => UnOp::Popc,
                            "clz" => UnOp::Clz,
                            "brev" => UnOp::Brev,
                            _ => return Err(unsupported()),
                        };
                        Op::IntUn { op, ty: t, d, a }
                    }
                }
            }
            "fma" | "mad" => {
                need(4)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                let wide = has("wide");
                let c_ty = if wide {
                    Ty {
                        bytes: t.bytes * 2,
                        ..t
                    }
                } else {
                    t
                };
                let (a, b, c) = (
                    self.src(scope, &o[1], t)?,
                    self.src(scope, &o[2], t)?,
                    self.src(scope, &o[3], c_ty)?,
                );
                if t.kind == Kind::Float {
                    Op::Fma {
                        f64: t.bytes == 8,
                        round: round(),
                        ftz,
                        sat: has("sat"),
                        d,
                        a,
                        b,
                        c,
                    }
                } else {
                    Op::Mad {
                        hi: has("hi"),
                        wide,
                        ty: t,
                        d,
                        a,
                        b,
                        c,
                    }
                }
            }
            // d = c + |a - b| (PTX ISA, integer arithmetic: sad).
            "sad" => {
                need(4)?;
                let t = last_ty
                    .filter(|t| matches!(t.kind, Kind::Signed | Kind::Unsigned))
                    .ok_or_else(unsupported)?;
                Op::Sad {
                    ty: t,
                    d: self.dst(scope, &o[0])?,
                    a: self.src(scope, &o[1], t)?,
                    b: self.src(scope, &o[2], t)?,
                    c: self.src(scope, &o[3], t)?,
                }
            }
            "selp" => {
                need(4)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                let pred = Ty {
                    kind: Kind::Pred,
                    bytes: 1,
                };
                Op::Selp {
                    d,
                    a: self.src(scope, &o[1], t)?,
                    b: self.src(scope, &o[2], t)?,
                    p: self.src(scope, &o[3], pred)?,
                }
            }
            "setp" if matches!(parts.last(), Some(&("f16x2" | "bf16x2"))) => {
                self.setp_pair(scope, c)?
            }
            "setp" => {
                need(3)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let cmp = compare(parts[1]).ok_or_else(unsupported)?;
                let (d, not_d) = match &o[0] {
                    Operand::Pair(p, q) => (
                        self.register(scope, p)?,
                        Some(self.dst(scope, &Operand::Name(q.clone()))?),
                    ),
                    other => (self.dst(scope, other)?, None),
                };
                let (a, b) = (self.src(scope, &o[1], t)?, self.src(scope, &o[2], t)?);
                let combine = if let Some(bool_op) = parts.iter().find_map(|p| bool_op(p)) {
                    need(4)?;
                    let (c, negate) = self.pred_src(scope, &o[3])?;
                    Some((bool_op, c, negate))
                } else {
                    None
                };
                Op::Setp {
                    cmp,
                    ty: t,
                    d,
                    not_d,
                    a,
                    b,
                    combine,
                }
            }
            // set.CmpOp.dtype.stype d, a, b (PTX ISA, comparison instructions: set).
            "set" if parts.len() == 4 => {
                need(3)?;
                let cmp = compare(parts[1]).ok_or_else(unsupported)?;
                let (to, t) = (
                    ty(parts[2]).ok_or_else(unsupported)?,
                    ty(parts[3]).ok_or_else(unsupported)?,
                );
                let one = match (to.kind, to.bytes) {
                    (Kind::Float, 2) => 0x3c00,
                    (Kind::BFloat, _) => 0x3f80,
                    (Kind::Float, 4) => 1f32.to_bits() as u64,
                    (Kind::Float, _) => 1f64.to_bits(),
                    (Kind::Pred, _) => return Err(unsupported()),
                    _ => mask(to.bytes),
                };
                Op::Set {
                    cmp,
                    ty: t,
                    one,
                    d: self.dst(scope, &o[0])?,
                    a: self.src(scope, &o[1], t)?,
                    b: self.src(scope, &o[2], t)?,
                }
            }
            "cvt" => {
                need(2)?;
                let n = parts.len();
                let (to, from) = (
                    ty(parts[n - 2]).ok_or_else(unsupported)?,
                    ty(parts[n - 1]).ok_or_else(unsupported)?,
                );
                let int_round = ["rni", "rzi", "rmi", "rpi"].iter().any(|m| has(m));
                let float_round = ["rn", "rz", "rm", "rp"].iter().any(|m| has(m));
                let d = self.dst(scope, &o[0])?;
                let a = self.src(scope, &o[1], from)?;
                let r = (int_round || float_round).then(round);
                Op::Cvt {
                    cvt: Conversion {
                        to,
                        from,
                        round: r,
                        int_round,
                        sat: has("sat"),
                        flush: ftz,
                    },
                    d,
                    a,
                }
            }
            "cvta" => {
                need(2)?;
                let to = has("to");
                let space = space_of(parts).ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                Op::Cvta {
                    to,
                    space,
                    d,
                    a: self.src(
                        scope,
                        &o[1],
                        Ty {
                            kind: Kind::Unsigned,
                            bytes: 8,
                        },
                    )?,
                }
            }
            "bfe" | "bfi" => {
                need(if parts[0] == "bfe" { 4 } else { 5 })?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                if parts[0] == "bfe" {
                    Op::Bfe {
                        ty: t,
                        d,
                        a: self.src(scope, &o[1], t)?,
                        pos: self.src(scope, &o[2], U32)?,
                        len: self.src(scope, &o[3], U32)?,
                    }
                } else {
                    Op::Bfi {
                        ty: t,
                        d,
                        a: self.src(scope, &o[1], t)?,
                        b: self.src(scope, &o[2], t)?,
                        pos: self.src(scope, &o[3], U32)?,
                        len: self.src(scope, &o[4], U32)?,
                    }
                }
            }
            "shf" => {
                need(4)?;
                let d = self.dst(scope, &o[0])?;
                let [a, b, c] = self.srcs(scope, &o[1..4], U32)?;
                Op::Shf {
                    left: has("l"),
                    wrap: has("wrap"),
                    d,
                    a,
                    b,
                    c,
                }
            }
            "prmt" if parts.len() == 2 => {
                need(4)?;
                let d = self.dst(scope, &o[0])?;
                let [a, b, c] = self.srcs(scope, &o[1..4], U32)?;
                Op::Prmt { d, a, b, c }
            }
            "bfind" => {
                need(2)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                Op::Bfind {
                    ty: t,
                    shift_amount: has("shiftamt"),
                    d,
                    a: self.src(scope, &o[1], t)?,
                }
            }
            "testp" => {
                need(2)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let test = match parts.get(1).copied() {
                    Some("finite") => FloatTest::Finite,
                    Some("infinite") => FloatTest::Infinite,
                    Some("number") => FloatTest::Number,
                    Some("notanumber") => FloatTest::NotANumber,
                    Some("normal") => FloatTest::Normal,
                    Some("subnormal") => FloatTest::Subnormal,
                    _ => return Err(unsupported()),
                };
                let d = self.dst(scope, &o[0])?;
                Op::Testp {
                    test,
                    f64: t.bytes == 8,
                    d,
                    a: self.src(scope, &o[1], t)?,
                }
            }
            "cnot" => {
                need(2)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                let a = self.src(scope, &o[1], t)?;
                Op::Setp {
                    cmp: Cmp::Eq,
                    ty: t,
                    d,
                    not_d: None,
                    a,
                    b: Src::Imm(0),
                    combine: None,
                }
            }
            "mul24" | "mad24" => {
                need(if parts[0] == "mul24" { 3 } else { 4 })?;
                let t = last_ty.filter(|t| t.bytes == 4).ok_or_else(unsupported)?;
                let d = self.dst(scope, &o[0])?;
                let (a, b) = (self.src(scope, &o[1], t)?, self.src(scope, &o[2], t)?);
                let c = if parts[0] == "mad24" {
                    self.src(scope, &o[3], t)?
                } else {
                    Src::Imm(0)
                };
                Op::Mul24 {
                    hi: has("hi"),
                    ty: t,
                    d,
                    a,
                    b,
                    c,
                }
            }
            "nanosleep" | "prefetch" | "prefetchu" | "pmevent" | "griddepcontrol" => Op::Nop,
            _ => return Err(unsupported()),
        })
    }
}
