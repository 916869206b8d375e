//! Tests of the pmi and mpi spawners under Debian's Open MPI `mpirun`
//! (which hosts a PMIx server): the ranks bootstrap over PMIx. If `mpirun`
//! is missing the tests FAIL (install openmpi-bin and libpmix-dev).

mod common;

#[path = "mpi/kills.rs"]
mod kills;

use common::*;
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
/// For one client program (`gex-rma all` moves 100s of MiB).
const CLIENT_DEADLINE: Duration = Duration::from_secs(120);
/// This machine has 2 cores: 4 ranks need --oversubscribe.
const TEMPLATE: &str = "mpirun --oversubscribe -np %N %C";

fn bc() -> String {
    bootcheck().to_string_lossy().into_owned()
}

fn need_mpirun() {
    let ok = Command::new("mpirun")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "mpirun not found or not working: install openmpi-bin (apt-get install openmpi-bin libpmix-dev)"
    );
}

fn four_ranks(spawner: &str, var: &str) {
    let _g = serial();
    need_mpirun();
    let t = token(spawner);
    let b = bc();
    let spawner_flag = format!("-spawner={spawner}");
    let d = Job::start(
        &t,
        &[
            &spawner_flag,
            "-n",
            "4",
            "-E",
            "MY_EXTRA",
            "--",
            &b,
            &t,
            "check",
            "1",
            "GASNET_FOO=foo $value; 'q'",
            "FI_BAR=2",
            "MY_EXTRA=3",
            "HFI_Q=4",
            "MLX5_R=5",
            &format!("GASNET_OFI_SPAWNER={spawner}"),
            "GASNET_OFI_BOOTSTRAP_ADDR=!",
        ],
        &[
            (var, TEMPLATE),
            ("GASNET_FOO", "foo $value; 'q'"),
            ("FI_BAR", "2"),
            ("MY_EXTRA", "3"),
            ("HFI_Q", "4"),
            ("MLX5_R", "5"),
            // A stale address from an enclosing job must not reach the ranks.
            ("GASNET_OFI_BOOTSTRAP_ADDR", "127.0.0.1:1"),
        ],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
    for r in 0..4 {
        let want = format!("bootcheck rank {r} ok host 0 local {r}/4");
        assert!(d.out.contains(&want), "missing {want:?} in {:?}", d.out);
    }
}

#[test]
fn pmi_four_ranks_under_mpirun() {
    four_ranks("pmi", "PMIRUN_CMD");
}

#[test]
fn mpi_four_ranks_under_mpirun() {
    four_ranks("mpi", "MPIRUN_CMD");
}

/// The client programs ([`client_programs`]) under `spawner`, 4 ranks,
/// with `envs`, their messages on `paths`; the lead rank's provider
/// warning must name `provider` (`None`: no warning, shm on one host).
fn client_programs_under(
    spawner: &str,
    var: &str,
    envs: &[(&str, &str)],
    provider: Option<&str>,
    paths: Paths,
) {
    let flag = format!("-spawner={spawner}");
    for p in client_programs(4, paths) {
        let t = token("client");
        let mut args = vec![flag.clone(), "-n".into(), "4".into(), "--".into()];
        args.extend(p.command(&t));
        let args: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
        let mut all = vec![(var, TEMPLATE), ("GASNET_EXITTIMEOUT", "30")];
        all.extend_from_slice(envs);
        let d = Job::start(&t, &args, &all).wait(CLIENT_DEADLINE);
        eprintln!("{spawner}: {} over {provider:?}: {:?}", p.name(), d.elapsed);
        p.check(&format!("{spawner} spawner under mpirun"), &d, provider);
    }
}

/// The client itself (AMs, RMA, barriers, collective exit) under mpirun,
/// bootstrapped over PMIx: `gex-am core` and `flood`, `gex-rma all` and `owned`, the
/// examples, 4 ranks, with each spawner: on the provider the conduit picks
/// for ranks of one host (shm), and over tcp;ofi_rxm (named in full: with
/// libfabric 2.x `FI_PROVIDER=tcp` is the native tcp provider) on the
/// loopback device, its variables passed on by mpirun. With the default
/// configuration the ranks of the host form one supernode (every message
/// through shared memory); over tcp;ofi_rxm the shared-memory path is off
/// (`GASNET_SUPERNODE_MAXSIZE=1`), so the provider carries everything.
#[test]
fn client_programs_under_mpirun_with_the_pmi_and_mpi_spawners() {
    let _g = serial();
    need_mpirun();
    for (spawner, var) in [("pmi", "PMIRUN_CMD"), ("mpi", "MPIRUN_CMD")] {
        client_programs_under(spawner, var, &[], None, Paths::Shared);
        client_programs_under(
            spawner,
            var,
            &[
                ("FI_PROVIDER", "tcp;ofi_rxm"),
                ("GASNET_OFI_DEVICE", "lo"),
                ("GASNET_SUPERNODE_MAXSIZE", "1"),
            ],
            Some("tcp;ofi_rxm provider (lo)"),
            Paths::Provider,
        );
    }
}

/// Which bootstrap the mpi spawner's ranks use: the PMIx server under
/// mpirun by default, MPI itself with the `mpi` feature
/// (`cargo test -p gasnetrun-ofi --features mpi`).
#[test]
fn mpi_spawner_bootstrap_choice() {
    let _g = serial();
    need_mpirun();
    let want = if cfg!(feature = "mpi") { "mpi" } else { "pmix" };
    let b = bc();
    for (spawner, var, name) in [("mpi", "MPIRUN_CMD", want), ("pmi", "PMIRUN_CMD", "pmix")] {
        let t = token("which");
        let d = Job::start(
            &t,
            &[&format!("-spawner={spawner}"), "-n", "4", &b, &t, "which"],
            &[(var, TEMPLATE)],
        )
        .wait(DEADLINE);
        assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
        for r in 0..4 {
            let line = format!("bootstrap {r} of 4 {name}");
            assert!(
                d.out.contains(&line),
                "{spawner}: missing {line:?} in {:?}",
                d.out
            );
        }
    }
}

#[test]
fn pmi_exit_code_is_the_job_exit_code() {
    let _g = serial();
    need_mpirun();
    let t = token("pmiexit");
    let b = bc();
    let d = Job::start(
        &t,
        &["-spawner=pmi", "-n", "4", &b, &t, "exit", "2", "3"],
        &[("PMIRUN_CMD", TEMPLATE)],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(3), "stderr: {}", d.err_text());
}

#[test]
fn mpi_abort_code_is_the_job_exit_code() {
    let _g = serial();
    need_mpirun();
    let t = token("mpiabort");
    let b = bc();
    let d = Job::start(
        &t,
        &["-spawner=mpi", "-n", "4", &b, &t, "abort", "1", "5"],
        &[("MPIRUN_CMD", TEMPLATE)],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(5), "stderr: {}", d.err_text());
}

#[test]
fn pmi_arguments_reach_the_ranks_intact() {
    let _g = serial();
    need_mpirun();
    let t = token("pmiargs");
    let b = bc();
    let tricky = ["a b", "$HOME;x", "q'\"z", "", "`id` && echo", "\\", "%N %C"];
    let mut args = vec!["-spawner=pmi", "-n", "2", "--", &b, &t, "args"];
    args.extend(tricky.iter());
    let d = Job::start(&t, &args, &[("PMIRUN_CMD", TEMPLATE)]).wait(DEADLINE);
    d.assert_args_intact(&tricky, 2);
}

#[test]
fn pmi_sigterm_ends_every_rank() {
    let _g = serial();
    need_mpirun();
    let t = token("pmiterm");
    let b = bc();
    let mut job = Job::start(
        &t,
        &["-spawner=pmi", "-n", "3", &b, &t, "hang"],
        &[("PMIRUN_CMD", TEMPLATE)],
    );
    job.wait_stdout(3, DEADLINE, |l| l.starts_with("ready "));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.code, Some(128 + 15), "stderr: {}", d.err_text());
}

