//! Template expansion (the placeholders of the module documentation of
//! `template`).

use super::TemplateArgs;
use crate::SpawnError;
use gex_env::EnvError;
use std::ffi::{OsStr, OsString};

pub(super) fn quote(s: &OsStr) -> String {
    shell_words::quote(&s.to_string_lossy()).into_owned()
}

/// Expand `template` (see the module documentation). `var` names the
/// variable the template came from, for error messages.
pub fn expand(
    template: &str,
    var: &str,
    t: &TemplateArgs<'_>,
) -> Result<Vec<OsString>, SpawnError> {
    let words = shell_words::split(template).map_err(|e| {
        EnvError::new(
            var,
            template,
            format!("a command with shell-like quoting ({e})"),
        )
    })?;
    if words.is_empty() {
        return Err(EnvError::new(var, template, "a command").into());
    }
    let runs_program = words.iter().any(|w| w.contains("%C") || w.contains("%P"));
    if !runs_program {
        return Err(EnvError::new(var, template, "a command containing %C (or %P)").into());
    }
    let quoted_args = || {
        t.args
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out: Vec<OsString> = Vec::new();
    for w in &words {
        match w.as_str() {
            "%C" => {
                out.push(t.program.to_os_string());
                out.extend(t.args.iter().cloned());
                continue;
            }
            "%P" => {
                out.push(t.program.to_os_string());
                continue;
            }
            "%A" => {
                out.extend(t.args.iter().cloned());
                continue;
            }
            _ => {}
        }
        let mut s = String::new();
        let mut it = w.chars();
        while let Some(c) = it.next() {
            if c != '%' {
                s.push(c);
                continue;
            }
            match it.next() {
                Some('N') => s.push_str(&t.nranks.to_string()),
                Some('M') => match t.nodes {
                    Some(m) => s.push_str(&m.to_string()),
                    None => {
                        return Err(SpawnError::Usage(format!(
                            "{var} uses %M (number of nodes): give -N"
                        )))
                    }
                },
                Some('C') => {
                    s.push_str(&quote(t.program));
                    if !t.args.is_empty() {
                        s.push(' ');
                        s.push_str(&quoted_args());
                    }
                }
                Some('P') => s.push_str(&quote(t.program)),
                Some('A') => s.push_str(&quoted_args()),
                Some('%') => s.push('%'),
                Some(o) => {
                    s.push('%');
                    s.push(o);
                }
                None => s.push('%'),
            }
        }
        out.push(s.into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::DEFAULT_TEMPLATE;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn expansion() {
        let args = os(&["a b", "$x;'q'"]);
        let t = TemplateArgs {
            nranks: 4,
            nodes: Some(2),
            program: OsStr::new("/p/prog"),
            args: &args,
        };
        assert_eq!(
            expand(DEFAULT_TEMPLATE, "X", &t).unwrap(),
            os(&["mpirun", "-np", "4", "/p/prog", "a b", "$x;'q'"])
        );
        assert_eq!(
            expand("srun -N %M -n %N --mpi=pmix %P %A", "X", &t).unwrap(),
            os(&[
                "srun",
                "-N",
                "2",
                "-n",
                "4",
                "--mpi=pmix",
                "/p/prog",
                "a b",
                "$x;'q'"
            ])
        );
        let w = expand("sh -c 'exec %C' x%%y -n=%N", "X", &t).unwrap();
        assert_eq!(w[0], "sh");
        assert_eq!(w[3], "x%y");
        assert_eq!(w[4], "-n=4");
        // The embedded %C is shell-quoted: the shell gives back the words.
        let inner = w[2].to_string_lossy().into_owned();
        let inner = inner.strip_prefix("exec ").unwrap();
        assert_eq!(
            shell_words::split(inner).unwrap(),
            vec!["/p/prog", "a b", "$x;'q'"]
        );
    }

    #[test]
    fn template_errors() {
        let t = TemplateArgs {
            nranks: 1,
            nodes: None,
            program: OsStr::new("p"),
            args: &[],
        };
        assert!(matches!(
            expand("mpirun -np %N", "X", &t),
            Err(SpawnError::Env(_))
        ));
        assert!(matches!(expand("", "X", &t), Err(SpawnError::Env(_))));
        assert!(matches!(
            expand("a 'open", "X", &t),
            Err(SpawnError::Env(_))
        ));
        assert!(matches!(
            expand("srun -N %M %C", "X", &t),
            Err(SpawnError::Usage(_))
        ));
    }
}
