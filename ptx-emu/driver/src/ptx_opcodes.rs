//! The JIT's first check of a module's code: every instruction is one the PTX ISA has (ptxas
//! refuses "Not a name of any known instruction" at load). The interpreter defers instructions it
//! does not implement to launch time (a module whose unused kernels have one still loads), so
//! without this a typo would load on the emulator and fail to load on hardware.

/// Every instruction name of PTX ISA 8.7 (the part before the first `.`).
const INSTRUCTIONS: &[&str] = &[
    // Integer, extended-precision and bit arithmetic.
    "add",
    "sub",
    "mul",
    "mad",
    "mul24",
    "mad24",
    "sad",
    "div",
    "rem",
    "abs",
    "neg",
    "min",
    "max",
    "popc",
    "clz",
    "bfind",
    "fns",
    "brev",
    "bfe",
    "bfi",
    "bmsk",
    "szext",
    "dp4a",
    "dp2a",
    "addc",
    "subc",
    "madc",
    // Floating point.
    "testp",
    "copysign",
    "fma",
    "rcp",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "lg2",
    "ex2",
    "tanh",
    // Comparison, selection, logic and shifts.
    "set",
    "setp",
    "selp",
    "slct",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "lop3",
    "shf",
    "shl",
    "shr",
    // Data movement and conversion.
    "mov",
    "shfl",
    "prmt",
    "ld",
    "ldu",
    "st",
    "multimem",
    "prefetch",
    "prefetchu",
    "applypriority",
    "discard",
    "createpolicy",
    "isspacep",
    "cvta",
    "cvt",
    "mapa",
    "getctarank",
    "cp",
    "tensormap",
    "stmatrix",
    "ldmatrix",
    "movmatrix",
    // Textures and surfaces.
    "tex",
    "tld4",
    "txq",
    "istypep",
    "suld",
    "sust",
    "sured",
    "suq",
    // Control flow.
    "bra",
    "brx",
    "call",
    "ret",
    "exit",
    // Synchronisation and communication.
    "bar",
    "barrier",
    "membar",
    "fence",
    "atom",
    "red",
    "vote",
    "match",
    "activemask",
    "redux",
    "griddepcontrol",
    "elect",
    "mbarrier",
    "setmaxnreg",
    "clusterlaunchcontrol",
    // Matrix multiply-accumulate.
    "wmma",
    "mma",
    "wgmma",
    "tcgen05",
    // Video.
    "vadd",
    "vsub",
    "vabsdiff",
    "vmin",
    "vmax",
    "vshl",
    "vshr",
    "vmad",
    "vset",
    "vadd2",
    "vsub2",
    "vavrg2",
    "vabsdiff2",
    "vmin2",
    "vmax2",
    "vset2",
    "vadd4",
    "vsub4",
    "vavrg4",
    "vabsdiff4",
    "vmin4",
    "vmax4",
    "vset4",
    // Miscellaneous.
    "brkpt",
    "nanosleep",
    "pmevent",
    "trap",
    "stackrestore",
    "stacksave",
    "alloca",
];

/// `ptx` with comments replaced by spaces (newlines kept, so lines still count).
fn without_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            let end = after.find('\n').unwrap_or(after.len());
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").map_or(after.len(), |e| e + 2);
            out.extend(after[..end.min(after.len())].chars().filter(|&c| c == '\n'));
            rest = &after[end.min(after.len())..];
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Whether `s` is a PTX identifier (a label's name).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || "_$%".contains(c))
        && chars.all(|c| c.is_ascii_alphanumeric() || "_$".contains(c))
}

/// The error ptxas gives for a statement that starts on `line`, if its instruction is unknown.
fn check_statement(statement: &str, line: usize) -> Result<(), String> {
    let mut s = statement.trim();
    // Labels (`$L__BB0_1:`, `prototype_0 : .callprototype ...`) before the statement.
    while let Some((head, rest)) = s.split_once(':') {
        if !is_identifier(head.trim()) {
            break;
        }
        s = rest.trim_start();
    }
    // A guard predicate.
    if let Some(guarded) = s.strip_prefix('@') {
        s = guarded.trim_start_matches('!').trim_start();
        s = s
            .split_once(char::is_whitespace)
            .map_or("", |(_, rest)| rest.trim_start());
    }
    let first = s.chars().next();
    if !first.is_some_and(|c| c.is_ascii_alphabetic()) {
        return Ok(()); // a directive, an initialiser's values, or nothing
    }
    let opcode: String = s
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ';')
        .collect();
    let name = opcode.split('.').next().unwrap_or("");
    if INSTRUCTIONS.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "ptxas application ptx input, line {line}; error   : Not a name of any known \
             instruction: '{opcode}'"
        ))
    }
}

/// Checks that every instruction of `ptx` is a PTX instruction; the error is ptxas's.
pub(crate) fn check(ptx: &str) -> Result<(), String> {
    let text = without_comments(ptx);
    let mut statement = String::new();
    let mut start_line = 1;
    let mut line = 1;
    // Braces that belong to a statement: an initialiser (`= { ... }`) or vector operands.
    let mut inner_braces = 0u32;
    for c in text.chars() {
        if statement.trim().is_empty() {
            start_line = line;
        }
        match c {
            '{' if inner_braces > 0
                || !statement.trim().is_empty() && !statement.trim_start().starts_with('.') =>
            {
                inner_braces += 1;
                statement.push(c);
            }
            '{' if statement.trim_end().ends_with('=') => {
                inner_braces += 1;
                statement.push(c);
            }
            '}' if inner_braces > 0 => {
                inner_braces -= 1;
                statement.push(c);
            }
            ';' | '{' | '}' if inner_braces == 0 => {
                check_statement(&statement, start_line)?;
                statement.clear();
            }
            _ => statement.push(c),
        }
        if c == '\n' {
            line += 1;
        }
    }
    check_statement(&statement, start_line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_instructions_are_refused_with_their_line_and_known_ones_pass() {
        let ptx = ".version 6.0\n.target sm_70\n.address_size 64\n\
                   .global .align 4 .u32 table[2] = {1, 2};\n\
                   .visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<5>;\n\t.reg .pred %p<2>;\n\
                   // not_a_comment_instruction;\n\
                   \tmov.b64 %rd1, {%r1, %r2};\n$L__BB0_1:\n\t@!%p1 bra $L__BB0_1;\n\
                   \tld.global.v2.u32 {%r3, %r4}, [%rd1];\n\
                   \t{ // callseq\n\t.param .b64 param0;\n\tcall.uni f, (param0);\n\t}\n\
                   prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);\n\tret;\n}\n";
        assert_eq!(check(ptx), Ok(()));
        let broken = ptx.replace("\tret;", "\tnot_an_instruction.u32 %r1;");
        let error = check(&broken).unwrap_err();
        assert!(
            error.contains("line 19") && error.contains("'not_an_instruction.u32'"),
            "{error}"
        );
        let guarded = ptx.replace("@!%p1 bra", "@%p1 brah");
        assert!(check(&guarded).unwrap_err().contains("'brah'"));
    }
}
