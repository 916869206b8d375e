//! Teams: an ordered list of job ranks, and their split by colour and key
//! (GASNet-EX's `gex_TM_Split`).

use crate::Error;

/// A team: the job ranks of its members in team-rank order, and which of
/// them this rank is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    /// Job ranks of the members, indexed by team rank.
    pub members: Vec<usize>,
    /// This rank's team rank.
    pub me: usize,
}

impl Team {
    /// A team of `members` (job ranks in team-rank order) in which this rank
    /// has team rank `me`; checked: non-empty, `me` in range, no job rank
    /// twice.
    pub fn new(members: Vec<usize>, me: usize) -> Result<Team, Error> {
        if members.is_empty() {
            return Err(Error::EmptyTeam);
        }
        if me >= members.len() {
            return Err(Error::RankOutsideTeam {
                rank: me,
                size: members.len(),
            });
        }
        let mut sorted = members.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::DuplicateMember { job_rank: w[0] });
        }
        Ok(Team { members, me })
    }

    /// The team of every job rank, `0..size`, as seen by job rank `rank`.
    pub fn world(rank: usize, size: usize) -> Team {
        Team {
            members: (0..size).collect(),
            me: rank,
        }
    }

    /// Number of members.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// The job rank of team rank `team_rank`.
    pub fn to_job(&self, team_rank: usize) -> Result<usize, Error> {
        // `let ... else`, not `ok_or`: the error is built only when returned.
        let Some(&r) = self.members.get(team_rank) else {
            return Err(Error::RankOutsideTeam {
                rank: team_rank,
                size: self.size(),
            });
        };
        Ok(r)
    }

    /// The team rank of job rank `job_rank`, if it is a member.
    pub fn to_team(&self, job_rank: usize) -> Option<usize> {
        self.members.iter().position(|&j| j == job_rank)
    }
}

/// What one member of the parent contributes to a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitEntry {
    /// The contributor's rank in the parent team.
    pub parent_rank: usize,
    /// The new team to join; `None` is `GEX_COLOR_NONE`: no new team.
    pub colour: Option<u32>,
    /// Orders the members of the new team (ties broken by parent rank).
    pub key: u32,
}

/// Flag word of an encoded entry: a colour is present.
const HAS_COLOUR: u32 = 1;

impl SplitEntry {
    /// Encode as four words for sending: `[parent_rank, flags, colour,
    /// key]`, where bit 0 of `flags` says a colour is present (the colour
    /// word is 0 when not). Parent ranks travel as `u32` (GASNet's
    /// `gex_Rank_t`).
    pub fn encode(&self) -> Result<[u32; 4], Error> {
        let rank = u32::try_from(self.parent_rank).map_err(|_| Error::RankOutsideTeam {
            rank: self.parent_rank,
            size: u32::MAX as usize,
        })?;
        Ok(match self.colour {
            Some(c) => [rank, HAS_COLOUR, c, self.key],
            None => [rank, 0, 0, self.key],
        })
    }

    /// Decode what [`SplitEntry::encode`] produced; unknown flag bits, or a
    /// colour word without the flag, are errors.
    pub fn decode(words: [u32; 4]) -> Result<SplitEntry, Error> {
        let [rank, flags, colour, key] = words;
        if flags & !HAS_COLOUR != 0 {
            return Err(Error::SplitDecode {
                words,
                why: "unknown flag bits",
            });
        }
        let colour = if flags & HAS_COLOUR != 0 {
            Some(colour)
        } else if colour != 0 {
            return Err(Error::SplitDecode {
                words,
                why: "a colour word without the colour flag",
            });
        } else {
            None
        };
        Ok(SplitEntry {
            parent_rank: rank as usize,
            colour,
            key,
        })
    }
}

