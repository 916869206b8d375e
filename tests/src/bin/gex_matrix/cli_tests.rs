//! gex-matrix's command-line options.

use super::*;

#[test]
fn options_parse_and_refuse_bad_values() {
    let o = Opts::try_parse_from([
        "gex-matrix",
        "--providers",
        "shm,tcp",
        "--programs",
        "am-core,rma-bad",
        "--no-bench",
        "--out",
        "-",
    ])
    .unwrap();
    assert_eq!(o.providers, ["shm", "tcp"]);
    assert_eq!(o.must_pass, ["shm", "tcp"]);
    assert_eq!(o.deadline, 180);
    assert_eq!(o.programs, ["am-core", "rma-bad"]);
    assert_eq!(o.out.as_deref(), Some(Path::new("-")));
    // (select_programs is tested in tests::matrix::programs.)
    let e = Opts::try_parse_from(["gex-matrix", "--deadline", "0"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--deadline") && e.contains("0"), "{e}");
    let e = Opts::try_parse_from(["gex-matrix", "--deadline", "soon"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--deadline") && e.contains("soon"), "{e}");
}

#[test]
fn help_lists_every_program() {
    use clap::CommandFactory;
    let cmd = Opts::command();
    let arg = cmd
        .get_arguments()
        .find(|a| a.get_id() == "programs")
        .expect("--programs");
    let help = arg.get_help().expect("its help").to_string();
    for p in tests::matrix::PROGRAMS {
        assert!(
            help.contains(p.id),
            "--programs' help lacks {}: {help}",
            p.id
        );
    }
}
