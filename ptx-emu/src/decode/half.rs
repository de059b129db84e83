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
        let (op, operands) = match c.parts[0] {
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
        // `min.xorsign.abs` and `fma.oob` (out-of-bounds operands as zero) are not modelled.
        if c.has("xorsign") || c.has("oob") {
            return Err(c.unsupported());
        }
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
        let clamp = match (c.has("sat"), c.has("relu")) {
            (false, false) => Clamp::None,
            (true, false) => Clamp::Sat,
            (false, true) => Clamp::Relu,
            (true, true) => return Err(c.unsupported()),
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
}
