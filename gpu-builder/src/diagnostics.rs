//! rustc's diagnostics from the nested build, sorted so each error is printed once.
//!
//! The outer cargo compiles the kernel crate for the host and prints its errors itself. The PTX
//! build sees the same errors, plus some of its own (code under `cfg(target_arch = "nvptx64")`,
//! std's float methods, which `core` lacks). So a failed PTX build is followed by a host-target
//! `cargo check` of the kernel crate, and only the errors the host does not report are shown.

use std::collections::HashSet;
use std::path::Path;

/// One error rustc reported (`compiler-message` in cargo's JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diagnostic {
    /// `error`, `warning`, ...
    pub level: String,
    /// The one-line message, e.g. ``no method named `exp` found for type `f32` in the current scope``.
    pub message: String,
    /// `E0599`, if any.
    pub code: Option<String>,
    /// The primary span: file, line, column.
    pub primary: Option<(String, u64, u64)>,
    /// rustc's rendering, as it would print it.
    pub rendered: String,
}

/// What makes two reports the same error: level, message, code and primary span.
type Key<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a (String, u64, u64)>,
);

impl Diagnostic {
    /// This report's [`Key`].
    fn key(&self) -> Key<'_> {
        (
            &self.level,
            &self.message,
            self.code.as_deref(),
            self.primary.as_ref(),
        )
    }

    /// An error, not a summary such as "aborting due to 2 previous errors".
    pub fn is_error(&self) -> bool {
        self.level.starts_with("error")
            && !(self.primary.is_none() && self.message.starts_with("aborting due to"))
    }
}

/// Every `compiler-message` in cargo's JSON output (other lines are skipped), in order.
pub(crate) fn parse_messages(json_lines: &str) -> Vec<Diagnostic> {
    json_lines
        .lines()
        .filter(|l| l.contains("\"compiler-message\""))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-message")
        .filter_map(|v| {
            let m = &v["message"];
            let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
            let primary = m["spans"].as_array().and_then(|spans| {
                let s = spans.iter().find(|s| s["is_primary"] == true)?;
                Some((
                    text(&s["file_name"])?,
                    s["line_start"].as_u64()?,
                    s["column_start"].as_u64()?,
                ))
            });
            Some(Diagnostic {
                level: text(&m["level"])?,
                message: text(&m["message"])?,
                code: text(&m["code"]["code"]),
                primary,
                rendered: text(&m["rendered"]).unwrap_or_default(),
            })
        })
        .collect()
}

/// The errors of the PTX build the host check did not report (each once), and how many of the
/// PTX build's errors the host reports too.
pub(crate) fn gpu_only<'a>(
    ptx: &'a [Diagnostic],
    host: &[Diagnostic],
) -> (Vec<&'a Diagnostic>, usize) {
    let host_keys: HashSet<_> = host
        .iter()
        .filter(|d| d.is_error())
        .map(Diagnostic::key)
        .collect();
    let mut seen = HashSet::new();
    let mut only = Vec::new();
    let mut shared = 0;
    for d in ptx.iter().filter(|d| d.is_error()) {
        if !seen.insert(d.key()) {
            continue;
        }
        if host_keys.contains(&d.key()) {
            shared += 1;
        } else {
            only.push(d);
        }
    }
    (only, shared)
}

/// rustc's rendering of `d`, where it is "no method named `exp` found for type `f32`" with the
/// misleading suggestion (`use compiler_builtins::float::traits::Float`, a similarly named
/// method) replaced by what to call instead.
pub(crate) fn render_with_hint(d: &Diagnostic, kernel_dir: &Path) -> String {
    let Some(note) = float_method_note(&d.message).or_else(|| duplicate_kernel_note(d, kernel_dir))
    else {
        return d.rendered.clone();
    };
    // Keep the header and the primary snippet up to its `^^^` line; rustc's help follows.
    let mut kept = Vec::new();
    let mut gutter = String::from("  ");
    for line in d.rendered.lines() {
        kept.push(line);
        if let Some(bar) = line.find('|') {
            if line[bar..].contains('^') {
                gutter = " ".repeat(bar);
                break;
            }
        }
    }
    format!("{}\n{gutter}|\n{gutter}= note: {note}\n", kept.join("\n"))
}

