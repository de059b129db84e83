//! Syntax tree to [`Program`]: each kernel with the functions it calls, decoded once at module
//! load so that running is a loop over compact instructions.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::ir::*;
use crate::parse::{err, Function, Instruction, Operand, Statement, Variable};
use crate::ParseError;

/// What a module-scope symbol stands for when used as a value or address.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Symbol {
    /// A `.global`/`.const` variable's device address.
    Global(u64),
    /// A `.shared` variable (by index into the module's variables).
    Shared,
}

pub(crate) struct ModuleSymbols<'a> {
    pub symbols: HashMap<&'a str, Symbol>,
    pub shared: &'a [Variable],
    pub functions: HashMap<&'a str, &'a Function>,
    pub source: Arc<Vec<String>>,
}

fn ty(name: &str) -> Option<Ty> {
    let (kind, bits) = match name.as_bytes().first()? {
        b'b' | b'u' => (Kind::Unsigned, &name[1..]),
        b's' => (Kind::Signed, &name[1..]),
        b'f' => (Kind::Float, &name[1..]),
        b'p' if name == "pred" => {
            return Some(Ty {
                kind: Kind::Pred,
                bytes: 1,
            })
        }
        _ => return None,
    };
    let bytes = match bits {
        "8" => 1,
        "16" => 2,
        "32" => 4,
        "64" => 8,
        _ => return None,
    };
    Some(Ty { kind, bytes })
}

fn mask(bytes: u8) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    }
}

/// Decodes the kernel `entry` with every function it reaches.
pub(crate) fn decode_kernel(
    module: &ModuleSymbols,
    entry: &Function,
) -> Result<Program, ParseError> {
    // The functions the kernel reaches, entry first; a cycle marks the program recursive.
    let mut order: Vec<&Function> = vec![entry];
    let mut recursive = false;
    let mut seen: HashSet<&str> = HashSet::from([entry.name.as_str()]);
    let mut i = 0;
    while i < order.len() {
        for callee in callees(order[i]) {
            let function = module.functions.get(callee).ok_or_else(|| {
                err(
                    order[i].line,
                    &format!("call to {callee}, which has no body in this module"),
                )
            })?;
            if seen.insert(&function.name) {
                order.push(function);
            } else if callee == order[i].name || reaches(module, callee, &order[i].name) {
                recursive = true;
            }
        }
        i += 1;
    }
    let mut d = Decoder {
        module,
        program: Program {
            name: entry.name.clone(),
            code: Vec::new(),
            calls: Vec::new(),
            tables: Vec::new(),
            registers: 0,
            frame_param_bytes: 0,
            params: Vec::new(),
            param_bytes: 0,
            static_shared_bytes: 0,
            dynamic_shared_offset: 0,
            local_bytes: 0,
            recursive,
            source: module.source.clone(),
        },
        shared_offsets: HashMap::new(),
        function_params: HashMap::new(),
        call_fixups: Vec::new(),
        starts: HashMap::new(),
    };
    d.lay_out_shared(&order);
    for (offset, param) in layout(&entry.params, 0) {
        d.program.params.push((offset, param.bytes));
        d.program.param_bytes = offset + param.bytes;
    }
    for function in &order[1..] {
        let params = d.frame_params(&function.params);
        let returns = d.frame_params(&function.returns);
        d.function_params.insert(&function.name, (params, returns));
    }
    for function in &order {
        d.starts.insert(&function.name, d.program.code.len() as u32);
        d.function(function)?;
    }
    for (site, name) in std::mem::take(&mut d.call_fixups) {
        d.program.calls[site].target = d.starts[name];
    }
    Ok(d.program)
}

fn callees(function: &Function) -> impl Iterator<Item = &str> {
    function
        .body
        .iter()
        .filter_map(|statement| match statement {
            Statement::Instruction(i) if i.opcode[0] == "call" => {
                i.operands.iter().find_map(|o| match o {
                    Operand::Name(n) => Some(n.as_str()),
                    _ => None,
                })
            }
            _ => None,
        })
}

fn reaches(module: &ModuleSymbols, from: &str, to: &str) -> bool {
    let mut stack = vec![from];
    let mut seen = HashSet::new();
    while let Some(name) = stack.pop() {
        if name == to {
            return true;
        }
        if seen.insert(name) {
            if let Some(f) = module.functions.get(name) {
                stack.extend(callees(f));
            }
        }
    }
    false
}

