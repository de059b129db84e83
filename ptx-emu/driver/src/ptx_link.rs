//! The JIT linker's work on text: several PTX modules made one, as `cuLinkComplete` makes one
//! image of its inputs. The emulator runs PTX, not machine code, so linking is at the PTX level:
//!
//! - one header: the highest `.version`, the first input's `.target`, `.address_size 64`;
//! - an `.extern` declaration that another input defines (`.visible` or `.weak`) is dropped, so
//!   the definition is what calls reach;
//! - of several `.weak` definitions the first is kept (as ptxas's linker does), a `.weak` one
//!   yields to a `.visible` one, and two `.visible` definitions of one name are an error;
//! - a symbol an input defines without linkage (internal to it: NVVM's string constants, helper
//!   functions) is renamed `<name>_$<input>` when another input has the same name, so the two
//!   stay apart as they would in separate compilation units.
//!
//! An `.extern` nothing defines stays a declaration: loading the module reports it, as the
//! driver reports an unresolved symbol.

use std::collections::{HashMap, HashSet};

/// `ptx` with `.maxnreg max` on every kernel (`.entry`): what ptxas does to machine code for a
/// register limit (`CU_JIT_MAX_REGISTERS`, Numba's `max_registers`), said in PTX for the
/// emulator's loader, which then reports at most `max` registers. A kernel's parameter list
/// holds no parentheses, so its `)` is the first after its `(`.
pub(crate) fn cap_registers(ptx: &str, max: u32) -> String {
    let text = strip_comments(ptx);
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text.as_str();
    while let Some(at) = rest.find(".entry") {
        let after = at + ".entry".len();
        let header = rest[after..].find('(').and_then(|open| {
            let name = rest[after..after + open].trim();
            let named = !name.is_empty() && name.bytes().all(is_ident);
            let close = rest[after + open..].find(')')?;
            named.then_some(after + open + close + 1)
        });
        let end = header.unwrap_or(after);
        out.push_str(&rest[..end]);
        if header.is_some() {
            out.push_str(&format!(" .maxnreg {max}"));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One module-scope declaration or definition of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Symbol {
    name: String,
    linkage: Linkage,
    /// Byte range of the whole statement in the input's text (comments removed): through the
    /// `;` of a declaration or the `}` closing a function's body.
    span: (usize, usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Linkage {
    Extern,
    Visible,
    Weak,
    /// `.common`: a tentative definition, merged like `.weak`.
    Common,
    Internal,
}

/// One input after reading: its text without comments and header, and its symbols.
struct Input {
    text: String,
    symbols: Vec<Symbol>,
}

/// The merged module of `inputs` (name, PTX text), or the linker's error message.
pub(crate) fn link(inputs: &[(String, String)]) -> Result<String, String> {
    if inputs.is_empty() {
        return Err("cuLinkComplete: no input was added".into());
    }
    let mut version = (0u32, 0u32);
    let mut target = None;
    let mut read = Vec::new();
    for (name, text) in inputs {
        let plain = strip_comments(text);
        let (body, header) = take_header(&plain);
        if let Some(v) = header.version {
            version = version.max(v);
        }
        if target.is_none() {
            target = header.target;
        }
        let symbols = symbols(&body).map_err(|e| format!("{name}: {e}"))?;
        read.push(Input {
            text: body,
            symbols,
        });
    }
    let plan = resolve(inputs, &read)?;
    let mut out = format!(
        ".version {}.{}\n.target {}\n.address_size 64\n\n",
        version.0.max(6),
        version.1,
        target.unwrap_or_else(|| "sm_70".into())
    );
    for (k, input) in read.iter().enumerate() {
        out += &format!("// ---- linked input {k}: {}\n", inputs[k].0);
        let mut text = input.text.clone();
        // Dropped statements, back to front so the spans stay right.
        let mut dropped: Vec<(usize, usize)> = input
            .symbols
            .iter()
            .filter(|s| plan.dropped.contains(&(k, s.span)))
            .map(|s| s.span)
            .collect();
        dropped.sort_unstable_by(|a, b| b.cmp(a));
        for (start, end) in dropped {
            text.replace_range(start..end, "");
        }
        let renames: HashMap<&str, String> = input
            .symbols
            .iter()
            .filter(|s| plan.renamed.contains(&(k, s.name.clone())))
            .map(|s| (s.name.as_str(), format!("{}_${k}", s.name)))
            .collect();
        out += &rename_identifiers(&text, &renames);
        out.push('\n');
    }
    Ok(out)
}

/// What linking does to each input's symbols.
struct Plan {
    /// (input, statement span) of declarations and definitions left out.
    dropped: HashSet<(usize, (usize, usize))>,
    /// (input, name) of internal symbols renamed apart.
    renamed: HashSet<(usize, String)>,
}

fn resolve(inputs: &[(String, String)], read: &[Input]) -> Result<Plan, String> {
    let mut dropped = HashSet::new();
    let mut renamed = HashSet::new();
    // Every external definition of each name: (input, symbol).
    let mut definitions: HashMap<&str, Vec<(usize, &Symbol)>> = HashMap::new();
    for (k, input) in read.iter().enumerate() {
        for symbol in &input.symbols {
            if matches!(
                symbol.linkage,
                Linkage::Visible | Linkage::Weak | Linkage::Common
            ) {
                definitions
                    .entry(&symbol.name)
                    .or_default()
                    .push((k, symbol));
            }
        }
    }
    for (name, defs) in &definitions {
        let strong: Vec<_> = defs
            .iter()
            .filter(|(_, s)| s.linkage == Linkage::Visible)
            .collect();
        if strong.len() > 1 {
            return Err(format!(
                "error   : Multiple definition of '{name}' in '{}', first defined in '{}'",
                inputs[strong[1].0].0, inputs[strong[0].0].0
            ));
        }
        // The one kept: the strong one, else the first weak or common one.
        let kept = strong.first().map_or(defs[0], |s| **s);
        for &(k, symbol) in defs {
            if (k, symbol.span) != (kept.0, kept.1.span) {
                dropped.insert((k, symbol.span));
            }
        }
    }
    let mut everywhere: HashMap<&str, HashSet<usize>> = HashMap::new();
    for (k, input) in read.iter().enumerate() {
        for symbol in &input.symbols {
            everywhere.entry(&symbol.name).or_default().insert(k);
        }
    }
    for (k, input) in read.iter().enumerate() {
        for symbol in &input.symbols {
            match symbol.linkage {
                // Declared here, defined in some input: the definition serves.
                Linkage::Extern if definitions.contains_key(symbol.name.as_str()) => {
                    dropped.insert((k, symbol.span));
                }
                Linkage::Internal if everywhere[symbol.name.as_str()].len() > 1 => {
                    renamed.insert((k, symbol.name.clone()));
                }
                _ => {}
            }
        }
    }
    // Two inputs declaring the same unresolved extern: one declaration is enough.
    let mut declared = HashSet::new();
    for (k, input) in read.iter().enumerate() {
        for symbol in &input.symbols {
            let unresolved = symbol.linkage == Linkage::Extern
                && !definitions.contains_key(symbol.name.as_str());
            if unresolved && !declared.insert(symbol.name.clone()) {
                dropped.insert((k, symbol.span));
            }
        }
    }
    Ok(Plan { dropped, renamed })
}

/// `text` with `//` and `/* */` comments replaced by spaces (newlines kept, so lines stay).
pub(crate) fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                out.push_str(&text[last..i]);
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                i = end;
                last = end;
            }
            (b'/', Some(b'*')) => {
                out.push_str(&text[last..i]);
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(text.len(), |n| i + 2 + n + 2);
                out.extend(
                    text[i..end]
                        .chars()
                        .map(|c| if c == '\n' { '\n' } else { ' ' }),
                );
                i = end;
                last = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[last..]);
    out
}

#[derive(Default)]
struct Header {
    version: Option<(u32, u32)>,
    target: Option<String>,
}

/// The text without its `.version`, `.target` and `.address_size` lines, and what they said.
fn take_header(text: &str) -> (String, Header) {
    let mut header = Header::default();
    let mut body = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(v) = trimmed.strip_prefix(".version") {
            let mut parts = v.trim().split('.');
            let major = parts.next().and_then(|p| p.trim().parse().ok());
            let minor = parts.next().and_then(|p| p.trim().parse().ok());
            header.version = major.zip(minor);
        } else if let Some(t) = trimmed.strip_prefix(".target") {
            header.target = Some(t.trim().trim_end_matches(';').to_string());
        } else if !trimmed.starts_with(".address_size") {
            body.push_str(line);
            continue;
        }
        body.push('\n');
    }
    (body, header)
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// The module-scope statements of `text` (no comments, no header) that declare or define a
/// symbol: functions and entries (through their body's closing brace), and variables.
fn symbols(text: &str) -> Result<Vec<Symbol>, String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // A statement starts at the first non-blank byte at module scope.
        while i < bytes.len() && (bytes[i] as char).is_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        // `.file` and `.loc` end with their line, not with `;` (debug line information; a
        // module's last statement may be a `.file`): they declare nothing.
        let rest = &text[i..];
        if [".file", ".loc"].iter().any(|d| {
            rest.strip_prefix(d)
                .is_some_and(|after| after.starts_with([' ', '\t']))
        }) {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        let start = i;
        // The statement runs to a `;` at depth 0, or to the `}` closing the first `{`.
        let mut depth = 0usize;
        let mut end = None;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.checked_sub(1).ok_or("an unmatched '}'")?;
                    if depth == 0 {
                        end = Some(i + 1);
                        i += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = Some(i + 1);
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let end = end.ok_or("a statement without its ';' or closing '}'")?;
        if let Some(symbol) = statement_symbol(&text[start..end], (start, end)) {
            found.push(symbol);
        }
    }
    Ok(found)
}

/// The symbol one module-scope statement declares or defines, if any.
fn statement_symbol(statement: &str, span: (usize, usize)) -> Option<Symbol> {
    // The part before a function's parameter list or body, or a variable's initializer.
    let head_end = statement.find(['{', '=']).unwrap_or(statement.len());
    let head = &statement[..head_end];
    let words: Vec<&str> = head.split_whitespace().collect();
    let linkage = if words.contains(&".extern") {
        Linkage::Extern
    } else if words.contains(&".visible") {
        Linkage::Visible
    } else if words.contains(&".weak") {
        Linkage::Weak
    } else if words.contains(&".common") {
        Linkage::Common
    } else {
        Linkage::Internal
    };
    let is_function = words.iter().any(|w| *w == ".func" || *w == ".entry");
    // A function without a body is a prototype, whatever its linkage: NVVM declares a
    // `.visible .func` ahead of its definition (Numba's `__exc_helper__` with debug=True). It
    // defines nothing, so it resolves like an `.extern` declaration.
    let linkage = match is_function && !statement.contains('{') {
        true => Linkage::Extern,
        false => linkage,
    };
    let is_variable = words
        .iter()
        .any(|w| matches!(*w, ".global" | ".const" | ".shared" | ".local"));
    let name = if is_function {
        // `.func (.param .b32 ret) name(...)` or `.entry name(`: the identifier before the
        // parameter list that follows the optional return list.
        let after = head
            .split_once(".func")
            .or_else(|| head.split_once(".entry"))?
            .1;
        let after = after.trim_start();
        let after = match after.strip_prefix('(') {
            Some(rest) => &rest[rest.find(')')? + 1..],
            None => after,
        };
        identifier_at(after.trim_start())
    } else if is_variable {
        // The last identifier before `[`, `=` or `;`.
        let decl = head.split(['[', ';']).next()?;
        decl.split_whitespace()
            .last()
            .filter(|w| !w.starts_with('.'))
            .and_then(identifier_at)
    } else {
        None
    }?;
    Some(Symbol {
        name,
        linkage,
        span,
    })
}

fn identifier_at(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if !bytes.first().is_some_and(|&c| is_ident_start(c)) {
        return None;
    }
    let len = bytes
        .iter()
        .take_while(|&&c| is_ident(c) || c == b'%')
        .count();
    Some(text[..len].to_string())
}

/// `text` with every whole identifier in `renames` replaced.
fn rename_identifiers(text: &str, renames: &HashMap<&str, String>) -> String {
    if renames.is_empty() {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts =
            is_ident_start(c) && (i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b'%'));
        if !starts {
            i += 1;
            continue;
        }
        let len = bytes[i..]
            .iter()
            .take_while(|&&b| is_ident(b) || b == b'%')
            .count();
        let word = &text[i..i + len];
        if let Some(new) = renames.get(word) {
            out.push_str(&text[last..i]);
            out.push_str(new);
            last = i + len;
        }
        i += len;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, text: &str) -> (String, String) {
        (name.to_string(), text.to_string())
    }

    const KERNEL: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.5\n.target sm_90\n\
        .address_size 64\n\n.extern .func  (.param .b32 func_retval0) helper\n(\n\t.param .b32 \
        helper_param_0\n)\n;\n.global .align 1 .b8 $str[4] = {104, 105, 10, 0};\n\n\
        .visible .entry kernel(\n\t.param .u64 kernel_param_0\n)\n{\n\t.reg .b32 %r<3>;\n\t\
        mov.u64 %rd1, $str;\n\tcall.uni (retval0), helper, (param0);\n\tret;\n}\n";
    const HELPER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .global .align 1 .b8 $str[3] = {111, 107, 0};\n/* a helper */\n\
        .visible .func  (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n{\n\t\
        mov.u64 %rd1, $str;\n\tret;\n}\n.weak .func tie()\n{\n\tret;\n}\n";

    #[test]
    fn externs_resolve_internal_names_stay_apart_and_the_header_is_merged() {
        let linked = link(&[input("kernel.ptx", KERNEL), input("helper.ptx", HELPER)]).unwrap();
        assert!(
            linked.starts_with(".version 8.5\n.target sm_90\n.address_size 64\n"),
            "{linked}"
        );
        assert_eq!(linked.matches(".version").count(), 1, "{linked}");
        assert!(
            !linked.contains(".extern .func"),
            "the definition replaces it:\n{linked}"
        );
        assert_eq!(linked.matches(".visible .func").count(), 1, "{linked}");
        // Both inputs had an internal `$str`: each keeps its own, renamed.
        assert!(
            linked.contains("$str_$0[4]") && linked.contains("mov.u64 %rd1, $str_$0;"),
            "{linked}"
        );
        assert!(
            linked.contains("$str_$1[3]") && linked.contains("mov.u64 %rd1, $str_$1;"),
            "{linked}"
        );
        assert!(!linked.contains("a helper"), "comments go");
    }

    #[test]
    fn weak_definitions_yield_and_two_strong_ones_are_an_error() {
        let weak_again =
            ".version 7.0\n.target sm_70\n.address_size 64\n.weak .func tie()\n{\n\tret;\n}\n";
        let linked = link(&[input("a", HELPER), input("b", weak_again)]).unwrap();
        assert_eq!(linked.matches(".weak .func tie").count(), 1, "{linked}");
        let error = link(&[input("a.ptx", HELPER), input("b.ptx", HELPER)]).unwrap_err();
        assert!(error.contains("Multiple definition of 'helper'"), "{error}");
    }

    /// Debug line directives at module scope end with their line: a trailing `.file` (as
    /// NVVM writes with lineinfo) is no unfinished statement.
    #[test]
    fn module_scope_file_and_loc_lines_need_no_semicolon() {
        let body = ".version 8.0\n.target sm_90\n.file 1 \"k.py\"\n.visible .entry k()\n{\n .loc 1 2 1\n ret;\n}\n\t.file\t2 \"/x/y.py\"\n";
        let linked = link(&[("a".into(), body.into())]).expect("links");
        assert!(linked.contains(".visible .entry k()"), "{linked}");
    }

    /// A prototype (`.visible .func f(...);`, no body) ahead of its definition, in the same
    /// input or another, is not a second definition: NVVM writes one for a function used
    /// before it is defined (Numba's `__exc_helper__` in debug builds).
    #[test]
    fn prototypes_are_declarations_not_definitions() {
        let proto = ".visible .func helper\n(\n .param .b32 a\n)\n;\n";
        let body = ".visible .func helper(.param .b32 a)\n{\n ret;\n}\n";
        let linked = link(&[
            (
                "a".into(),
                format!(".version 8.0\n.target sm_90\n{proto}{body}"),
            ),
            ("b".into(), format!(".version 8.0\n.target sm_90\n{proto}")),
        ])
        .expect("a prototype and one definition link");
        assert_eq!(linked.matches("ret;").count(), 1, "{linked}");
        assert_eq!(
            linked.matches(".visible .func helper").count(),
            1,
            "{linked}"
        );
        // Two bodies are still two strong definitions.
        let error = link(&[
            ("a".into(), body.to_string()),
            ("b".into(), format!("{proto}{body}")),
        ])
        .unwrap_err();
        assert!(
            error.contains("Multiple definition of 'helper' in 'b', first defined in 'a'"),
            "{error}"
        );
    }

    #[test]
    fn an_unresolved_extern_stays_declared_once() {
        let linked = link(&[
            input("a", KERNEL),
            input("b", KERNEL.replace("kernel", "other").as_str()),
        ]);
        let linked = linked.unwrap();
        assert_eq!(linked.matches(".extern .func").count(), 1, "{linked}");
        assert!(link(&[]).is_err());
    }

    #[test]
    fn a_register_limit_caps_every_kernel_and_nothing_else() {
        let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n\
            .visible .entry first(.param .u64 p) { .reg .b32 %r<100>; ret; }\n\
            // not a kernel: .entry fake(\n.visible .func helper() { ret; }\n\
            .visible .entry second(.param .u64 p)\n{ .reg .b64 %rd<100>; ret; }\n";
        let capped = cap_registers(ptx, 38);
        assert_eq!(capped.matches(".maxnreg 38").count(), 2, "{capped}");
        assert_eq!(capped.replace(" .maxnreg 38", ""), strip_comments(ptx));
        let (before, after) = (
            ferrocuda_ptx_emu::Module::parse(ptx).unwrap(),
            ferrocuda_ptx_emu::Module::parse(&capped).unwrap(),
        );
        for kernel in ["first", "second"] {
            assert!(before.kernel(kernel).unwrap().registers > 38, "{kernel}");
            assert_eq!(after.kernel(kernel).unwrap().registers, 38, "{kernel}");
        }
    }

    #[test]
    fn an_unbalanced_body_is_an_error_not_a_panic() {
        let error = link(&[input("bad.ptx", ".version 7.0\n.entry k() { ret;")]).unwrap_err();
        assert!(error.contains("bad.ptx"), "{error}");
        assert!(link(&[input("bad.ptx", "}")]).is_err());
    }
}
