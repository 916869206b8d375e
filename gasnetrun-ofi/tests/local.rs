//! Multi-process tests of the local spawner, through the real launcher.

mod common;

use common::*;
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

fn bc() -> String {
    bootcheck().to_string_lossy().into_owned()
}

#[test]
fn four_ranks_allgather_broadcast_barrier_hostmap_env() {
    let _g = serial();
    let t = token("four");
    let b = bc();
    let job = Job::start(
        &t,
        &[
            "-n",
            "4",
            "-E",
            "MY_EXTRA",
            "--",
            &b,
            &t,
            "check",
            "1",
            "GASNET_FOO=foo value",
            "FI_BAR=2",
            "MY_EXTRA=3",
            "HFI_Q=4",
            "MLX5_R=5",
        ],
        &[
            ("GASNET_FOO", "foo value"),
            ("FI_BAR", "2"),
            ("MY_EXTRA", "3"),
            ("HFI_Q", "4"),
            ("MLX5_R", "5"),
        ],
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
    for r in 0..4 {
        let want = format!("bootcheck rank {r} ok host 0 local {r}/4");
        assert!(d.out.contains(&want), "missing {want:?} in {:?}", d.out);
    }
}

#[test]
fn deeper_tree_with_radix_two() {
    let _g = serial();
    let t = token("deep");
    let b = bc();
    let job = Job::start(
        &t,
        &["-n", "11", &b, &t, "check", "1"],
        &[("GASNET_OFI_BOOTSTRAP_RADIX", "2")],
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
    assert_eq!(d.out.iter().filter(|l| l.contains(" ok ")).count(), 11);
}

#[test]
fn exit_code_of_a_rank_is_the_job_exit_code() {
    let _g = serial();
    let t = token("exit3");
    let b = bc();
    let d = Job::start(&t, &["-n", "4", &b, &t, "exit", "1", "3"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(3), "stderr: {}", d.err_text());
    let lines: Vec<_> = d
        .err
        .iter()
        .filter(|l| l.contains("terminating the job"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", d.err);
    assert!(lines[0].contains("rank 1 on host ") && lines[0].contains("exited with code 3"));
}

#[test]
fn abort_ends_the_job_with_its_code() {
    let _g = serial();
    let t = token("abort");
    let b = bc();
    let d = Job::start(&t, &["-n", "3", &b, &t, "abort", "2", "5"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(5), "stderr: {}", d.err_text());
    assert!(d.err_text().contains("rank 2 on host ") && d.err_text().contains("called abort(5)"));
}

#[test]
fn kill_9_of_one_rank_ends_the_job_within_the_exit_timeout() {
    let _g = serial();
    let t = token("kill9");
    let b = bc();
    let mut job = Job::start(
        &t,
        &["-n", "4", &b, &t, "hang"],
        &[("GASNET_EXITTIMEOUT", "3")],
    );
    let ready = job.wait_stdout(4, DEADLINE, |l| l.starts_with("ready "));
    let pid: i32 = ready
        .iter()
        .find(|l| l.starts_with("ready 2 "))
        .and_then(|l| l.split(' ').nth(2))
        .unwrap()
        .parse()
        .unwrap();
    let killed = std::time::Instant::now();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
    let d = job.wait(DEADLINE);
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(3), "teardown took {took:?}");
    assert_eq!(d.code, Some(128 + 9), "stderr: {}", d.err_text());
    let lines: Vec<_> = d
        .err
        .iter()
        .filter(|l| l.contains("terminating the job"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", d.err);
    assert!(
        lines[0].starts_with("gasnetrun-ofi: rank 2 on host ")
            && lines[0].contains("was killed by signal 9 (SIGKILL)"),
        "{}",
        lines[0]
    );
}

#[test]
fn rank_exiting_zero_early_is_torn_down_after_the_exit_timeout() {
    let _g = serial();
    let t = token("grace");
    let b = bc();
    // Rank 0 exits 0 after the barrier; the others hang in a second one.
    let d = Job::start(
        &t,
        &["-n", "3", &b, &t, "exit", "0", "0"],
        &[("GASNET_EXITTIMEOUT", "1")],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(1), "stderr: {}", d.err_text());
    assert!(
        d.err_text().contains("after the exit timeout"),
        "{}",
        d.err_text()
    );
    assert!(d.elapsed < Duration::from_secs(10));
}

#[test]
fn rogue_connections_are_dropped_and_the_job_completes() {
    let _g = serial();
    let t = token("rogue");
    let b = bc();
    let flag = std::env::temp_dir().join(format!("{t}.go"));
    let fs = flag.to_string_lossy().into_owned();
    let mut job = Job::start(&t, &["-v", "-n", "4", &b, &t, "waitfile", &fs], &[]);
    let l = job.wait_stderr(DEADLINE, |l| l.contains("bootstrap listening on "));
    let addr = l.rsplit(' ').next().unwrap().to_string();
    // 1: garbage; 2: a well-formed rank hello with a wrong secret;
    // 3: a connection that says nothing and stays open.
    let mut a = TcpStream::connect(&addr).unwrap();
    a.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut hello = vec![1u8];
    hello.extend_from_slice(&[0u8; 32]);
    hello.extend_from_slice(&0u32.to_be_bytes());
    hello.extend_from_slice(&4u32.to_be_bytes());
    hello.extend_from_slice(&1u32.to_be_bytes());
    hello.push(b'x');
    let mut frame = (hello.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&hello);
    let mut c = TcpStream::connect(&addr).unwrap();
    c.write_all(&frame).unwrap();
    let _idle = TcpStream::connect(&addr).unwrap();
    job.wait_stderr(DEADLINE, |l| {
        l.contains("dropped a connection") && l.contains("wrong secret")
    });
    std::fs::write(&flag, b"").unwrap();
    let d = job.wait(DEADLINE);
    let _ = std::fs::remove_file(&flag);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
    assert_eq!(
        d.out.iter().filter(|l| l.contains("ok")).count(),
        4,
        "{:?}",
        d.out
    );
    assert!(
        d.err
            .iter()
            .filter(|l| l.contains("dropped a connection"))
            .count()
            >= 2,
        "{:?}",
        d.err
    );
}

#[test]
fn sigterm_on_the_launcher_reaches_every_rank() {
    let _g = serial();
    let t = token("term");
    let b = bc();
    let mut job = Job::start(&t, &["-v", "-n", "4", &b, &t, "hang"], &[]);
    job.wait_stdout(4, DEADLINE, |l| l.contains("] ready "));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.code, Some(128 + 15), "stderr: {}", d.err_text());
    for r in 0..4 {
        let want = format!("[{r}] bootcheck got SIGTERM");
        assert!(d.out.contains(&want), "missing {want:?} in {:?}", d.out);
    }
}

/// Ctrl-C while a large job is still starting its ranks: no more are
/// started, and the job ends at once with 130 (it used to start every
/// rank first: 800 ranks took 11 s), leaving nothing (`wait` checks).
#[test]
fn sigint_while_ranks_start_stops_the_start() {
    let _g = serial();
    let t = token("intstart");
    let job = Job::start(&t, &["-n", "800", "sh", "-c", "sleep 30", &t], &[]);
    std::thread::sleep(Duration::from_millis(300));
    let sent = std::time::Instant::now();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let d = job.wait(DEADLINE);
    let took = sent.elapsed();
    assert_eq!(d.code, Some(128 + 2), "stderr: {}", d.err_text());
    assert!(
        took < Duration::from_secs(3),
        "the job took {took:?} to end after SIGINT (stderr: {})",
        d.err_text()
    );
}

#[test]
fn no_rank_survives_a_killed_launcher() {
    let _g = serial();
    let t = token("pdeath");
    let b = bc();
    let mut job = Job::start(&t, &["-n", "3", &b, &t, "hang"], &[]);
    job.wait_stdout(3, DEADLINE, |l| l.starts_with("ready "));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.signal, Some(9));
}

#[test]
fn dash_t_runs_nothing() {
    let _g = serial();
    let t = token("dasht");
    let f = std::env::temp_dir().join(format!("{t}.touched"));
    let fs = f.to_string_lossy().into_owned();
    let d = Job::start(&t, &["-t", "-n", "2", "/usr/bin/touch", &fs, &t], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
    assert!(!f.exists(), "-t ran the program");
    assert_eq!(
        d.out.iter().filter(|l| l.contains("touch")).count(),
        2,
        "{:?}",
        d.out
    );
}

#[test]
fn bad_n_is_refused_with_exit_2_and_one_line() {
    let _g = serial();
    let t = token("badn");
    for args in [
        &["-n", "0", "prog", &t][..],
        &["-n", "-1", "prog", &t],
        &["-n", "abc", "prog", &t],
        &["prog", &t],
        &["-n"],
    ] {
        let d = Job::start(&t, args, &[]).wait(DEADLINE);
        assert_eq!(d.code, Some(2), "{args:?}: {:?}", d.err);
        assert_eq!(d.err.len(), 1, "{args:?}: {:?}", d.err);
        assert!(d.err[0].contains("-n"), "{args:?}: {:?}", d.err);
    }
}

/// A program that cannot be started ends the job as a shell would: 127
/// when it is not found, 126 when it may not be run, with one line naming
/// it.
#[test]
fn a_program_that_cannot_start_exits_126_or_127() {
    let _g = serial();
    let t = token("nostart");
    let dir = std::env::temp_dir().join(&t);
    std::fs::create_dir_all(&dir).unwrap();
    let not_exec = dir.join("not-executable");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    let missing = dir.join("missing");
    for (prog, code, why) in [
        (&missing, 127, "No such file or directory"),
        (&not_exec, 126, "Permission denied"),
    ] {
        let p = prog.to_str().unwrap();
        let d = Job::start(&t, &["-n", "2", p], &[]).wait(DEADLINE);
        assert_eq!(d.code, Some(code), "{p}: {:?}", d.err);
        assert!(
            d.err
                .iter()
                .any(|l| l.contains(&format!("cannot start rank 0 ({p}): {why}"))),
            "{p}: {:?}",
            d.err
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_spawner_and_bad_spawner_settings_exit_2() {
    let _g = serial();
    let t = token("spw");
    for (args, env) in [
        (&["-spawner=rsh", "-n", "1", "true"][..], &[][..]),
        (&["-n", "1", "true"], &[("GASNET_OFI_SPAWNER", "rsh")][..]),
        (
            &["-spawner=mpi", "-n", "1", "true"],
            &[("MPIRUN_CMD", "mpirun -np %N")],
        ),
        (&["-n", "2", "-N", "2", "true"], &[]),
    ] {
        let d = Job::start(&t, args, env).wait(DEADLINE);
        assert_eq!(d.code, Some(2), "{args:?}: {:?}", d.err);
        assert_eq!(d.err.len(), 1, "{args:?}: {:?}", d.err);
    }
    // The flag wins over the variable.
    let d = Job::start(
        &t,
        &["-spawner=local", "-n", "1", "true"],
        &[("GASNET_OFI_SPAWNER", "mpi")],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(0), "{:?}", d.err);
}

/// The launcher command of the mpi and pmi spawners (here a shell that
/// kills itself, as an operator's `kill -9` of mpirun would) ended by a
/// signal the launcher did not pass on: the job ends with 128 + the signal
/// and one line saying which, not silently.
#[test]
fn a_launcher_command_killed_by_a_signal_is_reported() {
    let _g = serial();
    let t = token("cmdkill");
    for (spawner, var) in [("mpi", "MPIRUN_CMD"), ("pmi", "PMIRUN_CMD")] {
        let flag = format!("-spawner={spawner}");
        let d = Job::start(
            &t,
            &[flag.as_str(), "-n", "2", "true"],
            &[(var, "sh -c 'kill -KILL $$' %C")],
        )
        .wait(DEADLINE);
        assert_eq!(d.code, Some(137), "{spawner}: {:?}", d.err);
        assert_eq!(
            d.err,
            ["gasnetrun-ofi: sh was killed by signal 9 (SIGKILL); the job is over"],
            "{spawner}"
        );
    }
}

#[test]
fn arguments_reach_the_ranks_intact() {
    let _g = serial();
    let t = token("args");
    let b = bc();
    let tricky = ["a b", "$HOME;x", "q'\"z", "l1\nl2", "", "-n"];
    let mut args = vec!["-n", "2", "--", &b, &t, "args"];
    args.extend(tricky.iter());
    let d = Job::start(&t, &args, &[]).wait(DEADLINE);
    d.assert_args_intact(&tricky, 2);
}

#[test]
fn program_started_directly_is_a_one_rank_job() {
    let _g = serial();
    let t = token("direct");
    let out = std::process::Command::new(bootcheck())
        .args([t.as_str(), "check", "1"])
        .env_remove("GASNET_OFI_BOOTSTRAP_ADDR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "bootcheck rank 0 ok host 0 local 0/1"
    );
}

#[test]
fn help_and_list_providers() {
    let _g = serial();
    let t = token("help");
    let d = Job::start(&t, &["-h"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(0));
    let h = d.out_text();
    for w in [
        "-n <n>",
        "-N",
        "-E",
        "-t",
        "-k",
        "-v",
        "--spawner",
        "-spawner=",
        "GASNET_OFI_SPAWNER",
        "GASNET_SSH_SERVERS",
        "--list-providers",
    ] {
        assert!(h.contains(w), "help lacks {w}");
    }
    let d = Job::start(&t, &["--list-providers"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(0), "{:?}", d.err);
    let out = d.out_text();
    for (p, status) in [
        ("shm", "usable"),
        ("tcp;ofi_rxm", "not recommended"),
        ("udp;ofi_rxd", "usable"),
        ("sockets", "usable"),
    ] {
        let at = out
            .find(&format!("\n{p}\n"))
            .unwrap_or_else(|| panic!("{p} missing from --list-providers:\n{out}"));
        let block = &out[at..];
        assert!(
            block.contains(&format!("status:         {status}\n")),
            "{p}: {block}"
        );
        assert!(block.contains("usable:         yes"), "{p}: {block}");
    }
    // libfabric 1.17's net provider is refused with its reason
    // (known-issues.md); its layered form stays usable. libfabric 2.x has
    // no net provider.
    if out.starts_with("libfabric 2.") {
        assert!(
            !out.contains("\nnet\n"),
            "net listed with libfabric 2:\n{out}"
        );
        return;
    }
    assert!(
        out.starts_with("libfabric 1."),
        "no libfabric version first:\n{out}"
    );
    let at = out
        .find("\nnet\n")
        .unwrap_or_else(|| panic!("net missing from --list-providers:\n{out}"));
    let block = &out[at..];
    assert!(
        block.contains("usable:         no: net is not supported by ofi-conduit: with libfabric 1.17 AM Long payloads moved by RMA arrive corrupted"),
        "net: {block}"
    );
}

/// Arguments, environment and the start of the one line expected.
type Refusal<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], String);

/// Each refusal names what is wrong (issue 16's list of misleading
/// messages): the exact line, exit 2, nothing started.
#[test]
fn refusals_name_the_argument_or_variable_at_fault() {
    let _g = serial();
    let t = token("refuse");
    let accepted = "-n N, -N NODES, -E VARS, -v, -t, -k, -spawner=KIND, --list-providers, -h, \
                    --version; put -- before a program whose name starts with -)";
    let cases: [Refusal; 8] = [
        (
            &["--bogus", "-n", "2", "true"],
            &[],
            format!(
                "gasnetrun-ofi: unknown option \"--bogus\" before the program (the launcher \
                 accepts {accepted}"
            ),
        ),
        (
            &["-n", "2", "-q", "true"],
            &[],
            format!(
                "gasnetrun-ofi: unknown option \"-q\" before the program (the launcher accepts \
                 {accepted}"
            ),
        ),
        (
            &["-n", "1", "-E", "A=B", "true"],
            &[],
            "gasnetrun-ofi: -E \"A=B\" is not accepted: expected names of environment variables \
             (letters, digits and _, separated by commas); to pass A with a value, export it and \
             use -E A"
                .into(),
        ),
        (
            &["-n", "1", "true"],
            &[("GASNET_EXITTIMEOUT_MAX", "1.5")],
            "gasnetrun-ofi: GASNET_EXITTIMEOUT_MAX=\"1.5\" is not accepted: expected a number of \
             seconds no smaller than GASNET_EXITTIMEOUT_MIN (10, its default; set \
             GASNET_EXITTIMEOUT_MIN lower too)"
                .into(),
        ),
        (
            &["-spawner=ssh", "-n", "2", "true"],
            &[("GASNET_SSH_SERVERS", "nosuchhost.invalid")],
            "gasnetrun-ofi: GASNET_SSH_SERVERS=\"nosuchhost.invalid\": host \
             \"nosuchhost.invalid\" cannot be resolved ("
                .into(),
        ),
        (
            &["-spawner=ssh", "-n", "2", "true"],
            &[("GASNET_SSH_SERVERS", "127.0.0.1 -oProxyCommand=x")],
            "gasnetrun-ofi: GASNET_SSH_SERVERS=\"127.0.0.1 -oProxyCommand=x\": host \
             \"-oProxyCommand=x\" starts with '-', which ssh would take as an option; name \
             hosts by name or address"
                .into(),
        ),
        (
            &["-n", "100000", "true"],
            &[],
            "gasnetrun-ofi: 100000 ranks on host ".into(),
        ),
        (
            &["-n", "3", "true"],
            &[("GASNET_SPAWN_MAX_PER_HOST", "2")],
            format!(
                "gasnetrun-ofi: 3 ranks on host {:?} (this host) are more than it can start: at \
                 most 2 (GASNET_SPAWN_MAX_PER_HOST=2); use fewer ranks or more hosts, or set \
                 GASNET_SPAWN_MAX_PER_HOST to the most ranks a host may start",
                bootstrap::this_host()
            ),
        ),
    ];
    for (args, env, want) in cases {
        let mut args = args.to_vec();
        args.push(&t);
        let d = Job::start(&t, &args, env).wait(DEADLINE);
        assert_eq!(d.code, Some(2), "{args:?}: {:?}", d.err);
        assert_eq!(d.err.len(), 1, "{args:?}: {:?}", d.err);
        assert!(
            d.err[0].starts_with(&want),
            "{args:?}:\n{}\n{want}",
            d.err[0]
        );
    }
    // -n2 is -n 2.
    let d = Job::start(&t, &["-n2", &bc(), &t, "check", "1"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(0), "{:?}", d.err);
}
