//! An instruction's operands resolved in the decoder's scope: registers, immediates,
//! symbols (shared, local, global variables) as values, and addresses with their state space.
//! Split from `mod.rs`, which lays out a kernel's functions and dispatches each instruction;
//! the per-family decoders call these for every operand.

use super::*;

impl Decoder<'_> {
    pub(super) fn register(&self, scope: &Scope, name: &str) -> Result<Reg, String> {
        scope
            .registers
            .get(name)
            .copied()
            .ok_or_else(|| format!("{name} is not a declared register"))
    }

    /// A symbol used as a value: its address in its own space.
    pub(super) fn symbol_value(&self, scope: &Scope, name: &str) -> Option<u64> {
        if let Some(&o) = scope.shared.get(name).or(self.shared_offsets.get(name)) {
            return Some(o as u64);
        }
        if let Some(&o) = scope.local.get(name) {
            return Some(o as u64);
        }
        match self.module.symbols.get(name) {
            Some(Symbol::Global(address)) => Some(*address),
            _ => None,
        }
    }

    pub(super) fn src(&mut self, scope: &Scope, operand: &Operand, t: Ty) -> Result<Src, String> {
        match operand {
            Operand::Imm(v) => Ok(Src::Imm(v & mask(t.bytes))),
            Operand::Name(n) if n == "_" => Ok(Src::Reg(self.new_register())),
            // PTX's one predefined constant: the warp size (PTX ISA, "Predefined Identifiers").
            Operand::Name(n) if n == "WARP_SZ" && !scope.registers.contains_key("WARP_SZ") => {
                Ok(Src::Imm(32))
            }
            Operand::Name(n) => match scope
                .registers
                .get(n.as_str())
                .or(scope.frame_locals.get(n.as_str()))
            {
                Some(&r) => Ok(Src::Reg(r)),
                None => self
                    .symbol_value(scope, n)
                    .map(Src::Imm)
                    .ok_or_else(|| format!("unknown operand {n}")),
            },
            other => Err(format!("unexpected operand {other:?}")),
        }
    }

    /// `N` sources of type `t`, one from each of `operands` (which has `N`).
    pub(super) fn srcs<const N: usize>(
        &mut self,
        scope: &Scope,
        operands: &[Operand],
        t: Ty,
    ) -> Result<[Src; N], String> {
        let mut out = [Src::Imm(0); N];
        for (slot, operand) in out.iter_mut().zip(operands) {
            *slot = self.src(scope, operand, t)?;
        }
        Ok(out)
    }

    pub(super) fn dst(&mut self, scope: &Scope, operand: &Operand) -> Result<Reg, String> {
        match operand {
            Operand::Name(n) if n == "_" => Ok(self.new_register()),
            Operand::Name(n) => self.register(scope, n),
            other => Err(format!("expected a destination register, found {other:?}")),
        }
    }

    pub(super) fn addr(
        &self,
        scope: &Scope,
        operand: &Operand,
        space: Space,
    ) -> Result<Addr, String> {
        let Operand::Address { base, offset } = operand else {
            return Err(format!("expected an address, found {operand:?}"));
        };
        let Some(base) = base else {
            return Ok(Addr {
                space,
                base: None,
                offset: *offset,
            });
        };
        if let Some(&r) = scope
            .registers
            .get(base.as_str())
            .or(scope.frame_locals.get(base.as_str()))
        {
            if matches!(space, Space::KernelParam | Space::FrameParam) {
                return Err("unsupported: a parameter address in a register".into());
            }
            return Ok(Addr {
                space,
                base: Some(r),
                offset: *offset,
            });
        }
        if let Some(&(param_space, o)) = scope.params.get(base.as_str()) {
            if matches!(space, Space::KernelParam | Space::FrameParam) {
                return Ok(Addr {
                    space: param_space,
                    base: None,
                    offset: o as i64 + offset,
                });
            }
        }
        match self.symbol_value(scope, base) {
            Some(v) => Ok(Addr {
                space,
                base: None,
                offset: (v as i64).wrapping_add(*offset),
            }),
            None => Err(format!("unknown address base {base}")),
        }
    }

    pub(super) fn pred_src(
        &mut self,
        scope: &Scope,
        operand: &Operand,
    ) -> Result<(Src, bool), String> {
        let pred = Ty {
            kind: Kind::Pred,
            bytes: 1,
        };
        match operand {
            Operand::Not(n) => Ok((Src::Reg(self.register(scope, n)?), true)),
            other => Ok((self.src(scope, other, pred)?, false)),
        }
    }
}
