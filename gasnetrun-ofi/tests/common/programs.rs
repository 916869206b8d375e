//! The client programs the launcher tests run, with the summary line
//! each one's rank 0 prints when every check passed.

use super::*;

/// One run of a client program (an example of this package) and what its
/// rank 0 prints when every check passed.
pub struct ClientRun {
    /// The example's name ([`example`]).
    pub program: &'static str,
    /// Its arguments (the job's token goes after them: the programs
    /// ignore further arguments).
    pub args: Vec<String>,
    /// How the success line starts; exactly one stdout line starts so.
    pub want: String,
    /// Further text that line must contain.
    pub also: Vec<String>,
    /// Text that line must not contain (e.g. a path counter of 0).
    pub not: Vec<&'static str>,
}

/// Which path carries rank 0's messages in a run of [`client_programs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paths {
    /// `GASNET_SUPERNODE_MAXSIZE=1`: the provider carries everything.
    Provider,
    /// Every rank on one host with the shared-memory path on (the
    /// default): nothing goes through the provider.
    Shared,
    /// Ranks 0 and 1 share a host with the path on, others are elsewhere:
    /// rank 0 uses both, and its RMA peer (rank 1) is reached by copies.
    Mixed,
}

/// The client programs, each over `n` ranks: `gex-am core`, `flood` and
/// `longs`,
/// `gex-rma all` and the examples `am_ring`, `gups`, `stencil` and
/// `long_gather`, with the
/// summary lines of the `tests` and `gex-examples` tests (`tests/tests/am.rs`,
/// `rma.rs`, `examples/tests/examples.rs`) for `n` ranks; the path counters
/// rank 0 prints must show `paths`.
pub fn client_programs(n: usize, paths: Paths) -> Vec<ClientRun> {
    let run = ClientRun::new;
    let core = run(
        "gex-am",
        &["core"],
        "gex-am core: ok: 162 request/reply pairs checked".into(),
    );
    let core = match paths {
        // Both Long paths (inline and RMA) taken, nothing shared.
        Paths::Provider => ClientRun {
            not: vec!["long_inline=0 ", "long_rma=0 "],
            also: vec!["shared=0".into()],
            ..core
        },
        Paths::Shared => ClientRun {
            also: vec!["injected=0 buffered=0 shared=".into()],
            not: vec!["shared=0"],
            ..core
        },
        Paths::Mixed => ClientRun {
            not: vec!["injected=0 buffered=0", "shared=0"],
            ..core
        },
    };
    let rma = run(
        "gex-rma",
        &["all"],
        "gex-rma all: ok: 189 put/get steps of sizes 1 B..4 MiB checked on both sides, \
         500 NB puts and 1000 NBI operations synced in one call, 20000 small NBI puts \
         (1..256 bytes) checked at their target; NB_PUT_INJECT="
            .into(),
    );
    let rma = match paths {
        // Every put path (inject, bounce buffer, blocking, aggregated)
        // taken.
        Paths::Provider => ClientRun {
            not: vec![
                "NB_PUT_INJECT=0 ",
                "NB_PUT_BOUNCE=0 ",
                "NB_PUT_BLOCK=0 ",
                "NB_PUT_AGGREGATE=0 ",
            ],
            also: vec!["RMA_SHARED=0".into()],
            ..rma
        },
        // Rank 1 is reached by copies: no provider put path.
        Paths::Shared | Paths::Mixed => ClientRun {
            also: vec![
                "NB_PUT_INJECT=0 NB_PUT_BOUNCE=0 NB_PUT_BLOCK=0 NB_PUT_AGGREGATE=0 PUT_BATCHES=0 \
                 RMA_SHARED="
                    .into(),
            ],
            not: vec!["RMA_SHARED=0"],
            ..rma
        },
    };
    vec![
        core,
        run(
            "gex-am",
            &["flood", "20000", "2000"],
            format!(
                "gex-am flood: ok: {} shorts and {} mediums of 8192 bytes from {n} ranks arrived exactly once",
                20000 * n,
                2000 * n
            ),
        ),
        // Longs above the packing threshold to every rank at once: in one
        // message where the provider's profile says so (tcp;ofi_rxm),
        // copies within a supernode.
        run(
            "gex-am",
            &["longs", "40"],
            format!(
                "gex-am longs: ok: {} Long requests of 8296 bytes and their Long replies arrived exactly once per rank",
                40 * (n - 1)
            ),
        ),
        rma,
        // Owned-buffer NB puts and gets (handles queued, waited, tested
        // or dropped) to every rank.
        run(
            "gex-rma",
            &["owned"],
            "gex-rma owned: ok: 5 owned puts (2 completed by their drop) and 10 owned gets \
             (2 tested to completion) of 8 B..1 MiB+3 checked"
                .into(),
        ),
        run(
            "example-am_ring",
            &["50"],
            format!(
                "am_ring: ok: 50 laps around {n} ranks, {} hops, trail checked",
                50 * n
            ),
        ),
        ClientRun {
            also: vec![format!(
                "restored the table; {} fetch-and-adds by AM sum correctly",
                5000 * n
            )],
            ..run(
                "example-gups",
                &["5000"],
                format!("gups: ok: {} XOR updates by AM (", 2 * 5000 * n),
            )
        },
        run(
            "example-stencil",
            &["500", "100"],
            format!(
                "stencil: ok: {} cells on {n} ranks, 100 steps, matches the serial result",
                500 * n
            ),
        ),
        run(
            "example-long_gather",
            &["16", "5000"],
            format!(
                "long_gather: ok: {} Longs of 5000 bytes from {n} ranks, checked in the handler and in the segment",
                16 * n
            ),
        ),
    ]
}

