//! The conformance programs of the matrix ([`PROGRAMS`]) and the
//! executables they run.

use std::path::Path;

/// Which executable a conformance program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// A binary in `<target>/<profile>/`.
    Bin(&'static str),
    /// An example in `<target>/<profile>/examples/`.
    Example(&'static str),
}

impl Binary {
    /// The file name.
    pub fn name(self) -> &'static str {
        match self {
            Binary::Bin(n) | Binary::Example(n) => n,
        }
    }

    /// Its path below the directory that holds `gex-matrix`.
    pub fn path_in(self, bin_dir: &Path) -> std::path::PathBuf {
        match self {
            Binary::Bin(n) => bin_dir.join(n),
            Binary::Example(n) => bin_dir.join("examples").join(n),
        }
    }
}

/// One conformance program of the matrix.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// Its id in `--programs` and in the results table.
    pub id: &'static str,
    /// The executable.
    pub binary: Binary,
    /// Ranks (`gasnetrun-ofi -n`).
    pub ranks: usize,
    /// Its arguments.
    pub args: &'static [&'static str],
    /// The launcher's exit code when it passes.
    pub exit_code: i32,
    /// Text its standard output must contain when it passes (empty: none
    /// required).
    pub want: &'static str,
    /// What it checks, for the legend.
    pub what: &'static str,
}