/// For rustc's "symbol `X` is already defined" (two kernels named `X` in different modules:
/// PTX entries share one namespace per crate, and rustc names only the second), every
/// `#[kernel]` function named `X` in the kernel crate's `src/`, and the fix.
fn duplicate_kernel_note(d: &Diagnostic, kernel_dir: &Path) -> Option<String> {
    let name = d
        .message
        .strip_prefix("symbol `")?
        .strip_suffix("` is already defined")?;
    let found = kernel_locations(kernel_dir, name);
    let places = match found.as_slice() {
        [] => String::new(),
        places => format!(" `{name}` is a kernel at {}.", places.join(" and ")),
    };
    Some(format!(
        "a kernel's PTX entry is named after its function, and PTX entries share one namespace \
         per kernel crate (modules do not separate them).{places} Give all but one another \
         entry name with `#[kernel(name = \"<module>_{name}\")]` (each is still launched by its \
         path, `module::{name}`), or rename the functions"
    ))
}

/// `file:line` (relative to the crate) of each `#[kernel]` function named `name` in the kernel
/// crate's `src/`, sorted.
pub(crate) fn kernel_locations(kernel_dir: &Path, name: &str) -> Vec<String> {
    let mut found = Vec::new();
    kernel_definitions(&kernel_dir.join("src"), name, kernel_dir, &mut found);
    found.sort();
    found
}

/// Appends `file:line` (relative to `root`) of each function named `name` under `dir` that a
/// `#[kernel]` attribute in the lines just above marks.
fn kernel_definitions(dir: &Path, name: &str, root: &Path, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            kernel_definitions(&path, name, root, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let defines = |line: &str| {
            line.split_once("fn ").is_some_and(|(before, after)| {
                !before.contains("//")
                    && after.strip_prefix(name).is_some_and(|rest| {
                        rest.trim_start().starts_with('(') || rest.trim_start().starts_with('<')
                    })
            })
        };
        for (i, line) in lines.iter().enumerate() {
            let marked = lines[i.saturating_sub(8)..i]
                .iter()
                .any(|l| l.trim_start().starts_with("#[") && l.contains("kernel"));
            if defines(line) && marked {
                let shown = path.strip_prefix(root).unwrap_or(&path);
                found.push(format!("{}:{}", shown.display(), i + 1));
            }
        }
    }
}

/// The std float methods that `ferrocuda_std::math::DeviceMath` also has, under the same name,
/// for `f32` and `f64`.
const FLOAT_TRAIT_METHODS: &[&str] = &[
    "exp", "exp2", "ln", "log2", "sqrt", "sin", "cos", "sin_cos", "powf",
];

/// What ferrocuda_std::math offers for a float method of std, by std's name: the call to write
/// (for `f32` and `f64` alike).
const STD_MATH: &[(&str, &str)] = &[
    ("exp", "ferrocuda_std::math::exp(x)"),
    ("exp2", "ferrocuda_std::math::exp2(x)"),
    ("ln", "ferrocuda_std::math::ln(x)"),
    ("log2", "ferrocuda_std::math::log2(x)"),
    ("sqrt", "ferrocuda_std::math::sqrt(x)"),
    ("mul_add", "ferrocuda_std::math::fma(x, a, b)"),
    ("sin", "ferrocuda_std::math::sin(x)"),
    ("cos", "ferrocuda_std::math::cos(x)"),
    ("sin_cos", "ferrocuda_std::math::sin_cos(x)"),
    ("powf", "ferrocuda_std::math::pow(x, y)"),
];

/// Float methods `core` has only behind the nightly feature `core_float_math`, as free
/// functions in `core::f32::math` / `core::f64::math`; they lower to PTX instructions.
const CORE_FLOAT_MATH: &[&str] = &[
    "floor",
    "ceil",
    "round",
    "round_ties_even",
    "trunc",
    "fract",
    "div_euclid",
    "rem_euclid",
    "powi",
];

/// The rest of std's float methods, which nothing provides on the GPU yet.
const STD_ONLY: &[&str] = &[
    "exp_m1", "ln_1p", "log", "log10", "cbrt", "tan", "asin", "acos", "atan", "atan2", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "hypot", "abs_sub", "gamma", "ln_gamma",
];

