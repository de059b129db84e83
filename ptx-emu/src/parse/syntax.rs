//! The syntax tree the parser builds: module-scope variables and functions, whose bodies are
//! statements as written (names and numbers still text; meaning is the decoder's).

/// An operand as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    /// A register, special register or symbol name (`%r1`, `%tid.x`, `param0`, a label).
    Name(String),
    /// An integer (two's complement bits) or float bits (`0f`/`0d`), already converted.
    Imm(u64),
    /// `[base+offset]`, `[base]` or `[offset]`.
    Address { base: Option<String>, offset: i64 },
    /// `{a, b, c, d}` (vector loads and stores).
    Vector(Vec<Operand>),
    /// `!%p` (a negated predicate source).
    Not(String),
    /// `_` (a sink) is a `Name("_")`; `|`-joined pairs (`%p|%q`) become this.
    Pair(String, String),
}

/// One instruction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instruction {
    pub line: usize,
    /// `@%p` / `@!%p`: the predicate register and whether it is negated.
    pub guard: Option<(String, bool)>,
    /// The opcode and its modifiers: `["ld", "global", "b32"]`.
    pub opcode: Vec<String>,
    pub operands: Vec<Operand>,
}

/// A statement of a function body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Statement {
    Label(String, usize),
    Instruction(Instruction),
    /// `.reg .b32 %r<10>;` (count `Some(10)`) or `.reg .pred %a, %b;`.
    Reg {
        ty: String,
        names: Vec<(String, Option<u32>)>,
    },
    /// `.param`/`.local`/`.shared` inside a body: a variable of `bytes` bytes.
    Var(Variable),
    /// `$L_brx_0: .branchtargets A, B;`
    BranchTargets {
        name: String,
        labels: Vec<String>,
        line: usize,
    },
}

/// A `.param`, `.shared`, `.global` or `.local` variable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Variable {
    pub space: String,
    pub name: String,
    pub align: u32,
    /// Bytes (element size × count); 0 for an `extern` `[]` array.
    pub bytes: u32,
    pub element_bytes: u32,
    pub init: Vec<u64>,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Function {
    pub name: String,
    pub is_entry: bool,
    pub returns: Vec<Variable>,
    pub params: Vec<Variable>,
    pub max_threads: Option<u32>,
    /// `.maxnreg`: the most registers per thread (the smallest, if given twice).
    pub max_registers: Option<u32>,
    pub body: Vec<Statement>,
    pub line: usize,
}

#[derive(Debug, Default)]
pub(crate) struct Ast {
    pub variables: Vec<Variable>,
    pub functions: Vec<Function>,
}