#[test]
fn test_only_prints_the_expanded_command_and_runs_nothing() {
    let _g = serial();
    need_mpirun();
    let dir = std::env::temp_dir().join(format!("gasnetrun-t-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (spawner, var, template) in [
        ("pmi", "PMIRUN_CMD", "srun -N %M -n %N --mpi=pmix %C"),
        ("mpi", "MPIRUN_CMD", "mpirun -np %N %C"),
    ] {
        let marker = dir.join(format!("ran {spawner}"));
        let m = marker.to_string_lossy().into_owned();
        let t = token("tonly");
        let d = Job::start(
            &t,
            &[
                "-t",
                &format!("-spawner={spawner}"),
                "-n",
                "3",
                "-N",
                "2",
                "/usr/bin/touch",
                &m,
                &t,
            ],
            &[(var, template), ("GASNET_XYZ", "1")],
        )
        .wait(DEADLINE);
        assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
        let out = d.out_text();
        let words = shell_words::split(&out).expect("the printed command is shell-quoted");
        let tail = |w: &[&str]| {
            let w: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            words.ends_with(&w)
        };
        match spawner {
            "pmi" => assert!(
                tail(&[
                    "srun",
                    "-N",
                    "2",
                    "-n",
                    "3",
                    "--mpi=pmix",
                    "/usr/bin/touch",
                    &m,
                    &t
                ]),
                "{out}"
            ),
            _ => {
                assert!(tail(&["-np", "3", "/usr/bin/touch", &m, &t]), "{out}");
                // Open MPI: every propagated variable named with -x.
                assert!(out.contains("-x GASNET_XYZ"), "{out}");
            }
        }
        assert!(
            words.contains(&format!("GASNET_OFI_SPAWNER={spawner}")),
            "{out}"
        );
        assert!(!marker.exists(), "-t ran the program");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ranks_fail_rather_than_run_alone_without_a_pmix_server_or_with_another_size() {
    let _g = serial();
    need_mpirun();
    let b = bc();
    // A template that ignores %N: the PMIx job size disagrees with -n.
    let t = token("pmisize");
    let d = Job::start(
        &t,
        &["-spawner=pmi", "-n", "3", &b, &t, "check", "1"],
        &[("PMIRUN_CMD", "mpirun --oversubscribe -np 2 %C")],
    )
    .wait(DEADLINE);
    assert_ne!(d.code, Some(0));
    assert!(
        d.err_text().contains("the PMIx job has 2 rank(s)"),
        "{}",
        d.err_text()
    );
    // A "launcher" without a PMIx server: one process that must not run as
    // a job of one rank.
    let t = token("nopmix");
    let d = Job::start(
        &t,
        &["-spawner=pmi", "-n", "3", &b, &t, "check", "1"],
        &[("PMIRUN_CMD", "env %C")],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(41), "{}", d.err_text());
    assert!(
        d.err_text().contains("GASNET_OFI_SIZE=3 but neither"),
        "{}",
        d.err_text()
    );
}

#[test]
fn a_program_started_directly_is_a_single_rank_job() {
    let _g = serial();
    let t = token("direct");
    let mut cmd = Command::new(bootcheck());
    cmd.args([&t, "check", "1"]);
    for (k, _) in std::env::vars() {
        if k.starts_with("PMIX_") || k.starts_with("GASNET_OFI_") || k.starts_with("OMPI_") {
            cmd.env_remove(k);
        }
    }
    // A spawner choice in the environment does not make it a multi-rank job.
    cmd.env("GASNET_OFI_SPAWNER", "pmi");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "bootcheck rank 0 ok host 0 local 0/1"
    );
    assert_no_survivors(&t);
}