impl Program {
    /// `gex-am core` (binary name and arguments).
    pub fn command_text(&self) -> String {
        let mut s = self.binary.name().to_string();
        for a in self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// The conformance programs, in the order they run.
pub const PROGRAMS: &[Program] = &[
    Program {
        id: "startup-ring",
        binary: Binary::Bin("gex-startup"),
        ranks: 4,
        args: &[],
        exit_code: 0,
        want: "ranks=4 hosts=1 ring=ok",
        what: "bootstrap, name exchange, AV insert and a message around the ring; the provider selected is the one asked for",
    },
    Program {
        id: "am-core",
        binary: Binary::Bin("gex-am"),
        ranks: 4,
        args: &["core"],
        exit_code: 0,
        want: "gex-am core: ok: 162 request/reply pairs checked",
        what: "every AM kind, argument count and size, request and reply",
    },
    Program {
        id: "am-barrier",
        binary: Binary::Bin("gex-am"),
        ranks: 4,
        args: &["barrier"],
        exit_code: 0,
        want: "gex-am barrier: ok: 54 barriers, mismatch detected, forced mismatch seen",
        what: "named and anonymous barriers; a name mismatch is detected, and a mismatch one rank forces",
    },
    Program {
        id: "am-flood",
        binary: Binary::Bin("gex-am"),
        ranks: 4,
        args: &["flood", "20000", "2000"],
        exit_code: 0,
        want: "gex-am flood: ok: 80000 shorts and 8000 mediums",
        what: "every rank floods every other with Shorts and largest Mediums; each arrives exactly once",
    },
    Program {
        id: "am-exit",
        binary: Binary::Bin("gex-am"),
        ranks: 4,
        args: &["exit", "rank1", "7"],
        exit_code: 7,
        want: "",
        what: "rank 1 calls exit(7); the job ends and the launcher exits with 7",
    },
    Program {
        id: "am-bad",
        binary: Binary::Bin("gex-am"),
        ranks: 2,
        args: &["bad"],
        exit_code: 0,
        want: "gex-am bad: ok: 7 bad inputs refused",
        what: "bad AM requests are refused with clear errors",
    },
    Program {
        id: "rma-all",
        binary: Binary::Bin("gex-rma"),
        ranks: 4,
        args: &["all"],
        exit_code: 0,
        want: "gex-rma all: ok: 189 put/get steps",
        what: "blocking, NB and NBI puts and gets of 1 B..4 MiB, checked on both sides",
    },
    Program {
        id: "rma-bad",
        binary: Binary::Bin("gex-rma"),
        ranks: 2,
        args: &["bad"],
        exit_code: 0,
        want: "gex-rma bad: ok: 9 bad requests refused and nothing was written",
        what: "bad RMA addresses are refused and nothing is written",
    },
    Program {
        id: "tagged-layout",
        binary: Binary::Bin("gex-tagged"),
        ranks: 2,
        args: &["layout"],
        exit_code: 0,
        want: "gex-tagged layout: ofi_tag_full:",
        what: "GASNET_OFI_TAG_MODE=auto chooses ofi_tag_full (the provider grants FI_REMOTE_CQ_DATA and FI_DIRECTED_RECV; ofi_tag_1 otherwise, which fails this row)",
    },
    Program {
        id: "tagged-all",
        binary: Binary::Bin("gex-tagged"),
        ranks: 4,
        args: &["all"],
        exit_code: 0,
        want: "gex-tagged all: ok: tag mode ",
        what: "tagged messaging: sizes 0 B..16 MiB, wildcards, ordering under a flood of 2,000 per rank, probes, synchronous send, 1,000 outstanding operations, isolation, raw receives (into the segment; a window sharing one buffer), cancel, truncation (or the provider's truncation defect reported)",
    },
    Program {
        id: "atomics-all",
        binary: Binary::Bin("gex-atomics"),
        ranks: 4,
        args: &["all"],
        exit_code: 0,
        want: "gex-atomics all: ok: 194 operation x type checks per rank",
        what: "remote atomics: every operation x type of GASNet-EX's atomic domains, checked (native where fi_*atomicvalid confirms them and the profile allows, else by AM; the line says which)",
    },
    Program {
        id: "atomics-fadd",
        binary: Binary::Bin("gex-atomics"),
        ranks: 4,
        args: &["fadd", "100000"],
        exit_code: 0,
        want: "gex-atomics fadd: ok: 4 ranks x 100000 fetch-and-adds summed to 400000",
        what: "remote atomics: 4 ranks x 100,000 concurrent fetch-and-adds on one word sum exactly",
    },
    Program {
        id: "coll-bcast",
        binary: Binary::Bin("gex-coll"),
        ranks: 4,
        args: &["bcast"],
        exit_code: 0,
        want: "gex-coll bcast: ok: 40 broadcasts of 0 B..4 MiB from every root checked",
        what: "collectives: broadcast from every root, 0 B..4 MiB",
    },
    Program {
        id: "coll-reduce",
        binary: Binary::Bin("gex-coll"),
        ranks: 4,
        args: &["reduce"],
        exit_code: 0,
        want: "gex-coll reduce: ok: 88 reduce-to-one + reduce-to-all checks over 44 operator x type pairs exact",
        what: "collectives: reduce and allreduce for every built-in operator x type, exact",
    },
    Program {
        id: "coll-teams",
        binary: Binary::Bin("gex-coll"),
        ranks: 4,
        args: &["teams"],
        exit_code: 0,
        want: "gex-coll teams: ok: odd and even teams ran 20 rounds",
        what: "teams: odd/even split running collectives concurrently with world collectives",
    },
    Program {
        id: "vis-all",
        binary: Binary::Bin("gex-vis"),
        ranks: 4,
        args: &["all"],
        exit_code: 0,
        want: "gex-vis all: ok: 6 VIS put/get pairs per rank",
        what: "VIS: vector, indexed (few large, many small pieces) and strided (3-D sub-block) puts and gets, checked",
    },
    Program {
        id: "example-am-ring",
        binary: Binary::Example("am_ring"),
        ranks: 4,
        args: &["50"],
        exit_code: 0,
        want: "am_ring: ok:",
        what: "example: 50 laps of an AM around the ranks",
    },
    Program {
        id: "example-gups",
        binary: Binary::Example("gups"),
        ranks: 4,
        args: &["5000"],
        exit_code: 0,
        want: "gups: ok:",
        what: "example: GUPS, XOR updates and fetch-and-add by AM",
    },
    Program {
        id: "example-stencil",
        binary: Binary::Example("stencil"),
        ranks: 4,
        args: &["500", "100"],
        exit_code: 0,
        want: "stencil: ok:",
        what: "example: 1-D stencil with NBI halo puts, compared with the serial result",
    },
    Program {
        id: "example-long-gather",
        binary: Binary::Example("long_gather"),
        ranks: 4,
        args: &["16", "5000"],
        exit_code: 0,
        want: "long_gather: ok:",
        what: "example: a gather by AM Long, each payload checked in its handler and in the segment",
    },
];

/// The program with this id.
pub fn program(id: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.id == id)
}

/// The programs `ids` names (empty: all), in the matrix's order; an
/// unknown id is an error naming `--programs`.
pub fn select_programs(ids: &[String]) -> Result<Vec<&'static Program>, String> {
    let known: Vec<&str> = PROGRAMS.iter().map(|p| p.id).collect();
    for id in ids {
        if program(id).is_none() {
            return Err(format!(
                "--programs: unknown program {id:?} (known: {})",
                known.join(", ")
            ));
        }
    }
    Ok(PROGRAMS
        .iter()
        .filter(|p| ids.is_empty() || ids.iter().any(|i| i == p.id))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_and_selected_by_id() {
        for p in PROGRAMS {
            assert_eq!(program(p.id).map(|x| x.id), Some(p.id));
        }
        assert_eq!(PROGRAMS[0].command_text(), "gex-startup");
        assert_eq!(
            program("am-flood").unwrap().command_text(),
            "gex-am flood 20000 2000"
        );
        let ids = |v: &[&str]| {
            let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            select_programs(&v).map(|p| p.iter().map(|p| p.id).collect::<Vec<_>>())
        };
        assert_eq!(
            ids(&["rma-bad", "am-core"]).unwrap(),
            ["am-core", "rma-bad"]
        );
        assert_eq!(ids(&[]).unwrap().len(), PROGRAMS.len());
        let e = ids(&["am-cor"]).unwrap_err();
        assert!(
            e.starts_with("--programs: unknown program \"am-cor\" (known: startup-ring, am-core,"),
            "{e}"
        );
    }
}