/// Split `parent` as `gex_TM_Split` does, given every member's entry
/// (`entries[i]` is parent rank `i`'s). Returns the new team this rank
/// belongs to, or `None` when this rank's colour is `None`. The new team is
/// the members sharing this rank's colour, ordered by `(key, parent rank)`.
pub fn split(parent: &Team, entries: &[SplitEntry]) -> Result<Option<Team>, Error> {
    if entries.len() != parent.size() {
        return Err(Error::SplitCount {
            got: entries.len(),
            size: parent.size(),
        });
    }
    if let Some((index, e)) = entries
        .iter()
        .enumerate()
        .find(|(i, e)| e.parent_rank != *i)
    {
        return Err(Error::SplitEntryRank {
            index,
            parent_rank: e.parent_rank,
        });
    }
    let Some(colour) = entries[parent.me].colour else {
        return Ok(None);
    };
    let mut mine: Vec<&SplitEntry> = entries
        .iter()
        .filter(|e| e.colour == Some(colour))
        .collect();
    mine.sort_by_key(|e| (e.key, e.parent_rank));
    let me = mine
        .iter()
        .position(|e| e.parent_rank == parent.me)
        .expect("this rank has the colour it filtered by");
    let members = mine.iter().map(|e| parent.members[e.parent_rank]).collect();
    Ok(Some(Team { members, me }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(parent_rank: usize, colour: Option<u32>, key: u32) -> SplitEntry {
        SplitEntry {
            parent_rank,
            colour,
            key,
        }
    }

    #[test]
    fn rank_translation() {
        let t = Team::new(vec![5, 2, 9], 1).unwrap();
        assert_eq!(t.size(), 3);
        assert_eq!(t.to_job(2), Ok(9));
        assert_eq!(t.to_team(2), Some(1));
        assert_eq!(t.to_team(3), None);
        let e = t.to_job(3).unwrap_err();
        assert_eq!(e, Error::RankOutsideTeam { rank: 3, size: 3 });
        let msg = e.to_string();
        assert!(msg.contains('3') && msg.contains("size 3"), "{msg}");
        assert_eq!(
            Team::new(vec![1, 1], 0),
            Err(Error::DuplicateMember { job_rank: 1 })
        );
        assert_eq!(Team::world(2, 4).members, vec![0, 1, 2, 3]);
    }

    #[test]
    fn split_orders_by_key_then_parent_rank() {
        // Parent: job ranks 10..16; me = parent rank 4.
        let parent = Team::new((10..16).collect(), 4).unwrap();
        let entries = [
            entry(0, Some(1), 5),
            entry(1, Some(2), 0),
            entry(2, Some(1), 3),
            entry(3, None, 0),
            entry(4, Some(1), 5),
            entry(5, Some(1), 0),
        ];
        let t = split(&parent, &entries).unwrap().unwrap();
        assert_eq!(t.members, vec![15, 12, 10, 14]);
        assert_eq!(t.me, 3);
        let none = Team {
            me: 3,
            ..parent.clone()
        };
        assert_eq!(split(&none, &entries), Ok(None));
    }

    #[test]
    fn split_validates_entries() {
        let parent = Team::world(0, 3);
        let e = [entry(0, Some(0), 0), entry(1, Some(0), 0)];
        assert_eq!(
            split(&parent, &e),
            Err(Error::SplitCount { got: 2, size: 3 })
        );
        let e = [entry(0, None, 0), entry(2, None, 0), entry(2, None, 0)];
        assert_eq!(
            split(&parent, &e),
            Err(Error::SplitEntryRank {
                index: 1,
                parent_rank: 2
            })
        );
    }

    #[test]
    fn decode_rejects_malformed() {
        assert!(SplitEntry::decode([0, 2, 0, 0]).is_err());
        assert!(SplitEntry::decode([0, 0, 7, 0]).is_err());
    }

    proptest! {
        #[test]
        fn encode_round_trips(rank in 0u32.., colour in proptest::option::of(0u32..), key in 0u32..) {
            let e = entry(rank as usize, colour, key);
            prop_assert_eq!(SplitEntry::decode(e.encode().unwrap()), Ok(e));
        }

        #[test]
        fn split_partitions(cols in proptest::collection::vec((proptest::option::of(0u32..3), 0u32..4), 1..20)) {
            let n = cols.len();
            let entries: Vec<_> = cols.iter().enumerate().map(|(i, &(c, k))| entry(i, c, k)).collect();
            for me in 0..n {
                let parent = Team::world(me, n);
                match split(&parent, &entries).unwrap() {
                    None => prop_assert!(cols[me].0.is_none()),
                    Some(t) => {
                        prop_assert_eq!(t.members[t.me], me);
                        for w in t.members.windows(2) {
                            prop_assert!((cols[w[0]].1, w[0]) < (cols[w[1]].1, w[1]));
                        }
                        let want = cols.iter().filter(|c| c.0 == cols[me].0).count();
                        prop_assert_eq!(t.size(), want);
                    }
                }
            }
        }
    }
}