/// The extended-API programs over `n` ranks on tcp;ofi_rxm named in full
/// (whose endpoints then offer FI_ATOMIC, so atomic domains are native):
/// `gex-coll reduce`, `user`, `teams` and `cache`,
/// `gex-atomics all` and `fadd`, `gex-vis all`, with the summary lines of
/// `tests/tests/coll.rs`, `atomics.rs` and `vis.rs` for `n` ranks. The
/// collective cache counters must show `paths`: chunks copied to the
/// ranks of this host, none written by RMA (`auto` on tcp), and board
/// posts only when the whole team shares memory.
pub fn extended_programs(n: usize, paths: Paths) -> Vec<ClientRun> {
    let run = ClientRun::new;
    let cache = run(
        "gex-coll",
        &["cache"],
        "gex-coll cache: ok: 45 collectives inside and beyond the collective cache checked, \
         an unwaited event flushed;"
            .into(),
    );
    let cache = match paths {
        Paths::Provider => ClientRun {
            also: vec!["COLL_CACHE_LOCAL=0 COLL_CACHE_RMA=0 COLL_BOARD=0".into()],
            ..cache
        },
        Paths::Shared => ClientRun {
            also: vec![" COLL_CACHE_RMA=0 ".into()],
            not: vec!["COLL_CACHE_LOCAL=0 ", "COLL_BOARD=0"],
            ..cache
        },
        Paths::Mixed => ClientRun {
            also: vec![" COLL_CACHE_RMA=0 COLL_BOARD=0".into()],
            not: vec!["COLL_CACHE_LOCAL=0 "],
            ..cache
        },
    };
    vec![
        run(
            "gex-coll",
            &["reduce"],
            "gex-coll reduce: ok: 88 reduce-to-one + reduce-to-all checks over 44 operator x \
             type pairs exact"
                .into(),
        ),
        run(
            "gex-coll",
            &["user"],
            format!(
                "gex-coll user: ok: non-commutative user reduction of 600 2x2 matrices equals \
                 the product in rank order (not the reverse); commutative user sum {}",
                n * (n + 1) / 2
            ),
        ),
        run(
            "gex-coll",
            &["teams"],
            "gex-coll teams: ok: odd and even teams ran 20 rounds of broadcast + allreduce \
             concurrently with world allreduces; rank translation checked"
                .into(),
        ),
        cache,
        run(
            "gex-atomics",
            &["all"],
            "gex-atomics all: ok: 194 operation x type checks per rank (i32 u32 i64 u64 f32 \
             f64 by native native native native native native)"
                .into(),
        ),
        run(
            "gex-atomics",
            &["fadd", "2000"],
            format!(
                "gex-atomics fadd: ok: {n} ranks x 2000 fetch-and-adds summed to {} (native)",
                2000 * n
            ),
        ),
        run(
            "gex-vis",
            &["all"],
            "gex-vis all: ok: 6 VIS put/get pairs per rank (vector, indexed with few large and \
             many small pieces; strided 3-D sub-block) checked"
                .into(),
        ),
    ]
}

impl ClientRun {
    /// `program args` whose rank 0 prints a line starting with `want`.
    pub fn new(program: &'static str, args: &[&str], want: String) -> ClientRun {
        ClientRun {
            program,
            args: args.iter().map(|a| a.to_string()).collect(),
            want,
            also: Vec::new(),
            not: Vec::new(),
        }
    }

    /// `<program> <args> <token>` for the launcher's command line.
    pub fn command(&self, token: &str) -> Vec<String> {
        let mut v = vec![example_arg(self.program)];
        v.extend(self.args.iter().cloned());
        v.push(token.to_string());
        v
    }

    /// What the run is called in failure messages.
    pub fn name(&self) -> String {
        format!("{} {}", self.program, self.args.join(" "))
    }

    /// The job exited 0, rank 0 printed the success line once (with what
    /// it must and must not contain), and the lead rank's provider warning
    /// names `provider` (e.g. `tcp;ofi_rxm provider (veth0)`), or, for
    /// `None`, no provider warning was printed (shm on one host). A failure
    /// message carries the job's whole output.
    pub fn check(&self, what: &str, d: &Done, provider: Option<&str>) {
        let all = || {
            format!(
                "{what}: {}: exit code {:?}, signal {:?}, {:?}\n--- stdout\n{}\n--- stderr\n{}",
                self.name(),
                d.code,
                d.signal,
                d.elapsed,
                d.out_text(),
                d.err_text()
            )
        };
        assert_eq!(d.code, Some(0), "{}", all());
        let lines: Vec<&String> = d.out.iter().filter(|l| l.starts_with(&self.want)).collect();
        assert_eq!(
            lines.len(),
            1,
            "want one line starting {:?}; {}",
            self.want,
            all()
        );
        for a in &self.also {
            assert!(lines[0].contains(a.as_str()), "want {a:?}; {}", all());
        }
        for n in &self.not {
            assert!(!lines[0].contains(n), "unwanted {n:?}; {}", all());
        }
        let Some(provider) = provider else {
            assert!(
                !d.err
                    .iter()
                    .any(|l| l.starts_with("WARNING: ofi-conduit is using")),
                "want no provider warning; {}",
                all()
            );
            return;
        };
        let warning = format!("WARNING: ofi-conduit is using the {provider}");
        assert!(
            d.err.iter().any(|l| l.starts_with(&warning)),
            "want the warning {warning:?}; {}",
            all()
        );
    }
}
