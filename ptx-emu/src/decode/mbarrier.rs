//! Decoding `mbarrier` (into [`Op::Mbarrier`], run by `mbarrier.rs`) and `isspacep`.

use super::*;

const U64: Ty = Ty {
    kind: Kind::Unsigned,
    bytes: 8,
};

impl<'a> Decoder<'a> {
    pub(super) fn mbarrier(&mut self, scope: &Scope<'a>, c: &Opcode<'a>) -> Result<Op, String> {
        let (parts, o) = (&c.parts, c.operands);
        if parts[0] == "isspacep" {
            c.need(2)?;
            // `.const` and `.param` windows are not modelled: those variables are not
            // reached through generic addresses here.
            let space = match parts.get(1) {
                Some(&"shared") => Space::Shared,
                Some(&"local") => Space::Local,
                Some(&"global") => Space::Global,
                _ => return Err(c.unsupported()),
            };
            return Ok(Op::IsSpace {
                space,
                d: self.dst(scope, &o[0])?,
                a: self.src(scope, &o[1], U64)?,
            });
        }
        let space = space_of(parts).unwrap_or(Space::Generic);
        // The transaction counts of bulk copies (`expect_tx`, `complete_tx`) are not modelled,
        // nor `.noComplete` or `pending_count`.
        if c.has("expect_tx") || c.has("noComplete") {
            return Err(c.unsupported());
        }
        let (op, d, addr, b) = match parts.get(1).copied() {
            Some("init") => {
                c.need(2)?;
                let addr = self.addr(scope, &o[0], space)?;
                (MbarrierOp::Init, None, addr, self.src(scope, &o[1], U64)?)
            }
            Some(which @ ("arrive" | "arrive_drop")) => {
                c.need(2)?;
                let d = self.dst(scope, &o[0])?;
                let addr = self.addr(scope, &o[1], space)?;
                let count = match o.get(2) {
                    Some(count) => self.src(scope, count, U64)?,
                    None => Src::Imm(1),
                };
                let drop = which == "arrive_drop";
                (MbarrierOp::Arrive { drop }, Some(d), addr, count)
            }
            Some(which @ ("test_wait" | "try_wait")) => {
                // A `try_wait`'s optional time hint (a fourth operand) changes nothing here.
                c.need(3)?;
                let op = MbarrierOp::Wait {
                    parity: c.has("parity"),
                    blocking: which == "try_wait",
                };
                let d = self.dst(scope, &o[0])?;
                let addr = self.addr(scope, &o[1], space)?;
                (op, Some(d), addr, self.src(scope, &o[2], U64)?)
            }
            _ => return Err(c.unsupported()),
        };
        Ok(Op::Mbarrier { op, d, addr, b })
    }
}
