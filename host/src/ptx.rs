//! Reading PTX text: its ISA version, target, and each `.entry` with its parameter sizes.
//!
//! The launch path compares a kernel's packed arguments against [`PtxEntry::param_sizes`] before
//! every launch, on the GPU and on the CPU: the guard against the host and the device disagreeing
//! about a kernel's parameters.

/// What a PTX module declares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxInfo {
    /// `.version`, e.g. `(6, 0)`.
    pub version: Option<(u32, u32)>,
    /// `.target`, e.g. `"sm_70"`.
    pub target: Option<String>,
    /// The kernels (`.entry` functions), in file order.
    pub entries: Vec<PtxEntry>,
}

/// One `.entry` (kernel) of a PTX module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxEntry {
    /// Its name.
    pub name: String,
    /// The size in bytes of each `.param`, in order.
    pub param_sizes: Vec<usize>,
}

impl PtxInfo {
    /// The entry called `name`.
    pub fn entry(&self, name: &str) -> Option<&PtxEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// `.version` as text, `"?"` when absent.
    pub fn version_string(&self) -> String {
        self.version
            .map_or_else(|| "?".into(), |(major, minor)| format!("{major}.{minor}"))
    }

    /// The compute capability `.target sm_XY` asks for, e.g. `(7, 0)`.
    pub fn target_compute_capability(&self) -> Option<(u32, u32)> {
        let digits = self.target.as_deref()?.strip_prefix("sm_")?;
        let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
        let n: u32 = digits.parse().ok()?;
        Some((n / 10, n % 10))
    }
}

/// Parses the declarations oxicuda needs from PTX text.
///
/// ```
/// let info = oxicuda_host::ptx::parse(
///     ".version 6.0\n.target sm_70\n.address_size 64\n\
///      .visible .entry k(\n .param .u64 .ptr .align 1 k_param_0,\n .param .f32 k_param_1\n)\n{ ret; }",
/// );
/// assert_eq!(info.version, Some((6, 0)));
/// assert_eq!(info.target.as_deref(), Some("sm_70"));
/// assert_eq!(info.entries[0].param_sizes, vec![8, 4]);
/// ```
pub fn parse(ptx: &str) -> PtxInfo {
    let text = strip_comments(ptx);
    let mut info = PtxInfo::default();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some(".version") => {
                info.version = words.next().and_then(|v| {
                    let (major, minor) = v.split_once('.')?;
                    Some((major.parse().ok()?, minor.parse().ok()?))
                })
            }
            Some(".target") => {
                info.target = words.next().map(|t| t.trim_end_matches(',').to_string())
            }
            _ => {}
        }
    }
    let mut rest = text.as_str();
    while let Some(at) = find_directive(rest, ".entry") {
        rest = &rest[at + ".entry".len()..];
        let name_end = rest.find(['(', '{', ';']).unwrap_or(rest.len());
        let name = rest[..name_end].trim().to_string();
        let mut param_sizes = Vec::new();
        if rest[name_end..].starts_with('(') {
            let close = rest[name_end..]
                .find(')')
                .map_or(rest.len(), |i| name_end + i);
            param_sizes = rest[name_end + 1..close]
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(param_size)
                .collect();
            rest = &rest[close..];
        }
        info.entries.push(PtxEntry { name, param_sizes });
    }
    info
}

/// Finds `directive` as a whole word.
fn find_directive(text: &str, directive: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(directive) {
        let at = from + i;
        let after = text[at + directive.len()..].chars().next();
        if after.is_some_and(char::is_whitespace) {
            return Some(at);
        }
        from = at + directive.len();
    }
    None
}

fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b..].find("*/").map_or("", |e| &rest[b + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Bytes of one `.param` declaration such as `.param .u64 .ptr .align 1 k_param_0` or
/// `.param .align 4 .b8 k_param_2[12]`.
fn param_size(decl: &str) -> usize {
    let words: Vec<&str> = decl.split_whitespace().collect();
    let element = words
        .iter()
        .filter_map(|w| scalar_type_size(w))
        .next()
        .unwrap_or(0);
    let count = words
        .last()
        .and_then(|name| {
            let open = name.find('[')?;
            name[open + 1..name.find(']')?].parse::<usize>().ok()
        })
        .unwrap_or(1);
    element * count
}

fn scalar_type_size(word: &str) -> Option<usize> {
    Some(match word {
        ".b8" | ".u8" | ".s8" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_entries_with_pointer_attributes_arrays_and_comments() {
        let ptx = r#"
//
// Generated by LLVM NVPTX Back-End
//
.version 7.8
.target sm_90
.address_size 64

.func _ZN4core9panicking5panic(.param .b64 p0) ;  // a .func is not an entry
	// .globl	first
.visible .entry first(
	.param .u64 .ptr .align 1 first_param_0,
	.param .u64 first_param_1,
	.param .align 4 .b8 first_param_2[12],   /* a by-value struct */
	.param .f64 first_param_3,
	.param .u16 first_param_4
)
{
	ret;
}
.entry second()
{ ret; }
.weak .entry third
{ ret; }
"#;
        let info = parse(ptx);
        assert_eq!(info.version, Some((7, 8)));
        assert_eq!(info.target.as_deref(), Some("sm_90"));
        assert_eq!(info.target_compute_capability(), Some((9, 0)));
        let names: Vec<&str> = info.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["first", "second", "third"]);
        assert_eq!(info.entry("first").unwrap().param_sizes, [8, 8, 12, 8, 2]);
        assert!(info.entry("second").unwrap().param_sizes.is_empty());
        assert!(info.entry("_ZN4core9panicking5panic").is_none());
    }

    #[test]
    fn missing_declarations_are_none() {
        let info = parse("garbage");
        assert_eq!(
            (info.version, info.target.clone(), info.entries.len()),
            (None, None, 0)
        );
        assert_eq!(info.version_string(), "?");
    }
}