/// The note for "no method named `m` found for type `f32`/`f64`", if `m` is one of std's float
/// methods.
fn float_method_note(message: &str) -> Option<String> {
    let rest = message.strip_prefix("no method named `")?;
    let (method, rest) = rest.split_once('`')?;
    let ty = ["f32", "f64"]
        .into_iter()
        .find(|ty| rest.starts_with(&format!(" found for type `{ty}`")))?;
    let known = STD_MATH.iter().any(|(m, _)| *m == method)
        || CORE_FLOAT_MATH.contains(&method)
        || STD_ONLY.contains(&method);
    if !known {
        return None;
    }
    let why =
        format!("`{ty}::{method}` is a method of std, and kernels have only `core` on the GPU");
    let advice = match STD_MATH.iter().find(|(m, _)| *m == method) {
        _ if CORE_FLOAT_MATH.contains(&method) => format!(
            "call `core::{ty}::math::{method}(x)` (nightly feature `core_float_math`, \
             enabled under `cfg(target_arch = \"nvptx64\")`)"
        ),
        Some((_, call)) if FLOAT_TRAIT_METHODS.contains(&method) => format!(
            "call `{call}` (the same result on the GPU and the CPU executor), or keep the method \
             syntax with `use ferrocuda_std::prelude::*;` (its `math::DeviceMath` trait)"
        ),
        Some((_, call)) => {
            format!("call `{call}` (the same result on the GPU and the CPU executor)")
        }
        _ => format!(
            "ferrocuda_std::math does not provide `{method}` yet: write it from the functions it \
             has (exp, exp2, ln, log2, sqrt, fma, sin, cos, pow, erfc)"
        ),
    };
    Some(format!("{why}: {advice}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP_F32: &str = r#"{"reason":"compiler-message","package_id":"path+file:///k#k@0.1.0","message":{"rendered":"error[E0599]: no method named `exp` found for type `f32` in the current scope\n  --> src/lib.rs:8:37\n   |\n 8 | pub fn f(x: f32) -> f32 { x.exp() }\n   |                             ^^^ method not found in `f32`\n   |\n  ::: /rustlib/compiler-builtins/src/float/traits.rs:79:8\n   |\n79 |     fn exp(self) -> Self::ExpInt;\n   |        --- the method is available for `f32` here\n   |\nhelp: trait `Float` which provides `exp` is implemented but not in scope; perhaps you want to import it\n   |\n 3 + use compiler_builtins::float::traits::Float;\n   |\n\n","level":"error","message":"no method named `exp` found for type `f32` in the current scope","code":{"code":"E0599","explanation":"..."},"spans":[{"file_name":"src/lib.rs","line_start":8,"column_start":37,"is_primary":true},{"file_name":"/rustlib/traits.rs","line_start":79,"column_start":8,"is_primary":false}],"children":[]}}"#;
    const MISMATCH: &str = r#"{"reason":"compiler-message","package_id":"path+file:///k#k@0.1.0","message":{"rendered":"error[E0308]: mismatched types\n","level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/lib.rs","line_start":9,"column_start":21,"is_primary":true}],"children":[]}}"#;
    const ABORTING: &str = r#"{"reason":"compiler-message","package_id":"path+file:///k#k@0.1.0","message":{"rendered":"error: aborting due to 2 previous errors\n","level":"error","message":"aborting due to 2 previous errors","code":null,"spans":[],"children":[]}}"#;
    const NOTE: &str = r#"{"reason":"compiler-message","package_id":"path+file:///k#k@0.1.0","message":{"rendered":"Some errors have detailed explanations: E0308, E0599.\n","level":"failure-note","message":"Some errors have detailed explanations: E0308, E0599.","code":null,"spans":[],"children":[]}}"#;

    #[test]
    fn parses_errors_and_drops_summaries() {
        let json = [
            EXP_F32,
            "not json",
            MISMATCH,
            ABORTING,
            NOTE,
            r#"{"reason":"build-finished","success":false}"#,
        ]
        .join("\n");
        let all = parse_messages(&json);
        assert_eq!(all.len(), 4);
        let errors: Vec<_> = all.iter().filter(|d| d.is_error()).collect();
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].code.as_deref(), Some("E0599"));
        assert_eq!(errors[0].primary, Some(("src/lib.rs".into(), 8, 37)));
        assert_eq!(errors[1].message, "mismatched types");
    }

    #[test]
    fn keeps_only_the_errors_the_host_does_not_report() {
        let ptx = parse_messages(&[EXP_F32, MISMATCH, MISMATCH, ABORTING].join("\n"));
        let host = parse_messages(&[MISMATCH, ABORTING].join("\n"));
        let (only, shared) = gpu_only(&ptx, &host);
        assert_eq!(shared, 1);
        assert_eq!(only.len(), 1);
        assert!(only[0].message.contains("`exp`"));
        let (only, shared) = gpu_only(&ptx, &[]);
        assert_eq!((only.len(), shared), (2, 0));
    }

    #[test]
    fn float_methods_get_a_ferrocuda_std_note_instead_of_rustcs_help() {
        let d = &parse_messages(EXP_F32)[0];
        let text = render_with_hint(d, Path::new("/nonexistent"));
        assert!(text.contains("^^^ method not found in `f32`"), "{text}");
        assert!(!text.contains("compiler_builtins"), "{text}");
        assert!(
            text.contains("   = note: `f32::exp` is a method of std"),
            "{text}"
        );
        assert!(text.contains("`ferrocuda_std::math::exp(x)`"), "{text}");
        assert!(text.contains("use ferrocuda_std::prelude::*;"), "{text}");

        let note = |m: &str| float_method_note(m).unwrap_or_default();
        let msg = |m: &str, ty: &str| {
            format!("no method named `{m}` found for type `{ty}` in the current scope")
        };
        assert!(note(&msg("tanh", "f32")).contains("does not provide `tanh` yet"));
        assert!(note(&msg("powf", "f32")).contains("math::pow(x, y)"));
        assert!(note(&msg("sin", "f32")).contains("math::sin(x)"));
        assert!(note(&msg("sin", "f64")).contains("math::sin(x)"));
        assert!(note(&msg("ln", "f64")).contains("prelude"));
        assert!(note(&msg("tanh", "f64")).contains("does not provide `tanh` yet"));
        assert!(note(&msg("floor", "f64")).contains("core::f64::math::floor"));
        assert!(note(&msg("mul_add", "f32")).contains("math::fma("));
        assert_eq!(float_method_note(&msg("frobnicate", "f32")), None);
        assert_eq!(float_method_note(&msg("exp", "u32")), None);
        assert_eq!(float_method_note("mismatched types"), None);

        // Other errors are left as rustc rendered them.
        let other = &parse_messages(MISMATCH)[0];
        assert_eq!(
            render_with_hint(other, Path::new("/nonexistent")),
            other.rendered
        );
    }

    /// Two kernels of one name in two modules: rustc names only the second definition; the
    /// note names both, with the fix.
    #[test]
    fn a_duplicate_kernel_symbol_names_every_definition_and_the_fix() {
        let dir = std::env::temp_dir().join(format!("ferrocuda-dup-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src/stats")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "mod stats;\nuse ferrocuda_std::kernel;\n\n#[kernel]\npub fn mean_kernel(x: &[f32]) {}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/stats/mod.rs"),
            "/// Means.\n#[kernel(same_len(x, out))]\npub fn mean_kernel(x: &[f32], out: Out<f32>) {}\n\
             // fn mean_kernel() in a comment\nfn mean_kernel_helper() {}\n",
        )
        .unwrap();
        let d = Diagnostic {
            level: "error".into(),
            message: "symbol `mean_kernel` is already defined".into(),
            code: None,
            primary: Some(("src/stats/mod.rs".into(), 3, 1)),
            rendered: "error: symbol `mean_kernel` is already defined\n --> src/stats/mod.rs:3:1\n  |\n3 | pub fn mean_kernel(x: &[f32], out: Out<f32>) {}\n  | ^^^^^^^^^^^^\n".into(),
        };
        let text = render_with_hint(&d, &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            text.contains("`mean_kernel` is a kernel at src/lib.rs:5 and src/stats/mod.rs:3."),
            "{text}"
        );
        assert!(
            text.contains("#[kernel(name = \"<module>_mean_kernel\")]"),
            "{text}"
        );
    }

    /// The functions the notes name must exist in ferrocuda-std (checked where its source is at
    /// hand, i.e. in the workspace, not in a packaged ferrocuda-builder).
    #[test]
    fn the_functions_and_float_methods_named_exist_in_ferrocuda_std() {
        let source = |file: &str| {
            let path = format!("{}/../gpu-std/src/{file}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(&path).map_err(|_| eprintln!("skipped: {path} not found"))
        };
        let (Ok(math), Ok(float)) = (source("math/functions.rs"), source("math/device_math.rs"))
        else {
            return;
        };
        for (_, call) in STD_MATH {
            let name = call
                .strip_prefix("ferrocuda_std::math::")
                .and_then(|c| c.split('(').next())
                .unwrap();
            assert!(
                math.contains(&format!("pub fn {name}<")),
                "ferrocuda_std::math::{name} is gone"
            );
        }
        for method in FLOAT_TRAIT_METHODS {
            assert!(
                float.contains(&format!("fn {method}(self")),
                "ferrocuda_std::math::DeviceMath::{method} is gone"
            );
        }
    }

    #[test]
    fn method_syntax_is_suggested_only_where_the_float_trait_has_the_method() {
        let note = |m: &str| {
            float_method_note(&format!(
                "no method named `{m}` found for type `f32` in the current scope"
            ))
        };
        let exp = note("exp").expect("a note for exp");
        assert!(exp.contains("ferrocuda_std::prelude"), "{exp}");
        let sin = note("sin").expect("a note for sin");
        assert!(
            sin.contains("math::sin(x)") && sin.contains("prelude"),
            "{sin}"
        );
        let tan = note("tan").expect("a note for tan");
        assert!(!tan.contains("prelude"), "{tan}");
    }
}
