//! Decoding memory, control-flow and synchronisation instructions.

use super::*;

impl<'a> Decoder<'a> {
    pub(super) fn control(&mut self, scope: &mut Scope<'a>, c: &Opcode<'a>) -> Result<Op, String> {
        let (parts, o, last_ty) = (&c.parts, c.operands, c.last_ty());
        let (has, need, unsupported) =
            (|m: &str| c.has(m), |n: usize| c.need(n), || c.unsupported());
        let i = c.instruction;
        Ok(match parts[0] {
            "ld" | "st" | "ldu" => {
                need(2)?;
                let t = last_ty.ok_or_else(unsupported)?;
                let n = if has("v4") {
                    4
                } else if has("v2") {
                    2
                } else {
                    1
                };
                let space = match space_of(parts) {
                    Some(Space::KernelParam) => Space::FrameParam, // refined by the symbol
                    Some(s) => s,
                    None => Space::Generic,
                };
                let access = Access {
                    bytes: t.bytes,
                    n,
                    signed: t.kind == Kind::Signed,
                };
                let (value, address) = if parts[0] == "st" {
                    (&o[1], &o[0])
                } else {
                    (&o[0], &o[1])
                };
                let addr = self.addr(scope, address, space)?;
                let values: Vec<&Operand> = match value {
                    Operand::Vector(items) if items.len() == n as usize => items.iter().collect(),
                    single if n == 1 => vec![single],
                    _ => return Err(format!("{} expects {n} values", i.opcode.join("."))),
                };
                if parts[0] == "st" {
                    let mut s = [Src::Imm(0); 4];
                    for (k, v) in values.iter().enumerate() {
                        s[k] = self.src(scope, v, t)?;
                    }
                    Op::St { access, s, addr }
                } else {
                    let mut d = [0; 4];
                    for (k, v) in values.iter().enumerate() {
                        d[k] = self.dst(scope, v)?;
                    }
                    Op::Ld { access, d, addr }
                }
            }
            "atom" | "red" => {
                let t = last_ty.ok_or_else(unsupported)?;
                let space = space_of(parts).unwrap_or(Space::Generic);
                let op = parts
                    .iter()
                    .find_map(|p| atom_op(p))
                    .ok_or_else(unsupported)?;
                let (d, rest) = if parts[0] == "atom" {
                    need(3)?;
                    (Some(self.dst(scope, &o[0])?), &o[1..])
                } else {
                    need(2)?;
                    (None, o)
                };
                let addr = self.addr(scope, &rest[0], space)?;
                let b = self.src(scope, &rest[1], t)?;
                let c = match rest.get(2) {
                    Some(c) => self.src(scope, c, t)?,
                    None if op == AtomOp::Cas => return Err("atom.cas needs 3 sources".into()),
                    None => Src::Imm(0),
                };
                if t.bytes < 4 && op != AtomOp::Cas {
                    return Err(unsupported());
                }
                Op::Atom {
                    op,
                    ty: t,
                    d,
                    addr,
                    b,
                    c,
                }
            }
            "bra" => {
                need(1)?;
                let Operand::Name(label) = &o[0] else {
                    return Err("bra needs a label".into());
                };
                scope
                    .branch_fixups
                    .push((self.program.code.len(), label, i.line as u32));
                Op::Bra { target: u32::MAX }
            }
            "brx" => {
                need(2)?;

                let index = self.src(scope, &o[0], U32)?;
                let Operand::Name(table) = &o[1] else {
                    return Err("brx.idx needs a table".into());
                };
                let table = *scope
                    .tables
                    .get(table.as_str())
                    .ok_or_else(|| format!("no .branchtargets {table}"))?;
                Op::BrxIdx { index, table }
            }
            "call" => self.call(scope, i)?,
            "ret" => Op::Ret,
            "exit" => Op::Exit,
            "trap" | "brkpt" => Op::Trap,
            "membar" | "fence" => Op::Nop,
            "bar" | "barrier" => {
                if has("warp") {
                    need(1)?;
                    Op::BarWarpSync {
                        mask: self.src(scope, &o[0], U32)?,
                    }
                } else if has("red") {
                    need(3)?;
                    let op = parts
                        .iter()
                        .find_map(|p| bool_op(p))
                        .filter(|op| *op != BoolOp::Xor);
                    if op.is_none() && !has("popc") {
                        return Err(unsupported());
                    }
                    let d = self.dst(scope, &o[0])?;
                    let id = self.src(scope, &o[1], U32)?;
                    let (p, negate) = self.pred_src(scope, o.last().unwrap_or(&o[2]))?;
                    Op::BarRed {
                        op,
                        d,
                        id,
                        p,
                        negate,
                    }
                } else if has("sync") || parts.len() == 1 || has("aligned") {
                    if o.len() > 1 {
                        return Err("unsupported: bar.sync with a thread count".into());
                    }
                    let id = match o.first() {
                        Some(op) => self.src(scope, op, U32)?,
                        None => Src::Imm(0),
                    };
                    Op::BarSync { id }
                } else {
                    return Err(unsupported());
                }
            }
            "shfl" => {
                need(5)?;

                let mode = match parts.get(2).copied() {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some("idx") => ShflMode::Idx,
                    _ => return Err(unsupported()),
                };
                if !has("sync") {
                    return Err("unsupported: shfl without .sync (before sm_70)".into());
                }
                let (d, p) = match &o[0] {
                    Operand::Pair(d, p) => {
                        (self.register(scope, d)?, Some(self.register(scope, p)?))
                    }
                    other => (self.dst(scope, other)?, None),
                };
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(scope, &o[1], U32)?,
                    b: self.src(scope, &o[2], U32)?,
                    c: self.src(scope, &o[3], U32)?,
                    mask: self.src(scope, &o[4], U32)?,
                }
            }
            "vote" => {
                need(3)?;
                let mode = match parts.get(2).copied() {
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    Some("uni") => VoteMode::Uni,
                    Some("ballot") => VoteMode::Ballot,
                    _ => return Err(unsupported()),
                };
                let d = self.dst(scope, &o[0])?;
                let (p, negate) = self.pred_src(scope, &o[1])?;
                let mask = self.src(scope, &o[2], U32)?;
                Op::Vote {
                    mode,
                    d,
                    p,
                    negate,
                    mask,
                }
            }
            // match.any.sync.type d, a, membermask; match.all.sync.type d[|p], a, membermask.
            "match" => {
                need(3)?;
                let mode = match parts.get(1).copied() {
                    Some("any") => MatchMode::Any,
                    Some("all") => MatchMode::All,
                    _ => return Err(unsupported()),
                };
                let t = last_ty
                    .filter(|t| t.kind != Kind::Float && matches!(t.bytes, 4 | 8))
                    .ok_or_else(unsupported)?;
                if !has("sync") {
                    return Err(unsupported());
                }
                let (d, p) = match &o[0] {
                    Operand::Pair(d, p) if mode == MatchMode::All => {
                        (self.register(scope, d)?, Some(self.register(scope, p)?))
                    }
                    other => (self.dst(scope, other)?, None),
                };
                Op::Match {
                    mode,
                    wide: t.bytes == 8,
                    d,
                    p,
                    a: self.src(scope, &o[1], t)?,
                    mask: self.src(scope, &o[2], U32)?,
                }
            }
            "activemask" => {
                need(1)?;
                Op::ActiveMask {
                    d: self.dst(scope, &o[0])?,
                }
            }
            _ => return Err(unsupported()),
        })
    }

    fn call(&mut self, scope: &Scope<'a>, i: &'a Instruction) -> Result<Op, String> {
        let mut lists = Vec::new();
        let mut callee = None;
        for operand in &i.operands {
            match operand {
                Operand::Vector(items) => lists.push(items),
                Operand::Name(n) => callee = Some(n.as_str()),
                _ => return Err("unexpected call operand".into()),
            }
        }
        let callee = callee.ok_or("call without a function")?;
        let (returns, args) = match lists.as_slice() {
            [args]
                if i.operands
                    .first()
                    .is_some_and(|o| matches!(o, Operand::Name(_))) =>
            {
                (None, Some(*args))
            }
            [returns] => (Some(*returns), None),
            [returns, args] => (Some(*returns), Some(*args)),
            [] => (None, None),
            _ => return Err("unexpected call operands".into()),
        };
        if is_builtin(self.module, callee) {
            if callee == "__assertfail" {
                // CUDA's device `assert` prints its message and traps; the trap is the fault.
                return Ok(Op::Trap);
            }
            return vprintf(scope, returns, args);
        }
        let (callee_params, callee_returns) = self
            .function_params
            .get(callee)
            .cloned()
            .ok_or_else(|| format!("call to unknown function {callee}"))?;
        let bind = |list: Option<&Vec<Operand>>,
                    slots: &[(u32, u32)]|
         -> Result<Vec<(u32, u32, u32)>, String> {
            let names = list.map_or(&[][..], |l| l.as_slice());
            if names.len() != slots.len() {
                return Err(format!(
                    "call to {callee} passes {} values for {}",
                    names.len(),
                    slots.len()
                ));
            }
            names
                .iter()
                .zip(slots)
                .map(|(name, &(callee_offset, size))| match name {
                    Operand::Name(n) => match scope.params.get(n.as_str()) {
                        Some(&(Space::FrameParam, offset)) => Ok((offset, callee_offset, size)),
                        _ => Err(format!("call argument {n} is not a .param in scope")),
                    },
                    _ => Err("call arguments must be .param names".into()),
                })
                .collect()
        };
        let site = CallSite {
            target: u32::MAX,
            args: bind(args, &callee_params)?,
            returns: bind(returns, &callee_returns)?,
            frame: None,
        };
        self.program.calls.push(site);
        let index = self.program.calls.len() - 1;
        let name = self
            .module
            .functions
            .get(callee)
            .map(|f| f.name.as_str())
            .ok_or("unknown function")?;
        self.call_fixups.push((index, name));
        Ok(Op::Call { site: index as u32 })
    }
}

/// `call (ret), vprintf, (format, args)`: two `.b64` call parameters and an optional `.b32`.
fn vprintf(
    scope: &Scope<'_>,
    returns: Option<&Vec<Operand>>,
    args: Option<&Vec<Operand>>,
) -> Result<Op, String> {
    let offset = |operand: &Operand| match operand {
        Operand::Name(n) => match scope.params.get(n.as_str()) {
            Some(&(Space::FrameParam, offset)) => Ok(offset),
            _ => Err(format!("vprintf argument {n} is not a .param in scope")),
        },
        _ => Err("vprintf arguments must be .param names".to_string()),
    };
    let (format, arguments) = match args.map(Vec::as_slice) {
        Some([format, arguments]) => (offset(format)?, offset(arguments)?),
        _ => return Err("vprintf takes two arguments (format, argument buffer)".into()),
    };
    let ret = match returns.map(Vec::as_slice) {
        None | Some([]) => None,
        Some([ret]) => Some(offset(ret)?),
        Some(_) => return Err("vprintf returns one value".into()),
    };
    Ok(Op::Vprintf {
        format,
        args: arguments,
        ret,
    })
}
