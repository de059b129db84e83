//! Reading PTX text: its ISA version, target, and each `.entry` with its parameter sizes.
//!
//! The launch path compares a kernel's packed arguments against [`PtxEntry::param_sizes`] before
//! every launch, on the GPU and on the CPU: the guard against the host and the device disagreeing
//! about a kernel's parameters.
//!
//! [`Ptx`], the text compiled into the program, is here too: plain data below the modules and
//! backends that load it.

/// PTX text compiled into the program, usually by a build script that ran `ferrocuda-builder`:
///
/// ```ignore
/// pub static KERNELS: Ptx = Ptx::new("my-kernels", include_str!(concat!(env!("OUT_DIR"), "/my-kernels.ptx")));
/// ```
#[derive(Debug)]
pub struct Ptx {
    name: &'static str,
    source: &'static str,
}

impl Ptx {
    /// A PTX module called `name` (for messages) with the text `source`.
    pub const fn new(name: &'static str, source: &'static str) -> Self {
        Ptx { name, source }
    }

    /// The module's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX text.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Its version, target and entries.
    pub fn info(&self) -> PtxInfo {
        parse(self.source)
    }
}

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
        version_text(self.version)
    }

    /// The oldest CUDA version whose driver can JIT-compile this PTX: see [`min_cuda_for_isa`].
    pub fn min_cuda_version(&self) -> Option<(u32, u32)> {
        min_cuda_for_isa(self.version?)
    }

    /// The compute capability `.target sm_XY` asks for, e.g. `(7, 0)`.
    pub fn target_compute_capability(&self) -> Option<(u32, u32)> {
        let digits = self.target.as_deref()?.strip_prefix("sm_")?;
        let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
        let n: u32 = digits.parse().ok()?;
        Some((n / 10, n % 10))
    }
}

/// A `(major, minor)` version.
type Version = (u32, u32);

/// The first CUDA release of each PTX ISA version, from the PTX ISA's release history: a driver
/// JIT-compiles PTX of its own CUDA version's ISA and older, never newer.
const ISA_TO_CUDA: &[(Version, Version)] = &[
    ((3, 0), (4, 1)),
    ((3, 1), (5, 0)),
    ((3, 2), (5, 5)),
    ((4, 0), (6, 0)),
    ((4, 1), (6, 5)),
    ((4, 2), (7, 0)),
    ((4, 3), (7, 5)),
    ((5, 0), (8, 0)),
    ((6, 0), (9, 0)),
    ((6, 1), (9, 1)),
    ((6, 2), (9, 2)),
    ((6, 3), (10, 0)),
    ((6, 4), (10, 1)),
    ((6, 5), (10, 2)),
    ((7, 0), (11, 0)),
    ((7, 1), (11, 1)),
    ((7, 2), (11, 2)),
    ((7, 3), (11, 3)),
    ((7, 4), (11, 4)),
    ((7, 5), (11, 5)),
    ((7, 6), (11, 6)),
    ((7, 7), (11, 7)),
    ((7, 8), (11, 8)),
    ((8, 0), (12, 0)),
    ((8, 1), (12, 1)),
    ((8, 2), (12, 2)),
    ((8, 3), (12, 3)),
    ((8, 4), (12, 4)),
    ((8, 5), (12, 5)),
    ((8, 6), (12, 7)),
    ((8, 7), (12, 8)),
    ((8, 8), (12, 9)),
    ((9, 0), (13, 0)),
    ((9, 1), (13, 1)),
];

/// The oldest CUDA version (driver) that knows PTX ISA `isa`, e.g. `(6, 0)` → `(9, 0)`; `None`
/// for an ISA version this table does not know (older than 3.0, or newer than 9.1).
///
/// ```
/// use ferrocuda_host::ptx::min_cuda_for_isa;
/// assert_eq!(min_cuda_for_isa((7, 8)), Some((11, 8)));
/// assert_eq!(min_cuda_for_isa((8, 6)), Some((12, 7)));
/// assert_eq!(min_cuda_for_isa((99, 0)), None);
/// ```
pub fn min_cuda_for_isa(isa: (u32, u32)) -> Option<(u32, u32)> {
    ISA_TO_CUDA
        .iter()
        .find(|(known, _)| *known == isa)
        .map(|&(_, cuda)| cuda)
}

