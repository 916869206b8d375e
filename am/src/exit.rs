//! Collective exit by dissemination: a rank that exits sends an exit
//! message to `rank + d` for `d = 1, 2, 4, ... < N`; a rank that receives
//! one starts its own exit with the same code. A rank's exit is
//! coordinated once it has heard from every distance, which (as in a
//! dissemination barrier) means every rank has started exiting.

/// One rank's exit bookkeeping.
#[derive(Debug, Clone)]
pub struct ExitState {
    rank: usize,
    size: usize,
    heard: Vec<bool>,
    code: Option<i32>,
}

impl ExitState {
    /// State for `rank` of `size`.
    pub fn new(rank: usize, size: usize) -> ExitState {
        ExitState {
            rank,
            size,
            heard: vec![false; Self::distances(size).len()],
            code: None,
        }
    }

    /// The distances `1, 2, 4, ... < size`.
    pub fn distances(size: usize) -> Vec<usize> {
        std::iter::successors(Some(1usize), |d| d.checked_mul(2))
            .take_while(|d| *d < size)
            .collect()
    }

    /// Begin exiting with `code` (the first code wins). Returns the
    /// `(destination, distance)` pairs to send exit messages to, empty if
    /// the exit had already begun.
    pub fn begin(&mut self, code: i32) -> Vec<(usize, usize)> {
        if self.code.is_some() {
            return Vec::new();
        }
        self.code = Some(code);
        Self::distances(self.size)
            .into_iter()
            .map(|d| ((self.rank + d) % self.size, d))
            .collect()
    }

    /// The exit code, once exiting.
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// Record an exit message that travelled `distance`. Returns false for
    /// a distance no rank sends.
    pub fn heard(&mut self, distance: usize) -> bool {
        match Self::distances(self.size)
            .iter()
            .position(|d| *d == distance)
        {
            Some(i) => {
                self.heard[i] = true;
                true
            }
            None => false,
        }
    }

    /// Heard from every distance.
    pub fn coordinated(&self) -> bool {
        self.heard.iter().all(|h| *h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rank_exit_reaches_everyone() {
        for n in 1..=17 {
            let mut st: Vec<ExitState> = (0..n).map(|r| ExitState::new(r, n)).collect();
            let mut queue = st[n / 2]
                .begin(3)
                .into_iter()
                .map(|(d, dist)| (n / 2, d, dist))
                .collect::<Vec<_>>();
            while let Some((_src, dest, dist)) = queue.pop() {
                assert!(st[dest].heard(dist));
                for (d2, dist2) in st[dest].begin(3) {
                    queue.push((dest, d2, dist2));
                }
            }
            assert!(
                st.iter().all(|s| s.code() == Some(3) && s.coordinated()),
                "n={n}"
            );
        }
    }

    #[test]
    fn first_code_wins_and_bad_distance() {
        let mut s = ExitState::new(0, 4);
        assert_eq!(s.begin(2), vec![(1, 1), (2, 2)]);
        assert!(s.begin(5).is_empty());
        assert_eq!(s.code(), Some(2));
        assert!(!s.heard(3));
        assert!(!s.coordinated());
    }
}
