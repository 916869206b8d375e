//! Refusals the conduit makes on purpose, for a provider's documented
//! defect: the job fails with the refusal's message, and the matrix
//! records "refused" (not run) rather than a failure, so the documented
//! regeneration of the matrix passes on a machine whose provider has the
//! defect. Any other outcome is judged as usual.

use super::{core_of, JobRun, Verdict};

/// What the conduit prints when it refuses tagged messaging over shm
/// before libfabric 1.19 (known-issues.md).
const SHM_TAGGED: &str = "tagged messaging is not possible with provider shm in libfabric";

/// `Some(verdict)` when `run` of program `id` on `provider` ended in a
/// documented refusal: exit code 1, no timeout, no survivors, and the
/// refusal's message on standard error.
pub fn documented_refusal(id: &str, provider: &str, run: &JobRun) -> Option<Verdict> {
    let tagged = id.starts_with("tagged-");
    (tagged
        && core_of(provider) == "shm"
        && run.code == Some(1)
        && !run.timed_out
        && run.survivors.is_empty()
        && run.stderr.contains(SHM_TAGGED))
    .then(|| {
        Verdict::NotRun(
            "refused by the conduit: shm's tag matching before libfabric 1.19 \
             (known-issues.md)"
                .into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: i32, stderr: &str) -> JobRun {
        JobRun {
            code: Some(code),
            stderr: stderr.into(),
            ..JobRun::default()
        }
    }

    #[test]
    fn only_the_documented_refusal_is_not_a_failure() {
        let msg = format!("gex-tagged: {SHM_TAGGED} 1.17: its tag matching ...");
        assert!(matches!(
            documented_refusal("tagged-all", "shm", &run(1, &msg)),
            Some(Verdict::NotRun(_))
        ));
        // Another program, provider, exit code or message is judged as usual.
        assert_eq!(documented_refusal("am-core", "shm", &run(1, &msg)), None);
        assert_eq!(
            documented_refusal("tagged-all", "tcp;ofi_rxm", &run(1, &msg)),
            None
        );
        assert_eq!(documented_refusal("tagged-all", "shm", &run(2, &msg)), None);
        assert_eq!(
            documented_refusal("tagged-all", "shm", &run(1, "boom")),
            None
        );
        let mut late = run(1, &msg);
        late.timed_out = true;
        assert_eq!(documented_refusal("tagged-all", "shm", &late), None);
    }
}
