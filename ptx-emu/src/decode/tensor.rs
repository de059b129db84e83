//! Decoding the tensor-core instructions (sm_80+): `mma.sync.aligned` in the shapes
//! `ferrocuda-std` uses, `ldmatrix` and `cp.async` with its groups.

use super::*;

impl<'a> Decoder<'a> {
    pub(super) fn tensor(&mut self, scope: &mut Scope<'a>, c: &Opcode<'a>) -> Result<Op, String> {
        match c.parts[0] {
            "mma" => self.mma(scope, c),
            "ldmatrix" => self.ldmatrix(scope, c),
            _ => self.cp_async(scope, c),
        }
    }

    /// `n` registers of a `{...}` operand.
    fn vector_srcs<const N: usize>(
        &mut self,
        scope: &Scope,
        operand: &Operand,
        what: &str,
    ) -> Result<[Src; N], String> {
        let Operand::Vector(items) = operand else {
            return Err(format!("mma's {what} must be a {{...}} of {N} registers"));
        };
        if items.len() != N {
            return Err(format!(
                "mma's {what} has {} registers where this shape has {N}",
                items.len()
            ));
        }
        let mut out = [Src::Imm(0); N];
        for (o, item) in out.iter_mut().zip(items) {
            *o = self.src(scope, item, U32)?;
        }
        Ok(out)
    }

    fn vector_dsts(
        &mut self,
        scope: &Scope,
        operand: &Operand,
        n: usize,
    ) -> Result<[Reg; 4], String> {
        let Operand::Vector(items) = operand else {
            return Err(format!("expected a {{...}} of {n} destination registers"));
        };
        if items.len() != n {
            return Err(format!(
                "{} destination registers where {n} are needed",
                items.len()
            ));
        }
        let mut d = [0; 4];
        for (k, item) in items.iter().enumerate() {
            d[k] = self.dst(scope, item)?;
        }
        Ok(d)
    }

    fn mma(&mut self, scope: &Scope, c: &Opcode<'a>) -> Result<Op, String> {
        c.need(4)?;
        if !(c.has("sync") && c.has("aligned") && c.has("row") && c.has("col")) {
            return Err(c.unsupported());
        }
        // The types after `.row.col{.satfinite}`: d, a, b, c.
        let types: Vec<&str> = c
            .parts
            .iter()
            .skip_while(|p| **p != "col")
            .skip(1)
            .filter(|p| **p != "satfinite")
            .copied()
            .collect();
        let shape = c.parts[1..].iter().find(|p| p.starts_with('m')).copied();
        let kind = match (shape, types.as_slice()) {
            (Some("m16n8k16"), ["f32", "f16", "f16", "f32"]) => MmaKind::F16,
            (Some("m16n8k16"), ["f32", "bf16", "bf16", "f32"]) => MmaKind::Bf16,
            (Some("m16n8k8"), ["f32", "tf32", "tf32", "f32"]) => MmaKind::Tf32,
            (Some("m16n8k32"), ["s32", a @ ("s8" | "u8"), b @ ("s8" | "u8"), "s32"]) => {
                MmaKind::I8 {
                    a_signed: *a == "s8",
                    b_signed: *b == "s8",
                    saturate: c.has("satfinite"),
                }
            }
            _ => return Err(c.unsupported()),
        };
        if c.has("satfinite") && !matches!(kind, MmaKind::I8 { .. }) {
            return Err(c.unsupported());
        }
        let o = c.operands;
        let d = self.vector_dsts(scope, &o[0], 4)?;
        let a = self.vector_srcs::<4>(scope, &o[1], "A")?;
        let b = self.vector_srcs::<2>(scope, &o[2], "B")?;
        let cc = self.vector_srcs::<4>(scope, &o[3], "C")?;
        Ok(Op::Mma {
            kind,
            d,
            a,
            b,
            c: cc,
        })
    }

    fn ldmatrix(&mut self, scope: &Scope, c: &Opcode<'a>) -> Result<Op, String> {
        c.need(2)?;
        if !(c.has("sync") && c.has("aligned") && c.has("m8n8") && c.has("b16")) {
            return Err(c.unsupported());
        }
        let count = if c.has("x1") {
            1
        } else if c.has("x2") {
            2
        } else if c.has("x4") {
            4
        } else {
            return Err("ldmatrix needs .x1, .x2 or .x4".into());
        };
        let space = match space_of(&c.parts) {
            Some(Space::Shared) => Space::Shared,
            None => Space::Generic,
            Some(_) => return Err("ldmatrix reads shared memory only".into()),
        };
        let d = self.vector_dsts(scope, &c.operands[0], count as usize)?;
        let addr = self.addr(scope, &c.operands[1], space)?;
        Ok(Op::Ldmatrix {
            count,
            trans: c.has("trans"),
            d,
            addr,
        })
    }

    fn cp_async(&mut self, scope: &Scope, c: &Opcode<'a>) -> Result<Op, String> {
        if c.parts.get(1) != Some(&"async") {
            return Err(c.unsupported());
        }
        match c.parts.get(2).copied() {
            Some("commit_group") => return Ok(Op::CpAsyncCommit),
            Some("wait_all") => return Ok(Op::CpAsyncWait { pending: None }),
            Some("wait_group") => {
                c.need(1)?;
                let Operand::Imm(n) = c.operands[0] else {
                    return Err("cp.async.wait_group takes an integer constant".into());
                };
                let pending = u32::try_from(n).map_err(|_| "wait_group count too large")?;
                return Ok(Op::CpAsyncWait {
                    pending: Some(pending),
                });
            }
            Some("ca" | "cg") => {}
            _ => return Err(c.unsupported()),
        }
        c.need(3)?;
        if c.parts[3..] != ["shared", "global"] {
            return Err(c.unsupported());
        }
        let Operand::Imm(bytes) = c.operands[2] else {
            return Err("cp.async's copy size must be a constant".into());
        };
        let allowed: &[u64] = if c.has("cg") { &[16] } else { &[4, 8, 16] };
        if !allowed.contains(&bytes) {
            return Err(format!(
                "cp.async.{} copies {allowed:?} bytes, not {bytes}",
                c.parts[2]
            ));
        }
        let dst = self.addr(scope, &c.operands[0], Space::Shared)?;
        let src = self.addr(scope, &c.operands[1], Space::Global)?;
        let src_size = match c.operands.get(3) {
            Some(operand) => Some(self.src(scope, operand, U32)?),
            None => None,
        };
        Ok(Op::CpAsync {
            bytes: bytes as u8,
            dst,
            src,
            src_size,
        })
    }
}
