//! PTX text to tokens: names (opcodes, directives, registers, labels), numbers, punctuation,
//! each with its line; comments dropped.

use crate::ParseError;

/// A [`ParseError`] at `line` (every stage of parsing and decoding reports with it).
pub(crate) fn err(line: usize, message: &str) -> ParseError {
    ParseError {
        line,
        message: message.to_string(),
    }
}

/// One token with the line it is on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An identifier, opcode, directive (`.reg`), register (`%r1`) or label (`$L__BB0_1`).
    Word(String),
    /// An integer or a float in PTX's hex forms (`0f3F800000`, `0d...`), as written.
    Number(String),
    Punct(char),
}

pub(super) fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line) = (0, 1);
    let word_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            let start = line;
            i += 2;
            loop {
                match chars.get(i) {
                    None => return Err(err(start, "unterminated /* comment")),
                    Some('*') if chars.get(i + 1) == Some(&'/') => break,
                    Some('\n') => line += 1,
                    _ => {}
                }
                i += 1;
            }
            i += 2;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            tokens.push((Tok::Number(chars[start..i].iter().collect()), line));
        } else if word_char(c) {
            let start = i;
            loop {
                if i < chars.len() && word_char(chars[i]) {
                    i += 1;
                } else if chars.get(i) == Some(&':')
                    && chars.get(i + 1) == Some(&':')
                    && chars.get(i + 2).is_some_and(|&c| word_char(c))
                {
                    // `::` inside a modifier (`.shared::cta`, `.shared::cluster`).
                    i += 2;
                } else {
                    break;
                }
            }
            let word: String = chars[start..i].iter().collect();
            // `.reg.b16` with no space (CUDA's fp16 headers write it in inline assembly, and
            // ptxas takes it): the directive and the type, as if spaced.
            match word.strip_prefix(".reg.") {
                Some(ty) => {
                    tokens.push((Tok::Word(".reg".into()), line));
                    tokens.push((Tok::Word(format!(".{ty}")), line));
                }
                None => tokens.push((Tok::Word(word), line)),
            }
        } else if ",;:{}[]()+-@!<>=|".contains(c) {
            tokens.push((Tok::Punct(c), line));
            i += 1;
        } else if c == '"' {
            // Only in `.file` directives, which carry no meaning here.
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            i += 1;
            tokens.push((Tok::Word("\"string\"".into()), line));
        } else {
            return Err(err(line, &format!("unexpected character {c:?}")));
        }
    }
    Ok(tokens)
}

pub(super) fn show(token: &Tok) -> String {
    match token {
        Tok::Word(w) | Tok::Number(w) => format!("`{w}`"),
        Tok::Punct(c) => format!("`{c}`"),
    }
}

/// PTX integer and float literals: decimal, `0x` hex, `0b`, octal `0NN`, `0f`+8 hex digits
/// (f32 bits), `0d`+16 hex digits (f64 bits), an optional `U` suffix; decimal floats (`1.5`).
pub(super) fn parse_number(text: &str) -> Option<u64> {
    let t = text.strip_suffix('U').unwrap_or(text);
    let hex = |digits: &str, len: usize| {
        (digits.len() == len)
            .then(|| u64::from_str_radix(digits, 16).ok())
            .flatten()
    };
    if let Some(bits) = t.strip_prefix("0f").or(t.strip_prefix("0F")) {
        return hex(bits, 8);
    }
    if let Some(bits) = t.strip_prefix("0d").or(t.strip_prefix("0D")) {
        return hex(bits, 16);
    }
    if let Some(digits) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        return u64::from_str_radix(digits, 16).ok();
    }
    if let Some(digits) = t.strip_prefix("0b").or(t.strip_prefix("0B")) {
        return u64::from_str_radix(digits, 2).ok();
    }
    if t.contains('.') || t.contains('e') {
        return t.parse::<f64>().ok().map(f64::to_bits);
    }
    if t.len() > 1 && t.starts_with('0') {
        return u64::from_str_radix(&t[1..], 8).ok();
    }
    t.parse::<u64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.reg.b16 a, b;` (no space, as CUDA's fp16 headers write it) lexes as `.reg .b16`.
    #[test]
    fn a_register_directive_joined_to_its_type_is_split() {
        let words: Vec<Tok> = lex("{.reg.b16 spc, p;")
            .unwrap()
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(
            &words[1..3],
            &[Tok::Word(".reg".into()), Tok::Word(".b16".into())]
        );
    }

    #[test]
    fn literals() {
        assert_eq!(parse_number("0f3F800000"), Some(1f32.to_bits() as u64));
        assert_eq!(parse_number("0d3FF0000000000000"), Some(1f64.to_bits()));
        assert_eq!(parse_number("0x1f"), Some(31));
        assert_eq!(parse_number("017"), Some(15));
        assert_eq!(parse_number("4294967295U"), Some(u32::MAX as u64));
        assert_eq!(parse_number("0f3F80"), None);
    }
}
