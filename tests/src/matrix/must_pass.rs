//! Which failures fail the run: those on the must-pass providers
//! (`--must-pass`), and must-pass providers missing.

use super::markdown::Matrix;
use super::name_matches;

impl Matrix {
    /// Whether `provider` is one whose failures fail the run.
    pub fn must_pass(&self, provider: &str) -> bool {
        self.must_pass.iter().any(|m| name_matches(m, provider))
    }

    /// The failures that fail the run: on must-pass providers, and
    /// must-pass providers not offered here (unless `requested`, the
    /// `--providers` entries, left them out). One line each.
    pub fn must_pass_failures(&self, requested: &[String]) -> Vec<String> {
        let mut fatal: Vec<String> = Vec::new();
        for p in self
            .providers
            .iter()
            .filter(|p| self.must_pass(&p.facts.name))
        {
            if let Some(why) = &p.facts.unusable_reason {
                fatal.push(format!("{}: not usable: {why}", p.facts.name));
            }
            for (id, line) in p.failures() {
                fatal.push(format!("{} {id}: {line}", p.facts.name));
            }
        }
        for mp in &self.must_pass {
            let listed = self.offered.iter().any(|p| name_matches(mp, p));
            let wanted = requested.is_empty()
                || requested.iter().any(|r| {
                    r == mp
                        || self
                            .offered
                            .iter()
                            .any(|p| name_matches(r, p) && name_matches(mp, p))
                });
            if !listed && wanted {
                fatal.push(format!("must-pass provider {mp} is not offered here"));
            }
        }
        fatal
    }
}

#[cfg(test)]
mod tests {
    use super::super::bench::BenchOutcome;
    use super::super::fixtures::{provider, run};
    use super::super::Verdict;

    #[test]
    fn must_pass_failures_name_the_provider() {
        let mut m = run(
            "1.17",
            vec![provider(
                "shm",
                &[("am-core", Verdict::Fail("boom".into()))],
                BenchOutcome::Failed("bench boom".into()),
            )],
            &["shm", "sockets"],
        );
        m.must_pass = vec!["shm".into(), "tcp".into()];
        assert_eq!(
            m.must_pass_failures(&[]),
            [
                "shm am-core: boom",
                "shm gex-bench: bench boom",
                "must-pass provider tcp is not offered here"
            ]
        );
        // --providers shm leaves tcp out: its absence is no failure.
        assert_eq!(m.must_pass_failures(&["shm".into()]).len(), 2);
        assert_eq!(m.must_pass_failures(&["tcp".into()]).len(), 3);
    }
}