/// A `(major, minor)` version as text: `(12, 4)` → `"12.4"`, `None` → `"?"`.
pub fn version_text(version: Option<(u32, u32)>) -> String {
    version.map_or_else(|| "?".into(), |(major, minor)| format!("{major}.{minor}"))
}

/// The oldest CUDA version for a PTX ISA version given as text (`"7.8"` → `"11.8"`); `"?"` when
/// unknown.
pub(crate) fn min_cuda_text(isa: &str) -> String {
    let isa = isa
        .split_once('.')
        .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
    version_text(isa.and_then(min_cuda_for_isa))
}

/// Parses the declarations ferrocuda needs from PTX text.
///
/// ```
/// let info = ferrocuda_host::ptx::parse(
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
    // One pass: each search starts where the last ended (searching the whole rest for both
    // kinds at each comment was quadratic: a third of a 460 KB module's load).
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(at) = rest.find('/') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        rest = if tail.starts_with("//") {
            tail.find('\n').map_or("", |n| &tail[n..])
        } else if let Some(body) = tail.strip_prefix("/*") {
            body.find("*/").map_or("", |e| &body[e + 2..])
        } else {
            out.push('/');
            &tail[1..]
        };
    }
    out.push_str(rest);
    out
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
            let (_, after) = name.split_once('[')?;
            let (digits, _) = after.split_once(']')?;
            digits.parse::<usize>().ok()
        })
        .unwrap_or(1);
    // An array too large for any parameter saturates: it then matches no host packing, and
    // the launch reports the mismatch.
    element.saturating_mul(count)
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
    fn isa_versions_map_to_the_cuda_release_that_introduced_them() {
        // Spot checks from the PTX ISA release history, including the break in the pattern at
        // 8.6 (CUDA 12.6 kept ISA 8.5).
        let cases = [
            ((6, 0), (9, 0)),
            ((6, 3), (10, 0)),
            ((7, 0), (11, 0)),
            ((7, 8), (11, 8)),
            ((8, 0), (12, 0)),
            ((8, 5), (12, 5)),
            ((8, 6), (12, 7)),
            ((8, 8), (12, 9)),
            ((9, 0), (13, 0)),
        ];
        for (isa, cuda) in cases {
            assert_eq!(min_cuda_for_isa(isa), Some(cuda), "ISA {isa:?}");
        }
        assert_eq!(min_cuda_for_isa((6, 6)), None);
        assert_eq!(min_cuda_for_isa((2, 9)), None);
        // A newer ISA never needs an older CUDA.
        for pair in ISA_TO_CUDA.windows(2) {
            assert!(pair[0].0 < pair[1].0 && pair[0].1 < pair[1].1, "{pair:?}");
        }
        let info = parse(".version 7.8\n.target sm_90a\n");
        assert_eq!(info.min_cuda_version(), Some((11, 8)));
        assert_eq!(info.target_compute_capability(), Some((9, 0)));
        assert_eq!(version_text(info.min_cuda_version()), "11.8");
        assert_eq!(version_text(None), "?");
        assert_eq!(min_cuda_text("8.6"), "12.7");
        assert_eq!(min_cuda_text("x"), "?");
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

    #[test]
    fn comments_are_stripped_and_everything_else_kept() {
        use super::strip_comments;
        let cases = [
            ("a // b\nc", "a \nc"),
            ("a /* b */ c", "a  c"),
            ("a /*/ b */ c", "a  c"),
            ("x / y // z", "x / y "),
            ("/* a // b */ c // d /* e\nf", " c \nf"),
            ("a /* never closed", "a "),
            ("", ""),
        ];
        for (text, stripped) in cases {
            assert_eq!(strip_comments(text), stripped, "{text:?}");
        }
    }
}
