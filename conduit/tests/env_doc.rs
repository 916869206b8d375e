//! Keeps `docs/environment.md` and the code in step.
//!
//! Every string literal in the workspace's `.rs` files that is a whole
//! variable name (`GASNET_*`, `FI_*`, `MPIRUN_*`, `PMIRUN_*`, `MLX5_*`,
//! `HFI_*`) must appear, in backticks, in the first column of a table of
//! `docs/environment.md`, and every variable named there must appear as such
//! a literal. Prefixes (literals ending in `_`) and `format!` templates are
//! ignored. A family entry such as `GASNET_OFI_DEVICE_<ids>` needs no literal
//! and covers literals of its shape (`GASNET_OFI_DEVICE_0_1`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const PREFIXES: [&str; 6] = ["GASNET", "FI", "MPIRUN", "PMIRUN", "MLX5", "HFI"];

/// `^(GASNET|FI|MPIRUN|PMIRUN|MLX5|HFI)_[A-Z0-9_]*[A-Z0-9]$`
fn is_var_name(s: &str) -> bool {
    let Some((head, rest)) = s.split_once('_') else {
        return false;
    };
    PREFIXES.contains(&head)
        && !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && !rest.ends_with('_')
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Macros whose first literal is a template, not a name.
const TEMPLATE_MACROS: [&str; 8] = [
    "format!(",
    "format_args!(",
    "print!(",
    "println!(",
    "eprint!(",
    "eprintln!(",
    "eprintln_whole!(",
    "panic!(",
];

/// The string literals of Rust source `src` (comments, char literals and
/// lifetimes skipped), each with its 1-based line, leaving out the first
/// argument of formatting macros. Escapes are kept as written.
fn string_literals(src: &str) -> Vec<(String, usize)> {
    let b = src.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    let line_of = |pos: usize| b[..pos].iter().filter(|&&c| c == b'\n').count() + 1;
    let is_template = |start: usize| {
        let before = src[..start].trim_end();
        TEMPLATE_MACROS.iter().any(|m| before.ends_with(m))
    };
    let mut i = 0;
    while i < n {
        let c = b[i];
        let next = b.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident_byte(b[i - 1]);
        if c == b'/' && next == Some(b'/') {
            while i < n && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 1;
            i += 2;
            while i < n && depth > 0 {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                } else {
                    i += 1;
                }
            }
        } else if !prev_ident && (c == b'r' || (c == b'b' && next == Some(b'r'))) {
            // Maybe a raw string: r"..", r#".."#, br"..".
            let start = i;
            let mut j = if c == b'r' { i + 1 } else { i + 2 };
            let mut hashes = 0;
            while j < n && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j >= n || b[j] != b'"' {
                // An identifier starting with r or br, or a raw identifier.
                i = j.max(i + 1);
                continue;
            }
            let body = j + 1;
            let mut k = body;
            while k < n
                && !(b[k] == b'"'
                    && k + hashes < n
                    && b[k + 1..=k + hashes].iter().all(|&h| h == b'#'))
            {
                k += 1;
            }
            let end = k.min(n);
            if !is_template(start) {
                out.push((src[body..end].to_string(), line_of(start)));
            }
            i = end + 1 + hashes;
        } else if c == b'"' || (c == b'b' && !prev_ident && next == Some(b'"')) {
            let start = i;
            let body = if c == b'"' { i + 1 } else { i + 2 };
            let mut k = body;
            while k < n && b[k] != b'"' {
                if b[k] == b'\\' {
                    k += 1;
                }
                k += 1;
            }
            let end = k.min(n);
            if !is_template(start) {
                out.push((src[body..end].to_string(), line_of(start)));
            }
            i = end + 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\'', '"') or a lifetime ('a).
            if next == Some(b'\\') {
                let mut k = i + 3;
                while k < n && b[k] != b'\'' {
                    k += 1;
                }
                i = k + 1;
            } else {
                let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                } else {
                    i += 1;
                }
            }
        } else if is_ident_byte(c) {
            // Skip whole identifiers so that a trailing r or b is not taken
            // for a string prefix.
            while i < n && is_ident_byte(b[i]) {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            // Integration tests (`<crate>/tests/`) invent variables of their
            // own (GASNET_FOO, ...); only product code counts. The workspace
            // crate named `tests` keeps its programs in `src/`, which count.
            let test_dir =
                name == "tests" && path.parent().is_some_and(|p| p.join("Cargo.toml").exists());
            if !name.starts_with("target") && !name.starts_with('.') && !test_dir {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// Every `FI_*` identifier the installed libfabric headers define (API
/// constants such as `FI_MR_LOCAL` or `FI_MSG_PREFIX`). Code names these in
/// messages; they are not environment variables. libfabric's environment
/// variables (`FI_PROVIDER`, `FI_UNIVERSE_SIZE`, ...) never appear there.
fn libfabric_constants() -> BTreeSet<String> {
    let out = std::process::Command::new("pkg-config")
        .args(["--variable=includedir", "libfabric"])
        .output()
        .expect("pkg-config runs (apt-get install pkg-config libfabric-dev)");
    let inc = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dir = Path::new(&inc).join("rdma");
    let mut names = BTreeSet::new();
    let entries = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read libfabric headers in {}: {e}", dir.display()));
    for e in entries.flatten() {
        let Ok(text) = fs::read_to_string(e.path()) else {
            continue;
        };
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i..].starts_with(b"FI_") && (i == 0 || !is_ident_byte(bytes[i - 1])) {
                let start = i;
                while i < bytes.len() && is_ident_byte(bytes[i]) {
                    i += 1;
                }
                names.insert(text[start..i].to_string());
            } else {
                i += 1;
            }
        }
    }
    assert!(
        names.contains("FI_MR_LOCAL"),
        "libfabric headers in {} look incomplete",
        dir.display()
    );
    names
}

/// Variable names used as literals in the workspace, with one place each.
/// The constants the C API's headers define (`GASNET_OK`,
/// `GASNET_ERR_BAD_ARG`, ...): names the library spells as strings
/// (gasnet_ErrorName) that are not environment variables.
fn c_api_constants(root: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let dir = root.join("capi/include");
    for e in fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .flatten()
    {
        let text = fs::read_to_string(e.path()).unwrap_or_default();
        for line in text.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("#define ") {
                let name: String = rest
                    .chars()
                    .take_while(|&c| is_ident_byte(c as u8))
                    .collect();
                names.insert(name);
            }
        }
    }
    names
}

fn code_names(root: &Path) -> BTreeMap<String, String> {
    let mut constants = libfabric_constants();
    constants.extend(c_api_constants(root));
    let me = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/env_doc.rs");
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut names = BTreeMap::new();
    for f in files {
        if f == me {
            continue;
        }
        let Ok(src) = fs::read_to_string(&f) else {
            continue;
        };
        // Unit-test modules sit at the end of a file, after `#[cfg(test)]`.
        let src = match src.find("\n#[cfg(test)]") {
            Some(at) => src[..at].to_string(),
            None => src,
        };
        for (lit, line) in string_literals(&src) {
            if is_var_name(&lit) && !constants.contains(&lit) {
                let place = format!("{}:{line}", f.strip_prefix(root).unwrap_or(&f).display());
                names.entry(lit).or_insert(place);
            }
        }
    }
    names
}

/// Backticked tokens in the first column of the tables of a markdown text.
fn doc_names(md: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in md.lines() {
        let t = line.trim();
        let Some(row) = t.strip_prefix('|') else {
            continue;
        };
        let first = row.split('|').next().unwrap_or("");
        let mut parts = first.split('`').skip(1);
        // Tokens sit between pairs of backticks; an unclosed one is ignored.
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            names.push(inside.trim().to_string());
        }
    }
    names
}

