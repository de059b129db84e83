//! PTX text to a syntax tree: module-scope variables and functions whose bodies are lists of
//! statements (an opcode with its dotted modifiers, a guard, operands). Written for PTX as
//! LLVM's NVPTX backend emits it (regular, one statement per `;`), plus the inline assembly our
//! kernels use (`{ .reg .pred %p; ... }` scopes). Meaning (types, registers) is the decoder's.

use crate::ParseError;

/// Most registers one `.reg` declaration may declare (ptxas allows far fewer per thread).
const MAX_REGISTERS: u64 = 1 << 16;

mod lex;
mod syntax;

pub(crate) use lex::err;
use lex::{lex, parse_number, show, Tok};
pub(crate) use syntax::{Ast, Function, Instruction, Operand, Statement, Variable};

struct Parser {
    tokens: Vec<(Tok, usize)>,
    at: usize,
}

/// Parses a whole module.
pub(crate) fn parse(text: &str) -> Result<Ast, ParseError> {
    let mut p = Parser {
        tokens: lex(text)?,
        at: 0,
    };
    let mut ast = Ast::default();
    while p.peek().is_some() {
        p.module_item(&mut ast)?;
    }
    Ok(ast)
}

fn type_bytes(ty: &str) -> Option<u32> {
    Some(match ty {
        ".b8" | ".u8" | ".s8" | ".pred" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        _ => return None,
    })
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }
    fn line(&self) -> usize {
        self.tokens
            .get(self.at)
            .or(self.tokens.last())
            .map_or(1, |(_, l)| *l)
    }
    fn next(&mut self) -> Result<Tok, ParseError> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
            .map(|(t, _)| t)
            .ok_or_else(|| err(self.line(), "unexpected end of PTX"))
    }
    fn is(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    fn eat(&mut self, c: char) -> bool {
        let found = self.is(c);
        if found {
            self.at += 1;
        }
        found
    }
    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        let line = self.line();
        match self.next()? {
            Tok::Punct(p) if p == c => Ok(()),
            other => Err(err(
                line,
                &format!("expected `{c}`, found {}", show(&other)),
            )),
        }
    }
    fn word(&mut self) -> Result<String, ParseError> {
        let line = self.line();
        match self.next()? {
            Tok::Word(w) => Ok(w),
            other => Err(err(
                line,
                &format!("expected a name, found {}", show(&other)),
            )),
        }
    }
    fn number(&mut self) -> Result<u64, ParseError> {
        let line = self.line();
        let negative = self.eat('-');
        match self.next()? {
            Tok::Number(n) => {
                let value =
                    parse_number(&n).ok_or_else(|| err(line, &format!("bad number {n}")))?;
                Ok(if negative {
                    value.wrapping_neg()
                } else {
                    value
                })
            }
            other => Err(err(
                line,
                &format!("expected a number, found {}", show(&other)),
            )),
        }
    }
    fn skip_to_semicolon(&mut self) -> Result<(), ParseError> {
        while !self.eat(';') {
            self.next()?;
        }
        Ok(())
    }

    /// Skips a directive that ends with its line, not with `;` (`.version`, `.target`, `.file`,
    /// `.loc`): the word at hand and the rest of its line, and a `;` there if one was written.
    fn skip_line_directive(&mut self) {
        let line = self.line();
        self.at += 1;
        while self.peek().is_some() && self.line() == line && !self.is(';') {
            self.at += 1;
        }
        self.eat(';');
    }

    fn module_item(&mut self, ast: &mut Ast) -> Result<(), ParseError> {
        let line = self.line();
        let mut words = Vec::new();
        while let Some(Tok::Word(w)) = self.peek() {
            let w = w.clone();
            match w.as_str() {
                ".version" | ".target" | ".address_size" | ".file" | ".loc" => {
                    self.skip_line_directive();
                    return Ok(());
                }
                ".section" => {
                    // DWARF for a debugger (`.section .debug_info { .b8 1 ... }`, Numba's
                    // debug=True): its name, then a block of data directives, all skipped.
                    self.skip_line_directive();
                    if self.eat('{') {
                        let mut depth = 1;
                        while depth > 0 {
                            match self.next()? {
                                Tok::Punct('{') => depth += 1,
                                Tok::Punct('}') => depth -= 1,
                                _ => {}
                            }
                        }
                    }
                    return Ok(());
                }
                ".entry" | ".func" => {
                    self.at += 1;
                    return self.function(ast, w == ".entry", line);
                }
                ".shared" | ".global" | ".const" => {
                    self.at += 1;
                    let variable = self.variable(&w, line)?;
                    self.expect(';')?;
                    ast.variables.push(variable);
                    return Ok(());
                }
                _ => {
                    self.at += 1;
                    words.push(w);
                }
            }
        }
        let found = self.peek().map_or("the end".into(), show);
        Err(err(
            line,
            &format!("unexpected {found} at module scope (after {words:?})"),
        ))
    }

    /// After the state space: `.align N .type name[count] = {...};`
    fn variable(&mut self, space: &str, line: usize) -> Result<Variable, ParseError> {
        let (mut align, mut element_bytes, mut pointer) = (0, 0, false);
        let name = loop {
            let w = self.word()?;
            if w == ".align" {
                // After `.ptr`, `.align` is the pointee's alignment, not the parameter's.
                let n = self.number()? as u32;
                if !pointer {
                    align = n;
                }
            } else if w == ".ptr" {
                pointer = true;
            } else if let Some(bytes) = type_bytes(&w) {
                element_bytes = bytes;
            } else if w == ".ptr" || w.starts_with(".v") {
                // .ptr (a kernel parameter attribute) and vector types are not used by us.
                if w.starts_with(".v") {
                    return Err(err(
                        line,
                        &format!("vector variable types ({w}) are not supported"),
                    ));
                }
            } else if w.starts_with('.') {
                // .visible, .extern and other linkage words carry nothing the emulator needs.
            } else {
                break w;
            }
        };
        if element_bytes == 0 {
            return Err(err(line, &format!("variable {name} has no type")));
        }
        let mut count = 1;
        if self.eat('[') {
            count = if self.is(']') {
                0
            } else {
                self.number()? as u32
            };
            self.expect(']')?;
        }
        let mut init = Vec::new();
        if self.eat('=') {
            if self.eat('{') {
                while !self.eat('}') {
                    init.push(self.number()?);
                    self.eat(',');
                }
            } else {
                init.push(self.number()?);
            }
        }
        // At most 1 GiB: shared, local and parameter offsets stay far from u32 overflow.
        let bytes = element_bytes
            .checked_mul(count)
            .filter(|&b| b <= 1 << 30)
            .ok_or_else(|| err(line, &format!("{name} is too large")))?;
        if align == 0 {
            align = element_bytes;
        }
        if !align.is_power_of_two() || align > 1 << 12 {
            return Err(err(
                line,
                &format!("{name}: alignment {align} is not a power of two"),
            ));
        }
        Ok(Variable {
            space: space.into(),
            name,
            align,
            bytes,
            element_bytes,
            init,
            line,
        })
    }

    fn param_list(&mut self, line: usize) -> Result<Vec<Variable>, ParseError> {
        let mut params = Vec::new();
        self.expect('(')?;
        while !self.eat(')') {
            let space = self.word()?;
            if space != ".param" && space != ".reg" {
                return Err(err(line, &format!("expected .param, found {space}")));
            }
            params.push(self.variable(".param", line)?);
            self.eat(',');
        }
        Ok(params)
    }

    fn function(&mut self, ast: &mut Ast, is_entry: bool, line: usize) -> Result<(), ParseError> {
        let returns = if self.is('(') {
            self.param_list(line)?
        } else {
            Vec::new()
        };
        let name = self.word()?;
        let params = if self.is('(') {
            self.param_list(line)?
        } else {
            Vec::new()
        };
        let (mut max_threads, mut max_registers) = (None, None);
        while let Some(Tok::Word(w)) = self.peek() {
            let w = w.clone();
            self.at += 1;
            if w == ".maxntid" || w == ".reqntid" {
                let mut product = 1u32;
                loop {
                    product = product.saturating_mul(self.number()? as u32);
                    if !self.eat(',') {
                        break;
                    }
                }
                max_threads = Some(product);
            } else if w == ".maxnreg" {
                let n = self.number()? as u32;
                max_registers = Some(max_registers.map_or(n, |m: u32| m.min(n)));
            } else {
                while matches!(self.peek(), Some(Tok::Number(_))) || self.is(',') {
                    self.at += 1;
                }
            }
        }
        if self.eat(';') {
            return Ok(()); // a declaration; the definition comes later
        }
        self.expect('{')?;
        let mut body = Vec::new();
        self.body(&mut body)?;
        let function = Function {
            name,
            is_entry,
            returns,
            params,
            max_threads,
            max_registers,
            body,
            line,
        };
        ast.functions.push(function);
        Ok(())
    }

    /// Statements up to the matching `}`; nested `{ }` scopes are flattened (their registers are
    /// the decoder's to scope). Nesting is counted, not recursed into, so no depth of it can
    /// overflow the stack (input decides it: 30,000 nested scopes once did).
    fn body(&mut self, body: &mut Vec<Statement>) -> Result<(), ParseError> {
        let mut depth = 0usize;
        loop {
            let line = self.line();
            if self.eat('}') {
                if depth == 0 {
                    return Ok(());
                }
                depth -= 1;
                continue;
            }
            if self.eat('{') {
                depth += 1;
                continue;
            }
            if self.eat('@') {
                let negated = self.eat('!');
                let guard = Some((self.word()?, negated));
                let mut instruction = self.instruction(line)?;
                instruction.guard = guard;
                body.push(Statement::Instruction(instruction));
                continue;
            }
            let word = self.word()?;
            if self.eat(':') {
                if self.peek() == Some(&Tok::Word(".branchtargets".into())) {
                    self.at += 1;
                    let mut labels = vec![self.word()?];
                    while self.eat(',') {
                        labels.push(self.word()?);
                    }
                    self.expect(';')?;
                    body.push(Statement::BranchTargets {
                        name: word,
                        labels,
                        line,
                    });
                } else {
                    body.push(Statement::Label(word, line));
                }
                continue;
            }
            match word.as_str() {
                ".reg" => {
                    let ty = self.word()?;
                    let mut names = Vec::new();
                    loop {
                        let name = self.word()?;
                        let count = if self.eat('<') {
                            let line = self.line();
                            let n = self.number()?;
                            if n > MAX_REGISTERS {
                                return Err(err(
                                    line,
                                    &format!("{name}<{n}>: more than {MAX_REGISTERS} registers"),
                                ));
                            }
                            let n = n as u32;
                            self.expect('>')?;
                            Some(n)
                        } else {
                            None
                        };
                        names.push((name, count));
                        if !self.eat(',') {
                            break;
                        }
                    }
                    self.expect(';')?;
                    body.push(Statement::Reg { ty, names });
                }
                ".param" | ".local" | ".shared" => {
                    let variable = self.variable(&word, line)?;
                    self.expect(';')?;
                    body.push(Statement::Var(variable));
                }
                ".pragma" => self.skip_to_semicolon()?,
                // No `;`: a `.loc` line followed by `ret;` is a `.loc`, then a `ret`.
                ".loc" | ".file" => {
                    self.at -= 1;
                    self.skip_line_directive();
                }
                _ => {
                    self.at -= 1;
                    body.push(Statement::Instruction(self.instruction(line)?));
                }
            }
        }
    }

    fn instruction(&mut self, line: usize) -> Result<Instruction, ParseError> {
        let text = self.word()?;
        if text.starts_with('.') || text.starts_with('%') {
            return Err(err(line, &format!("expected an instruction, found {text}")));
        }
        let opcode = text.split('.').map(str::to_string).collect();
        let mut operands = Vec::new();
        if text == "call" || text.starts_with("call.") {
            // call (ret), func, (args); or call func, (args);
            while !self.eat(';') {
                if self.eat('(') {
                    let mut list = Vec::new();
                    while !self.eat(')') {
                        list.push(Operand::Name(self.word()?));
                        self.eat(',');
                    }
                    operands.push(Operand::Vector(list));
                } else if self.eat(',') {
                } else {
                    operands.push(Operand::Name(self.word()?));
                }
            }
            return Ok(Instruction {
                line,
                guard: None,
                opcode,
                operands,
            });
        }
        while !self.eat(';') {
            operands.push(self.operand()?);
            if !self.eat(',') {
                self.expect(';')?;
                break;
            }
        }
        Ok(Instruction {
            line,
            guard: None,
            opcode,
            operands,
        })
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        if self.eat('[') {
            let mut base = None;
            let mut offset = 0i64;
            if let Some(Tok::Word(_)) = self.peek() {
                base = Some(self.word()?);
                // `+ n`, `+ -n` or `- n` (number() reads the sign).
                if self.eat('+') || self.is('-') {
                    offset = self.number()? as i64;
                }
            } else {
                offset = self.number()? as i64;
            }
            self.expect(']')?;
            return Ok(Operand::Address { base, offset });
        }
        if self.eat('{') {
            // A vector's elements are registers, `_` or numbers, never vectors: no recursion,
            // so nested braces cannot overflow the stack.
            let mut items = Vec::new();
            while !self.eat('}') {
                if self.is('{') || self.is('[') {
                    return Err(err(
                        self.line(),
                        "a vector operand's elements must be registers or numbers (nested `{` or `[`)",
                    ));
                }
                items.push(self.operand()?);
                self.eat(',');
            }
            return Ok(Operand::Vector(items));
        }
        if self.eat('!') {
            return Ok(Operand::Not(self.word()?));
        }
        match self.peek() {
            Some(Tok::Word(_)) => {
                let name = self.word()?;
                if self.eat('|') {
                    return Ok(Operand::Pair(name, self.word()?));
                }
                Ok(Operand::Name(name))
            }
            _ => Ok(Operand::Imm(self.number()?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_with_guards_vectors_addresses_and_scopes() {
        let ast = parse(
            ".version 6.0\n.target sm_70\n.address_size 64\n\
             .shared .align 16 .b8 tile[64];\n\
             .visible .entry k(.param .u64 .ptr .align 1 k_param_0)\n{\n\
             .reg .pred %p<2>;\n .reg .b32 %r<4>;\n\
             @!%p1 bra $L__BB0_1;\n\
             ld.shared.v4.b32 {%r0, %r1, %r2, %r3}, [%rd1+-16];\n\
             { .reg .pred %oxp_in;\n setp.ne.u32 %oxp_in, %r1, 0; }\n\
             $L__BB0_1:\n trap; exit;\n}\n",
        )
        .unwrap();
        assert_eq!(ast.variables[0].bytes, 64);
        let body = &ast.functions[0].body;
        let Statement::Instruction(bra) = &body[2] else {
            panic!("{body:?}")
        };
        assert_eq!(bra.guard, Some(("%p1".into(), true)));
        let Statement::Instruction(ld) = &body[3] else {
            panic!()
        };
        assert_eq!(ld.opcode, ["ld", "shared", "v4", "b32"]);
        assert_eq!(
            ld.operands[1],
            Operand::Address {
                base: Some("%rd1".into()),
                offset: -16
            }
        );
        assert!(matches!(&body[body.len() - 1], Statement::Instruction(i) if i.opcode == ["exit"]));
    }

    /// `.loc` and `.file` end with their line (no `;`), inside a body too: the `ret;` after a
    /// `.loc` line is an instruction (Numba's driver test PTX; it was swallowed, and the kernel
    /// ran past its end).
    #[test]
    fn line_directives_end_with_their_line() {
        let ast = parse(
            ".version 3.0
.target sm_20
.address_size 64
.file 1 \"a.cu\"
             .entry k(.param .u64 p)
{
 .reg .s32 %r<3>;
 .loc 2 6 1
 mov.u32 %r1, %tid.x;
             .loc 2 7 2
 ret;
 .pragma \"nounroll\";
}
",
        )
        .unwrap();
        let opcodes: Vec<_> = ast.functions[0]
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Instruction(i) => Some(i.opcode[0].clone()),
                _ => None,
            })
            .collect();
        assert_eq!(opcodes, ["mov", "ret"]);
    }
}
