//! The launcher's own options before clap sees them: GASNet's spellings
//! (`-spawner=X`, `-n2`) rewritten to clap's, and anything before the
//! program that is not an option of the launcher refused by name (clap
//! would take an unknown option for the program and then report a missing
//! `-n`).

use std::ffi::OsString;

/// Options that take a value in the next argument.
const VALUE_OPTS: [&str; 4] = ["-n", "-N", "-E", "--spawner"];

/// Options without a value.
const FLAGS: [&str; 9] = [
    "-v",
    "-t",
    "-k",
    "-h",
    "--help",
    "-V",
    "--version",
    "--list-providers",
    "-",
];

/// What the launcher accepts before the program, for messages.
const ACCEPTED: &str = "-n N, -N NODES, -E VARS, -v, -t, -k, -spawner=KIND, --list-providers, \
                        -h, --help, -V, --version";

/// Rewrite the launcher's options into clap's spellings: `-spawner=X` and
/// `-spawner X` become `--spawner`, `-n4` / `-n=4` (and `-N`, `-E`) become
/// `-n 4`. Scanning stops at `--` or at the program name (the first
/// argument that is not an option or an option's value); an unknown
/// option before that is an error naming it.
pub fn rewrite_args(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    if let Some(a0) = it.next() {
        out.push(a0);
    }
    while let Some(a) = it.next() {
        let s = a.to_string_lossy().into_owned();
        if s == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        if !s.starts_with('-') || s == "-" {
            out.push(a);
            out.extend(it);
            break;
        }
        let (opt, attached) = split_option(&s)?;
        out.push(OsString::from(opt));
        match attached {
            Some(v) => out.push(OsString::from(v)),
            None if VALUE_OPTS.contains(&opt) => {
                if let Some(v) = it.next() {
                    out.push(v);
                }
            }
            None => {}
        }
    }
    Ok(out)
}

/// One option argument as (option in clap's spelling, value attached to
/// it), or an error naming an option the launcher does not have.
fn split_option(s: &str) -> Result<(&str, Option<&str>), String> {
    if s == "-spawner" || s == "--spawner" {
        return Ok(("--spawner", None));
    }
    if let Some(v) = s
        .strip_prefix("-spawner=")
        .or_else(|| s.strip_prefix("--spawner="))
    {
        return Ok(("--spawner", Some(v)));
    }
    if FLAGS.contains(&s) || VALUE_OPTS.contains(&s) {
        return Ok((s, None));
    }
    for opt in ["-n", "-N", "-E"] {
        if let Some(v) = s.strip_prefix(opt) {
            return Ok((opt, Some(v.strip_prefix('=').unwrap_or(v))));
        }
    }
    // Clustered flags (`-vt`).
    if s.len() > 2 && !s.starts_with("--") && s[1..].chars().all(|c| matches!(c, 'v' | 't' | 'k')) {
        return Ok((s, None));
    }
    Err(format!(
        "unknown option {s:?} before the program (the launcher accepts {ACCEPTED}; put -- \
         before a program whose name starts with -)"
    ))
}

/// `-E` takes names of variables to pass on: refuse anything else (such
/// as `A=B`, which would otherwise pass nothing without a word).
pub fn check_env_names(names: &[String]) -> Result<(), String> {
    for n in names.iter().filter(|n| !n.is_empty()) {
        let mut chars = n.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            let hint = match n.split_once('=') {
                Some((name, _)) => {
                    format!("; to pass {name} with a value, export it and use -E {name}")
                }
                None => String::new(),
            };
            return Err(format!(
                "-E {n:?} is not accepted: expected names of environment variables \
                 (letters, digits and _, separated by commas){hint}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn single_dash_spawner_is_rewritten_before_the_program_only() {
        assert_eq!(
            rewrite_args(v(&["g", "-n", "2", "-spawner=ssh", "p", "-spawner=x"])).unwrap(),
            v(&["g", "-n", "2", "--spawner", "ssh", "p", "-spawner=x"])
        );
        assert_eq!(
            rewrite_args(v(&[
                "g",
                "-spawner",
                "local",
                "-n",
                "-spawner=1",
                "--",
                "-spawner=y"
            ]))
            .unwrap(),
            v(&[
                "g",
                "--spawner",
                "local",
                "-n",
                "-spawner=1",
                "--",
                "-spawner=y"
            ])
        );
    }

    #[test]
    fn attached_values_are_split() {
        assert_eq!(
            rewrite_args(v(&["g", "-n2", "-N=1", "-EA,B", "-vt", "p", "-n3"])).unwrap(),
            v(&["g", "-n", "2", "-N", "1", "-E", "A,B", "-vt", "p", "-n3"])
        );
    }

    #[test]
    fn unknown_options_before_the_program_are_named() {
        assert_eq!(
            rewrite_args(v(&["g", "--bogus", "-n", "2", "p"])).unwrap_err(),
            "unknown option \"--bogus\" before the program (the launcher accepts -n N, -N NODES, \
             -E VARS, -v, -t, -k, -spawner=KIND, --list-providers, -h, --help, -V, --version; put -- before \
             a program whose name starts with -)"
        );
        assert!(rewrite_args(v(&["g", "-n", "2", "-x", "p"])).is_err());
        // After the program, everything is the program's.
        assert!(rewrite_args(v(&["g", "-n", "2", "p", "--bogus"])).is_ok());
        assert!(rewrite_args(v(&["g", "-n", "2", "--", "-p"])).is_ok());
    }

    #[test]
    fn env_names_only() {
        assert!(check_env_names(&["A".into(), "_B9".into(), "".into()]).is_ok());
        assert_eq!(
            check_env_names(&["A=B".into()]).unwrap_err(),
            "-E \"A=B\" is not accepted: expected names of environment variables (letters, \
             digits and _, separated by commas); to pass A with a value, export it and use -E A"
        );
        assert!(check_env_names(&["9A".into()]).is_err());
    }
}
