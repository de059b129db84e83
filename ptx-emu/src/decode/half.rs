//! Decoding `.f16`/`.bf16` arithmetic and its packed `.f16x2`/`.bf16x2` forms into
//! [`Op::Half`] (`setp`, `cvt`, `mov`, `ld`/`st` of 16-bit floats decode as other types do).

use super::*;

impl<'a> Decoder<'a> {
    /// `Some` when the opcode is 16-bit float arithmetic (PTX ISA, "Half Precision
    /// Floating-Point Instructions"), `None` to decode it otherwise.
    pub(super) fn half(&mut self, scope: &Scope<'a>, c: &Opcode) -> Result<Option<Op>, String> {
        let (bfloat, packed) = match c.parts.last().copied() {
            Some("f16") => (false, false),
            Some("f16x2") => (false, true),
            Some("bf16") => (true, false),
            Some("bf16x2") => (true, true),
            _ => return Ok(None),
        };
        let nan = c.has("NaN");
        // `.xorsign` and `.abs` come together (PTX ISA).
        let xorsign = match (c.has("xorsign"), c.has("abs")) {
            (false, false) => false,
            (true, true) if matches!(c.parts[0], "min" | "max") => true,
            _ => return Err(c.unsupported()),
        };
        let (op, operands) = match c.parts[0] {
            "min" if xorsign => (HalfOp::MinXorsign { nan }, 3),
            "max" if xorsign => (HalfOp::MaxXorsign { nan }, 3),
            "add" => (HalfOp::Add, 3),
            "sub" => (HalfOp::Sub, 3),
            "mul" => (HalfOp::Mul, 3),
            "fma" => (HalfOp::Fma, 4),
            "min" if nan => (HalfOp::MinNaN, 3),
            "min" => (HalfOp::Min, 3),
            "max" if nan => (HalfOp::MaxNaN, 3),
            "max" => (HalfOp::Max, 3),
            "neg" => (HalfOp::Neg, 2),
            "abs" => (HalfOp::Abs, 2),
            "ex2" if c.has("approx") => (HalfOp::Ex2, 2),
            "tanh" if c.has("approx") => (HalfOp::Tanh, 2),
            _ => return Ok(None),
        };
        c.need(operands)?;
        let t = Ty {
            kind: Kind::Unsigned,
            bytes: if packed { 4 } else { 2 },
        };
        let o = c.operands;
        let d = self.dst(scope, &o[0])?;
        let a = self.src(scope, &o[1], t)?;
        let b = match operands > 2 {
            true => self.src(scope, &o[2], t)?,
            false => Src::Imm(0),
        };
        let c3 = match operands > 3 {
            true => self.src(scope, &o[3], t)?,
            false => Src::Imm(0),
        };
        let clamp = match (c.has("sat"), c.has("relu"), c.has("oob")) {
            (false, false, false) => Clamp::None,
            (true, false, false) => Clamp::Sat,
            (false, true, false) => Clamp::Relu,
            (false, relu, true) if op == HalfOp::Fma => Clamp::Oob { relu },
            _ => return Err(c.unsupported()),
        };
        Ok(Some(Op::Half {
            op,
            bfloat,
            packed,
            round: c.round(),
            ftz: c.has("ftz"),
            clamp,
            d,
            a,
            b,
            c: c3,
        }))
    }

    /// `setp.CmpOp{.BoolOp}{.ftz}.{f16x2,bf16x2} p|q, a, b{, {!}c}` ([`Op::SetpX2`]).
    pub(super) fn setp_pair(&mut self, scope: &Scope<'a>, c: &Opcode) -> Result<Op, String> {
        c.need(3)?;
        let cmp = compare(c.parts[1]).ok_or_else(|| c.unsupported())?;
        let Operand::Pair(p, q) = &c.operands[0] else {
            return Err("setp on a packed pair writes two predicates, p|q".into());
        };
        let t = U32;
        let combine = match c.parts.iter().find_map(|p| bool_op(p)) {
            Some(op) => {
                c.need(4)?;
                let (p, negate) = self.pred_src(scope, &c.operands[3])?;
                Some((op, p, negate))
            }
            None => None,
        };
        Ok(Op::SetpX2 {
            cmp,
            bfloat: c.parts.last() == Some(&"bf16x2"),
            ftz: c.has("ftz"),
            d: self.register(scope, p)?,
            q: self.dst(scope, &Operand::Name(q.clone()))?,
            a: self.src(scope, &c.operands[1], t)?,
            b: self.src(scope, &c.operands[2], t)?,
            combine,
        })
    }
}
