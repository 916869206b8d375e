//! Lists of node (rank) numbers such as `0,2-4,6`, as taken by
//! `GASNET_OFI_LIST_DEVICES_NODES`.

use std::fmt;
use std::ops::RangeInclusive;

/// What a node list accepts, for error messages.
pub const NODE_LIST_ACCEPTED: &str =
    "a comma-separated list of node numbers and ranges such as 0,2-4,6, or * for all nodes";

/// A set of nodes: all of them, or a list of inclusive ranges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NodeList {
    /// Every node (the variable is unset, empty or `*`).
    #[default]
    All,
    /// Only the nodes in these inclusive ranges (a single node `n` is `n..=n`).
    Ranges(Vec<RangeInclusive<usize>>),
}

impl NodeList {
    /// Parse `0,2-4,6`; an empty (or all-blank) text and `*` mean all nodes.
    /// Blanks around numbers are ignored. Returns `None` on anything else:
    /// empty items, a range whose end is below its start, signs or letters.
    pub fn parse(text: &str) -> Option<NodeList> {
        let t = text.trim();
        if t.is_empty() || t == "*" {
            return Some(NodeList::All);
        }
        let mut ranges = Vec::new();
        for item in t.split(',') {
            let item = item.trim();
            let range = match item.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (parse_node(a)?, parse_node(b)?);
                    if b < a {
                        return None;
                    }
                    a..=b
                }
                None => {
                    let n = parse_node(item)?;
                    n..=n
                }
            };
            ranges.push(range);
        }
        Some(NodeList::Ranges(ranges))
    }

    /// Whether node `rank` is in the list.
    pub fn contains(&self, rank: usize) -> bool {
        match self {
            NodeList::All => true,
            NodeList::Ranges(ranges) => ranges.iter().any(|r| r.contains(&rank)),
        }
    }

    /// True for the unlimited list.
    pub fn is_all(&self) -> bool {
        matches!(self, NodeList::All)
    }
}

fn parse_node(s: &str) -> Option<usize> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl fmt::Display for NodeList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeList::All => f.write_str("*"),
            NodeList::Ranges(ranges) => {
                for (i, r) in ranges.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    if r.start() == r.end() {
                        write!(f, "{}", r.start())?;
                    } else {
                        write!(f, "{}-{}", r.start(), r.end())?;
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_forms() {
        assert_eq!(NodeList::parse(""), Some(NodeList::All));
        assert_eq!(NodeList::parse("  "), Some(NodeList::All));
        assert_eq!(NodeList::parse("*"), Some(NodeList::All));
        assert!(NodeList::All.contains(123_456));
    }

    #[test]
    fn ranges_and_singles() {
        let l = NodeList::parse("0,2-4,6").unwrap();
        let inside: Vec<usize> = (0..10).filter(|&n| l.contains(n)).collect();
        assert_eq!(inside, vec![0, 2, 3, 4, 6]);
        assert_eq!(l.to_string(), "0,2-4,6");
        let l = NodeList::parse(" 7 , 1 - 2 ").unwrap();
        assert!(l.contains(1) && l.contains(2) && l.contains(7) && !l.contains(3));
        assert_eq!(NodeList::parse("5-5").unwrap().to_string(), "5");
    }

    #[test]
    fn rejects() {
        for bad in [
            "a", "1,,2", "1-", "-1", "4-2", "1.5", "+3", "1-2-3", ",", "*,1",
        ] {
            assert_eq!(NodeList::parse(bad), None, "{bad:?}");
        }
    }
}