/// Offsets for `variables` laid out from `start`, each at its alignment.
fn layout(variables: &[Variable], start: u32) -> Vec<(u32, &Variable)> {
    let mut at = start;
    variables
        .iter()
        .map(|v| {
            let offset = at.next_multiple_of(v.align);
            at = offset + v.bytes;
            (offset, v)
        })
        .collect()
}

/// (offset, size) of each parameter or return value in the frame-parameter space.
type Slots = Vec<(u32, u32)>;

struct Decoder<'a> {
    module: &'a ModuleSymbols<'a>,
    program: Program,
    shared_offsets: HashMap<&'a str, u32>,
    /// Each called function's parameter and return-value offsets in the frame-parameter space.
    function_params: HashMap<&'a str, (Slots, Slots)>,
    call_fixups: Vec<(usize, &'a str)>,
    starts: HashMap<&'a str, u32>,
}

/// One function's names while decoding it.
#[derive(Default)]
struct Scope<'a> {
    registers: HashMap<String, Reg>,
    params: HashMap<&'a str, (Space, u32)>,
    local: HashMap<&'a str, u32>,
    shared: HashMap<&'a str, u32>,
    labels: HashMap<&'a str, u32>,
    tables: HashMap<&'a str, u32>,
    branch_fixups: Vec<(usize, &'a str, u32)>,
    table_fixups: Vec<(usize, &'a [String], u32)>,
}

impl<'a> Decoder<'a> {
    fn lay_out_shared(&mut self, functions: &[&'a Function]) {
        let used: HashSet<&str> = functions
            .iter()
            .flat_map(|f| f.body.iter())
            .filter_map(|s| match s {
                Statement::Instruction(i) => Some(i),
                _ => None,
            })
            .flat_map(|i| i.operands.iter())
            .filter_map(|o| match o {
                Operand::Name(n) | Operand::Address { base: Some(n), .. } => Some(n.as_str()),
                _ => None,
            })
            .collect();
        let mut at = 0u32;
        let mut dynamic = Vec::new();
        for v in self
            .module
            .shared
            .iter()
            .filter(|v| used.contains(v.name.as_str()))
        {
            if v.bytes == 0 {
                dynamic.push(v.name.as_str());
                continue;
            }
            let offset = at.next_multiple_of(v.align);
            self.shared_offsets.insert(&v.name, offset);
            at = offset + v.bytes;
        }
        self.program.static_shared_bytes = at;
        self.program.dynamic_shared_offset = at.next_multiple_of(16);
        for name in dynamic {
            self.shared_offsets
                .insert(name, self.program.dynamic_shared_offset);
        }
    }

    fn frame_params(&mut self, params: &[Variable]) -> Vec<(u32, u32)> {
        let placed = layout(params, self.program.frame_param_bytes);
        let out: Vec<(u32, u32)> = placed.iter().map(|(o, v)| (*o, v.bytes)).collect();
        if let Some((o, v)) = placed.last() {
            self.program.frame_param_bytes = o + v.bytes;
        }
        out
    }

    fn new_register(&mut self) -> Reg {
        self.program.registers += 1;
        self.program.registers - 1
    }

    fn function(&mut self, function: &'a Function) -> Result<(), ParseError> {
        let mut scope = Scope::default();
        if function.is_entry {
            for ((offset, _), p) in self.program.params.iter().zip(&function.params) {
                scope.params.insert(&p.name, (Space::KernelParam, *offset));
            }
        } else {
            let (params, returns) = &self.function_params[function.name.as_str()];
            let declared = function
                .params
                .iter()
                .zip(params)
                .chain(function.returns.iter().zip(returns));
            for (p, (offset, _)) in declared {
                scope.params.insert(&p.name, (Space::FrameParam, *offset));
            }
        }
        for statement in &function.body {
            match statement {
                Statement::Reg { names, .. } => {
                    for (name, count) in names {
                        match count {
                            Some(n) => {
                                for k in 0..*n {
                                    let r = self.new_register();
                                    scope.registers.insert(format!("{name}{k}"), r);
                                }
                            }
                            None => {
                                if !scope.registers.contains_key(name) {
                                    let r = self.new_register();
                                    scope.registers.insert(name.clone(), r);
                                }
                            }
                        }
                    }
                }
                Statement::Var(v) => match v.space.as_str() {
                    ".param" => {
                        let offset = self.frame_params(std::slice::from_ref(v))[0].0;
                        scope.params.insert(&v.name, (Space::FrameParam, offset));
                    }
                    ".local" => {
                        let offset = self.program.local_bytes.next_multiple_of(v.align);
                        self.program.local_bytes = offset + v.bytes;
                        scope.local.insert(&v.name, offset);
                    }
                    _ => {
                        let offset = self.program.dynamic_shared_offset.next_multiple_of(v.align);
                        self.program.static_shared_bytes = offset + v.bytes;
                        self.program.dynamic_shared_offset =
                            self.program.static_shared_bytes.next_multiple_of(16);
                        scope.shared.insert(&v.name, offset);
                    }
                },
                Statement::Label(name, _) => {
                    scope.labels.insert(name, self.program.code.len() as u32);
                }
                Statement::BranchTargets { name, labels, line } => {
                    let table = self.program.tables.len();
                    self.program.tables.push(Vec::new());
                    scope.tables.insert(name, table as u32);
                    scope.table_fixups.push((table, labels, *line as u32));
                }
                Statement::Instruction(i) => {
                    let op = match self.instruction(&mut scope, i) {
                        Ok(op) => op,
                        Err(m) if m.starts_with("unsupported") => Op::Unsupported(m.into()),
                        Err(m) => return Err(err(i.line, &m)),
                    };
                    let guard = match &i.guard {
                        Some((p, negated)) => Some((
                            self.register(&scope, p).map_err(|m| err(i.line, &m))?,
                            *negated,
                        )),
                        None => None,
                    };
                    self.program.code.push(Instr {
                        guard,
                        op,
                        line: i.line as u32,
                    });
                }
            }
        }
        for (at, label, line) in std::mem::take(&mut scope.branch_fixups) {
            let target = *scope
                .labels
                .get(label)
                .ok_or_else(|| err(line as usize, &format!("no label {label}")))?;
            if let Op::Bra { target: t } = &mut self.program.code[at].op {
                *t = target;
            }
        }
        for (table, labels, line) in std::mem::take(&mut scope.table_fixups) {
            let targets = labels
                .iter()
                .map(|l| {
                    scope
                        .labels
                        .get(l.as_str())
                        .copied()
                        .ok_or_else(|| err(line as usize, &format!("no label {l}")))
                })
                .collect::<Result<Vec<u32>, ParseError>>()?;
            self.program.tables[table] = targets;
        }
        Ok(())
    }

    fn register(&self, scope: &Scope, name: &str) -> Result<Reg, String> {
        scope
            .registers
            .get(name)
            .copied()
            .ok_or_else(|| format!("{name} is not a declared register"))
    }

    /// A symbol used as a value: its address in its own space.
    fn symbol_value(&self, scope: &Scope, name: &str) -> Option<u64> {
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

    fn src(&mut self, scope: &Scope, operand: &Operand, t: Ty) -> Result<Src, String> {
        match operand {
            Operand::Imm(v) => Ok(Src::Imm(v & mask(t.bytes))),
            Operand::Name(n) if n == "_" => Ok(Src::Reg(self.new_register())),
            Operand::Name(n) => match scope.registers.get(n.as_str()) {
                Some(&r) => Ok(Src::Reg(r)),
                None => self
                    .symbol_value(scope, n)
                    .map(Src::Imm)
                    .ok_or_else(|| format!("unknown operand {n}")),
            },
            other => Err(format!("unexpected operand {other:?}")),
        }
    }

    fn dst(&mut self, scope: &Scope, operand: &Operand) -> Result<Reg, String> {
        match operand {
            Operand::Name(n) if n == "_" => Ok(self.new_register()),
            Operand::Name(n) => self.register(scope, n),
            other => Err(format!("expected a destination register, found {other:?}")),
        }
    }

    fn addr(&self, scope: &Scope, operand: &Operand, space: Space) -> Result<Addr, String> {
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
        if let Some(&r) = scope.registers.get(base.as_str()) {
            if matches!(space, Space::KernelParam | Space::FrameParam) {
                return Err("parameter addresses in registers are not supported".into());
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

    fn instruction(&mut self, scope: &mut Scope<'a>, i: &'a Instruction) -> Result<Op, String> {
        let parts: Vec<&str> = i.opcode.iter().map(String::as_str).collect();
        let has = |m: &str| parts[1..].contains(&m);
        let last_ty = parts.last().and_then(|p| ty(p));
        let o = &i.operands;
        let need = |n: usize| {
            if o.len() < n {
                Err(format!("{} needs {n} operands", i.opcode.join(".")))
            } else {
                Ok(())
            }
        };
        let round = || {
            if has("rz") || has("rzi") {
                Round::Zero
            } else if has("rm") || has("rmi") {
                Round::Down
            } else if has("rp") || has("rpi") {
                Round::Up
            } else {
                Round::Nearest
            }
        };
        let ftz = has("ftz");
        let unsupported = || format!("unsupported instruction {}", i.opcode.join("."));
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
                        if has("sat") || has("cc") || parts[0] == "addc" {
                            return Err(unsupported());
                        }
                        Op::Int { op, ty: t, d, a, b }
                    }
                }
            }
            "not" | "neg" | "abs" | "popc" | "clz" | "brev" | "sqrt" | "rcp" | "rsqrt" | "ex2"
            | "lg2" | "sin" | "cos" => {
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
                    to,
                    from,
                    round: r,
                    int_round,
                    sat: has("sat"),
                    ftz,
                    d,
                    a,
                }
            }
            "cvta" => {
                need(2)?;
                let to = has("to");
                let space = space_of(&parts).ok_or_else(unsupported)?;
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
                let t = last_ty.ok_or_else(unsupported)?;
                let u32t = Ty {
                    kind: Kind::Unsigned,
                    bytes: 4,
                };
                let d = self.dst(scope, &o[0])?;
                if parts[0] == "bfe" {
                    need(4)?;
                    Op::Bfe {
                        ty: t,
                        d,
                        a: self.src(scope, &o[1], t)?,
                        pos: self.src(scope, &o[2], u32t)?,
                        len: self.src(scope, &o[3], u32t)?,
                    }
                } else {
                    need(5)?;
                    Op::Bfi {
                        ty: t,
                        d,
                        a: self.src(scope, &o[1], t)?,
                        b: self.src(scope, &o[2], t)?,
                        pos: self.src(scope, &o[3], u32t)?,
                        len: self.src(scope, &o[4], u32t)?,
                    }
                }
            }
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
                let space = match space_of(&parts) {
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
                let space = space_of(&parts).unwrap_or(Space::Generic);
                let op = parts
                    .iter()
                    .find_map(|p| atom_op(p))
                    .ok_or_else(unsupported)?;
                let (d, rest) = if parts[0] == "atom" {
                    need(3)?;
                    (Some(self.dst(scope, &o[0])?), &o[1..])
                } else {
                    need(2)?;
                    (None, &o[..])
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
                let u32t = Ty {
                    kind: Kind::Unsigned,
                    bytes: 4,
                };
                let index = self.src(scope, &o[0], u32t)?;
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
                let u32t = Ty {
                    kind: Kind::Unsigned,
                    bytes: 4,
                };
                if has("warp") {
                    need(1)?;
                    Op::BarWarpSync {
                        mask: self.src(scope, &o[0], u32t)?,
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
                    let id = self.src(scope, &o[1], u32t)?;
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
                        return Err("bar.sync with a thread count is not supported".into());
                    }
                    let id = match o.first() {
                        Some(op) => self.src(scope, op, u32t)?,
                        None => Src::Imm(0),
                    };
                    Op::BarSync { id }
                } else {
                    return Err(unsupported());
                }
            }
            "shfl" => {
                need(5)?;
                let u32t = Ty {
                    kind: Kind::Unsigned,
                    bytes: 4,
                };
                let mode = match parts.get(2).copied() {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some("idx") => ShflMode::Idx,
                    _ => return Err(unsupported()),
                };
                if !has("sync") {
                    return Err("shfl without .sync is not supported (sm_70+)".into());
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
                    a: self.src(scope, &o[1], u32t)?,
                    b: self.src(scope, &o[2], u32t)?,
                    c: self.src(scope, &o[3], u32t)?,
                    mask: self.src(scope, &o[4], u32t)?,
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
                let mask = self.src(
                    scope,
                    &o[2],
                    Ty {
                        kind: Kind::Unsigned,
                        bytes: 4,
                    },
                )?;
                Op::Vote {
                    mode,
                    d,
                    p,
                    negate,
                    mask,
                }
            }
            _ => return Err(unsupported()),
        })
    }

    fn pred_src(&mut self, scope: &Scope, operand: &Operand) -> Result<(Src, bool), String> {
        let pred = Ty {
            kind: Kind::Pred,
            bytes: 1,
        };
        match operand {
            Operand::Not(n) => Ok((Src::Reg(self.register(scope, n)?), true)),
            other => Ok((self.src(scope, other, pred)?, false)),
        }
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

/// A `mov` between a `t` register and `count` pieces: how many and their bits.
fn pieces(t: Ty, count: usize) -> Result<(u8, u8), String> {
    let bits = t.bytes as usize * 8 / count.max(1);
    if !(count == 2 || count == 4) || bits < 8 {
        return Err(format!("mov of {count} pieces into {} bits", t.bytes * 8));
    }
    Ok((count as u8, bits as u8))
}

fn space_of(parts: &[&str]) -> Option<Space> {
    parts[1..].iter().find_map(|p| match *p {
        "global" => Some(Space::Global),
        "shared" => Some(Space::Shared),
        "local" => Some(Space::Local),
        "param" => Some(Space::KernelParam),
        "const" => Some(Space::Global),
        _ => None,
    })
}

fn compare(name: &str) -> Option<Cmp> {
    Some(match name {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" | "lo" => Cmp::Lt,
        "le" | "ls" => Cmp::Le,
        "gt" | "hi" => Cmp::Gt,
        "ge" | "hs" => Cmp::Ge,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

fn bool_op(name: &str) -> Option<BoolOp> {
    Some(match name {
        "and" => BoolOp::And,
        "or" => BoolOp::Or,
        "xor" => BoolOp::Xor,
        _ => return None,
    })
}

fn atom_op(name: &str) -> Option<AtomOp> {
    Some(match name {
        "add" => AtomOp::Add,
        "min" => AtomOp::Min,
        "max" => AtomOp::Max,
        "exch" => AtomOp::Exch,
        "cas" => AtomOp::Cas,
        "and" => AtomOp::And,
        "or" => AtomOp::Or,
        "xor" => AtomOp::Xor,
        "inc" => AtomOp::Inc,
        "dec" => AtomOp::Dec,
        _ => return None,
    })
}

fn special(name: &str) -> Option<Special> {
    let axis = |s: &str| match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    let (base, field) = name
        .split_once('.')
        .map_or((name, None), |(b, f)| (b, Some(f)));
    Some(match (base, field) {
        ("%tid", Some(f)) => Special::Tid(axis(f)?),
        ("%ntid", Some(f)) => Special::Ntid(axis(f)?),
        ("%ctaid", Some(f)) => Special::Ctaid(axis(f)?),
        ("%nctaid", Some(f)) => Special::Nctaid(axis(f)?),
        ("%laneid", None) => Special::LaneId,
        ("%warpid", None) => Special::WarpId,
        ("%nwarpid", None) => Special::NWarpId,
        ("%dynamic_smem_size", None) => Special::DynamicSmem,
        ("%total_smem_size", None) => Special::TotalSmem,
        ("%lanemask_eq", None) => Special::LaneMaskEq,
        ("%lanemask_lt", None) => Special::LaneMaskLt,
        ("%lanemask_le", None) => Special::LaneMaskLe,
        ("%lanemask_gt", None) => Special::LaneMaskGt,
        ("%lanemask_ge", None) => Special::LaneMaskGe,
        ("%clock", None) => Special::Clock,
        ("%clock64", None) => Special::Clock64,
        ("%globaltimer", None) => Special::GlobalTimer,
        ("%smid", None) => Special::SmId,
        ("%gridid" | "%nsmid", None) => Special::Zero,
        _ => return None,
    })
}