/// A family entry `PREFIX<placeholder>SUFFIX`.
struct Family {
    prefix: String,
    placeholder: String,
    suffix: String,
}

impl Family {
    fn parse(entry: &str) -> Option<Family> {
        let (prefix, rest) = entry.split_once('<')?;
        let (placeholder, suffix) = rest.split_once('>')?;
        Some(Family {
            prefix: prefix.to_string(),
            placeholder: placeholder.to_string(),
            suffix: suffix.to_string(),
        })
    }

    /// Whether `name` is a member: `<ids>` stands for decimal numbers joined
    /// by `_`, any other placeholder for upper-case letters, digits and `_`.
    fn covers(&self, name: &str) -> bool {
        let Some(mid) = name
            .strip_prefix(&self.prefix)
            .and_then(|m| m.strip_suffix(&self.suffix))
        else {
            return false;
        };
        if mid.is_empty() {
            return false;
        }
        if self.placeholder == "ids" {
            mid.split('_')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        } else {
            mid.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        }
    }
}

#[test]
fn every_variable_read_is_documented_and_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the conduit crate sits in the workspace")
        .to_path_buf();
    let doc_path = root.join("docs/environment.md");
    let md = fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", doc_path.display()));

    let mut documented = BTreeSet::new();
    let mut families = Vec::new();
    let mut malformed = Vec::new();
    for token in doc_names(&md) {
        if token.contains('<') {
            match Family::parse(&token) {
                Some(f) if is_var_name(&format!("{}X{}", f.prefix, f.suffix)) => families.push(f),
                _ => malformed.push(token),
            }
        } else if is_var_name(&token) {
            documented.insert(token);
        } else {
            malformed.push(token);
        }
    }

    let code = code_names(&root);
    let undocumented: Vec<String> = code
        .iter()
        .filter(|(name, _)| {
            !documented.contains(name.as_str()) && !families.iter().any(|f| f.covers(name))
        })
        .map(|(name, place)| format!("{name} ({place})"))
        .collect();
    let unread: Vec<String> = documented
        .iter()
        .filter(|name| !code.contains_key(name.as_str()))
        .cloned()
        .collect();

    let mut problems = String::new();
    if !undocumented.is_empty() {
        problems.push_str(&format!(
            "named in the code but missing from the tables of docs/environment.md:\n  {}\n",
            undocumented.join("\n  ")
        ));
    }
    if !unread.is_empty() {
        problems.push_str(&format!(
            "documented in docs/environment.md but not named by any string literal in the code:\n  {}\n",
            unread.join("\n  ")
        ));
    }
    if !malformed.is_empty() {
        problems.push_str(&format!(
            "first-column entries of docs/environment.md that are not variable names:\n  {}\n",
            malformed.join("\n  ")
        ));
    }
    assert!(problems.is_empty(), "{problems}");
}

