//! Which ranks share a host.

use crate::BootstrapError;

/// The host map of a job: the host index of every rank, the host names,
/// and the ranks of each host. Host indices follow the launcher's host
/// list, and by default the ranks of one host are contiguous (block
/// placement: host 0 gets ranks `0..k`, host 1 the next ones, ...).
///
/// A "host" is a slot of the launcher's host list: when the same machine is
/// listed twice (e.g. `GASNET_SSH_SERVERS="127.0.0.1 127.0.0.1"`) it counts
/// as two hosts. That is always safe for shared-memory grouping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMap {
    rank: usize,
    host_of: Vec<usize>,
    names: Vec<String>,
    ranks_of: Vec<Vec<usize>>,
}

impl HostMap {
    /// Build the map from each rank's `(host index, host name)`, indexed by
    /// rank, as seen by `rank`. Host indices must be `0..H`, each used, each
    /// with one name.
    pub fn new(rank: usize, entries: &[(usize, String)]) -> Result<HostMap, BootstrapError> {
        if rank >= entries.len() {
            return Err(BootstrapError::InvalidArgument(format!(
                "rank {rank} outside a job of {} ranks",
                entries.len()
            )));
        }
        // Hosts are numbered 0.. in the order they appear: a host index no
        // rank could have (from a peer's malformed host map) is refused
        // before anything is allocated for it.
        if let Some((r, (h, _))) = entries
            .iter()
            .enumerate()
            .find(|(_, e)| e.0 >= entries.len())
        {
            return Err(BootstrapError::Protocol(format!(
                "rank {r} is placed on host {h}, but a job of {} ranks has at most as many hosts",
                entries.len()
            )));
        }
        let nhosts = entries.iter().map(|e| e.0).max().map_or(0, |m| m + 1);
        let mut names: Vec<Option<String>> = vec![None; nhosts];
        let mut ranks_of = vec![Vec::new(); nhosts];
        for (r, (h, name)) in entries.iter().enumerate() {
            match &names[*h] {
                Some(n) if n != name => {
                    return Err(BootstrapError::Protocol(format!(
                        "host {h} is named both {n:?} and {name:?}"
                    )))
                }
                _ => names[*h] = Some(name.clone()),
            }
            ranks_of[*h].push(r);
        }
        let names = names
            .into_iter()
            .enumerate()
            .map(|(h, n)| {
                n.ok_or_else(|| BootstrapError::Protocol(format!("host {h} has no rank")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(HostMap {
            rank,
            host_of: entries.iter().map(|e| e.0).collect(),
            names,
            ranks_of,
        })
    }

    /// The map of a single-rank job on host `name`.
    pub fn single(name: &str) -> HostMap {
        HostMap {
            rank: 0,
            host_of: vec![0],
            names: vec![name.to_string()],
            ranks_of: vec![vec![0]],
        }
    }

    /// Number of ranks.
    pub fn nranks(&self) -> usize {
        self.host_of.len()
    }
    /// Number of hosts.
    pub fn nhosts(&self) -> usize {
        self.names.len()
    }
    /// Host index of `rank`.
    pub fn host_of(&self, rank: usize) -> Option<usize> {
        self.host_of.get(rank).copied()
    }
    /// Name of host `host` (as given in the host list, or this machine's
    /// host name for local jobs).
    pub fn host_name(&self, host: usize) -> Option<&str> {
        self.names.get(host).map(String::as_str)
    }
    /// Every host name, by host index.
    pub fn host_names(&self) -> &[String] {
        &self.names
    }
    /// The ranks on host `host`, ascending.
    pub fn ranks_on_host(&self, host: usize) -> &[usize] {
        self.ranks_of.get(host).map_or(&[], Vec::as_slice)
    }
    /// Number of ranks on each host, by host index.
    pub fn ranks_per_host(&self) -> Vec<usize> {
        self.ranks_of.iter().map(Vec::len).collect()
    }
    /// The calling rank's host index.
    pub fn my_host(&self) -> usize {
        self.host_of[self.rank]
    }
    /// The ranks that share the calling rank's host, ascending (includes
    /// the caller).
    pub fn local_ranks(&self) -> &[usize] {
        &self.ranks_of[self.my_host()]
    }
    /// The calling rank's index among [`HostMap::local_ranks`].
    pub fn local_index(&self) -> usize {
        self.local_ranks()
            .iter()
            .position(|&r| r == self.rank)
            .unwrap_or(0)
    }
    /// True when every host's ranks form one contiguous block and hosts
    /// appear in rank order (the default placement).
    pub fn is_block(&self) -> bool {
        self.host_of
            .windows(2)
            .all(|w| w[1] == w[0] || w[1] == w[0] + 1)
    }
}

/// This machine's host name (`localhost` when it cannot be read).
pub fn this_host() -> String {
    nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_queries() {
        // Block placement of 5 ranks on 2 hosts.
        let e: Vec<(usize, String)> = [0, 0, 0, 1, 1]
            .into_iter()
            .map(|h| (h, format!("h{h}")))
            .collect();
        let m = HostMap::new(4, &e).unwrap();
        assert_eq!(m.nhosts(), 2);
        assert_eq!(m.nranks(), 5);
        assert_eq!(m.my_host(), 1);
        assert_eq!(m.local_ranks(), &[3, 4]);
        assert_eq!(m.local_index(), 1);
        assert_eq!(m.ranks_per_host(), vec![3, 2]);
        assert_eq!(m.host_name(1), Some("h1"));
        assert!(m.is_block());
    }

    #[test]
    fn inconsistent_names_refused() {
        let e = vec![(0, "a".to_string()), (0, "b".to_string())];
        assert!(HostMap::new(0, &e).is_err());
        let e = vec![(1, "a".to_string())];
        assert!(HostMap::new(0, &e).is_err());
    }

    #[test]
    fn a_host_index_beyond_the_job_is_refused() {
        let e = HostMap::new(0, &[(usize::MAX / 2, "h".into())]).unwrap_err();
        assert!(e.to_string().contains("rank 0 is placed on host"), "{e}");
    }
}
