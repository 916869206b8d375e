//! Local jobs that run to their end: the bootstrap's collectives, host
//! map and environment, a deeper tree, rogue connections to the bootstrap,
//! arguments passed intact, and a program started without the launcher.

use super::common::{assert_no_survivors, bootcheck, serial, token, Job};
use super::{bc, DEADLINE};
use std::io::Write;
use std::net::TcpStream;

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

/// A second process saying hello as a rank (one that inherited the rank's
/// bootstrap variables: here the rank's shell starts the program twice,
/// the copy first) is refused and told why, and the job ends: the
/// launcher kept its connection open, so the refused process waited for
/// a welcome for ever and the job never ended.
#[test]
fn a_second_hello_as_one_rank_is_refused_and_the_job_ends() {
    let _g = serial();
    let t = token("twice");
    let b = bc();
    let twice = format!("{b} {t} check 1 & sleep 0.5; exec {b} {t} check 1");
    let d = Job::start(&t, &["-n", "2", "sh", "-c", &twice], &[]).wait(DEADLINE);
    assert_ne!(d.code, Some(0), "stderr: {}", d.err_text());
    assert!(
        d.err.iter().any(|l| l.contains(
            "it refuses a second process saying hello as one rank (a child that inherited a rank's GASNET_OFI_RANK"
        )) && d.err.iter().any(|l| l.contains("refused a second hello as rank ")),
        "{:?}",
        d.err
    );
    assert_no_survivors(&t);
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