#[test]
fn scanner_finds_only_real_string_literals() {
    let src = r####"
        // "GASNET_IN_LINE_COMMENT"
        /* "GASNET_IN_BLOCK" /* nested "FI_NESTED" */ still "FI_STILL" */
        /// "GASNET_IN_DOC"
        fn f<'a>(x: &'a str) -> char { let _ = '"'; let _ = '\''; let _ = b'"'; 'x' }
        const A: &str = "GASNET_OFI_A";
        const B: &str = r#"FI_B "quoted""#;
        const C: &[u8] = b"HFI_C";
        const D: &str = "esc \" GASNET_NOT_WHOLE";
        const E: &str = r"MLX5_E";
        let s = format!("GASNET_TEMPLATE");
        let t = format!("{}", "PMIRUN_ARG");
        let r#type = br#"x"#; let letter = "after_r";
    "####;
    let found = string_literals(src);
    let lits: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        lits,
        vec![
            "GASNET_OFI_A",
            "FI_B \"quoted\"",
            "HFI_C",
            "esc \\\" GASNET_NOT_WHOLE",
            "MLX5_E",
            "PMIRUN_ARG",
            "x",
            "after_r",
        ]
    );
    assert_eq!(found[0].1, 6);
}

#[test]
fn name_shape() {
    for ok in [
        "GASNET_OFI_MAX_MEDIUM",
        "FI_PROVIDER",
        "MLX5_X1",
        "HFI_NO_CPUAFFINITY",
    ] {
        assert!(is_var_name(ok), "{ok}");
    }
    for bad in [
        "GASNET_OFI_DEVICE_",
        "GASNET_",
        "GASNET",
        "FOO_BAR",
        "GASNET_ofi",
        "GASNET_OFI_{}",
        "FI PROVIDER",
    ] {
        assert!(!is_var_name(bad), "{bad}");
    }
}

#[test]
fn family_shapes_and_doc_columns() {
    let f = Family::parse("GASNET_OFI_DEVICE_<ids>").unwrap();
    assert!(f.covers("GASNET_OFI_DEVICE_0"));
    assert!(f.covers("GASNET_OFI_DEVICE_0_12"));
    assert!(!f.covers("GASNET_OFI_DEVICE_TYPE"));
    assert!(!f.covers("GASNET_OFI_DEVICE_"));
    let md = "| `A_B` / `GASNET_X_<n>` | `not first column` |\n|---|---|\ntext `GASNET_NO`\n";
    assert_eq!(doc_names(md), vec!["A_B", "GASNET_X_<n>"]);
}
