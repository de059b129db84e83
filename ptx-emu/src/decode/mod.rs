//! Syntax tree to [`Program`]: each kernel with the functions it calls, decoded once at module
//! load so that running is a loop over compact instructions.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::ir::*;
use crate::parse::{err, Function, Instruction, Operand, Statement, Variable};
use crate::ParseError;

mod arithmetic;
mod control;
mod half;
mod mbarrier;
mod operands;
mod spelling;
mod tensor;

use spelling::*;

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

/// Decodes the kernel `entry` with every function it reaches.
pub(crate) fn decode_kernel(
    module: &ModuleSymbols,
    entry: &Function,
) -> Result<Program, ParseError> {
    // The functions the kernel reaches, entry first.
    let mut order: Vec<&Function> = vec![entry];
    let mut seen: HashSet<&str> = HashSet::from([entry.name.as_str()]);
    let mut i = 0;
    while i < order.len() {
        for callee in callees(order[i]) {
            if is_builtin(module, callee) {
                continue;
            }
            let function = module.functions.get(callee).ok_or_else(|| {
                err(
                    order[i].line,
                    &format!("call to {callee}, which has no body in this module"),
                )
            })?;
            if seen.insert(&function.name) {
                order.push(function);
            }
        }
        i += 1;
    }
    // Those on a cycle of calls may be active more than once at a time: each gets a frame.
    let mut frames = HashMap::new();
    for function in &order[1..] {
        let on_cycle = callees(function)
            .filter(|c| !is_builtin(module, c))
            .any(|c| reaches(module, c, &function.name));
        if on_cycle {
            frames.insert(function.name.as_str(), frames.len() as u32);
        }
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
            stack_base: 0,
            frames: vec![Frame::default(); frames.len()],
            source: module.source.clone(),
        },
        shared_offsets: HashMap::new(),
        function_params: HashMap::new(),
        call_fixups: Vec::new(),
        starts: HashMap::new(),
        frame_index: frames,
    };
    d.lay_out_shared(&order);
    for (offset, param) in layout(&entry.params, 0) {
        d.program.params.push((offset, param.bytes));
        d.program.param_bytes = offset + param.bytes;
    }
    for function in &order[1..] {
        let start = d.program.frame_param_bytes;
        let params = d.frame_params(&function.params);
        let returns = d.frame_params(&function.returns);
        d.function_params.insert(&function.name, (params, returns));
        if let Some(&f) = d.frame_index.get(function.name.as_str()) {
            d.program.frames[f as usize].params[0] = (start, d.program.frame_param_bytes);
        }
    }
    for function in &order {
        d.starts.insert(&function.name, d.program.code.len() as u32);
        d.function(function)?;
    }
    for (site, name) in std::mem::take(&mut d.call_fixups) {
        d.program.calls[site].target = d.starts[name];
        d.program.calls[site].frame = d.frame_index.get(name).copied();
    }
    crate::recursion::reserve_stack(&mut d.program);
    Ok(d.program)
}

/// A function the emulator provides when the module only declares it: CUDA's `vprintf`, and
/// `__assertfail` (a failed `assert`, which traps).
pub(crate) fn is_builtin(module: &ModuleSymbols, callee: &str) -> bool {
    matches!(callee, "vprintf" | "__assertfail") && !module.functions.contains_key(callee)
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
    /// The recursive functions' indices in `program.frames`.
    frame_index: HashMap<&'a str, u32>,
}

/// One function's names while decoding it.
#[derive(Default)]
struct Scope<'a> {
    registers: HashMap<String, Reg>,
    params: HashMap<&'a str, (Space, u32)>,
    local: HashMap<&'a str, u32>,
    /// In a recursive function, its `.local` variables: each a register holding its address
    /// in the current activation's stack frame.
    frame_locals: HashMap<&'a str, Reg>,
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
        let frame = self.frame_index.get(function.name.as_str()).copied();
        let (first_register, first_param) =
            (self.program.registers, self.program.frame_param_bytes);
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
                    ".local" => match frame {
                        Some(f) => {
                            let r = self.new_register();
                            let f = &mut self.program.frames[f as usize];
                            let offset = f.local_bytes.next_multiple_of(v.align);
                            f.local_bytes = offset + v.bytes;
                            f.local_align = f.local_align.max(v.align);
                            f.locals.push((r, offset));
                            scope.frame_locals.insert(&v.name, r);
                        }
                        None => {
                            let offset = self.program.local_bytes.next_multiple_of(v.align);
                            self.program.local_bytes = offset + v.bytes;
                            scope.local.insert(&v.name, offset);
                        }
                    },
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
        if let Some(f) = frame {
            let f = &mut self.program.frames[f as usize];
            f.registers = (first_register, self.program.registers);
            f.params[1] = (first_param, self.program.frame_param_bytes);
        }
        Ok(())
    }

    fn instruction(&mut self, scope: &mut Scope<'a>, i: &'a Instruction) -> Result<Op, String> {
        let c = Opcode {
            // A cluster is one block here: its shared memory is the block's.
            parts: i
                .opcode
                .iter()
                .map(|p| match p.as_str() {
                    "shared::cta" | "shared::cluster" => "shared",
                    p => p,
                })
                .collect(),
            operands: &i.operands,
            instruction: i,
        };
        match c.parts[0] {
            "ld" | "st" | "ldu" | "atom" | "red" | "bra" | "brx" | "call" | "ret" | "exit"
            | "trap" | "brkpt" | "membar" | "fence" | "bar" | "barrier" | "shfl" | "vote"
            | "match" | "activemask" => self.control(scope, &c),
            "mbarrier" | "isspacep" => self.mbarrier(scope, &c),
            "mma" | "ldmatrix" | "cp" => self.tensor(scope, &c),
            _ => self.arithmetic(scope, &c),
        }
    }
}
