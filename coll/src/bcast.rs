//! Broadcast down a fan-out tree (`gex_Coll_BroadcastNB`, Open MPI
//! coll/ofi's n-way fan-out broadcast).
//!
//! The root sends every chunk to its children at once and is done; any
//! other rank stores each chunk it gets from its parent and forwards it to
//! its children, and is done when it has every chunk. The length is
//! single-valued (known to every rank), so every rank knows the chunking;
//! an empty broadcast still sends one empty chunk 0.

use crate::msg::{Chunking, Config, Msg};
use crate::tree::Tree;
use crate::Error;

/// One rank's state in one broadcast.
#[derive(Debug)]
pub struct Broadcast {
    me: usize,
    parent: Option<usize>,
    children: Vec<usize>,
    chunking: Chunking,
    buf: Vec<u8>,
    got: Vec<bool>,
    missing: u32,
}

impl Broadcast {
    /// Start a broadcast of `len` bytes from `root` over team ranks
    /// `0..size`, as team rank `me`. The root passes its data in `src`
    /// (exactly `len` bytes, taken without a copy); other ranks pass `None`
    /// (ignored if given).
    /// Returns the machine and the messages to send now.
    pub fn new(
        size: usize,
        me: usize,
        root: usize,
        len: usize,
        src: Option<Vec<u8>>,
        cfg: Config,
    ) -> Result<(Broadcast, Vec<Msg>), Error> {
        Broadcast::build(size, me, root, len, src, cfg, true)
    }

    /// [`Broadcast::new`]; the root's messages only when `send`.
    fn build(
        size: usize,
        me: usize,
        root: usize,
        len: usize,
        src: Option<Vec<u8>>,
        cfg: Config,
        send: bool,
    ) -> Result<(Broadcast, Vec<Msg>), Error> {
        let tree = Tree::new(size, root, cfg.fanout)?;
        if me >= size {
            return Err(Error::RankOutsideTeam { rank: me, size });
        }
        let chunking = Chunking::new(len, cfg.max_chunk)?;
        let mut b = Broadcast {
            me,
            parent: tree.parent(me),
            children: tree.children(me).collect(),
            chunking,
            buf: Vec::new(),
            got: Vec::new(),
            missing: chunking.count(),
        };
        let mut out = Vec::new();
        if me == root {
            let src = src.ok_or(Error::MissingSource)?;
            if src.len() != len {
                return Err(Error::SourceLength {
                    got: src.len(),
                    expected: len,
                });
            }
            b.buf = src;
            b.missing = 0;
            for c in (0..chunking.count()).filter(|_| send) {
                b.forward(c, &mut out);
            }
        } else {
            b.buf = vec![0; len];
            b.got = vec![false; chunking.count() as usize];
        }
        Ok((b, out))
    }

    /// Start a broadcast whose root posts the whole payload once for every
    /// other member to read (a board in shared memory): every member's
    /// parent is the root and the payload is one chunk. The root sends no
    /// messages (it posts [`Broadcast::data`]); every other member gets
    /// chunk 0 of `len` bytes from the root through [`Broadcast::on_msg`].
    pub fn posted(
        size: usize,
        me: usize,
        root: usize,
        len: usize,
        src: Option<Vec<u8>>,
    ) -> Result<Broadcast, Error> {
        let cfg = Config {
            fanout: size.saturating_sub(1).max(1),
            max_chunk: len.max(1),
        };
        let (mut b, _) = Broadcast::build(size, me, root, len, src, cfg, false)?;
        b.children.clear();
        Ok(b)
    }

    /// The data held so far (the whole payload on the root).
    pub fn data(&self) -> &[u8] {
        &self.buf
    }

    fn forward(&self, chunk: u32, out: &mut Vec<Msg>) {
        let data = &self.buf[self.chunking.range(chunk)];
        out.extend(self.children.iter().map(|&to| Msg {
            to,
            phase: 0,
            chunk,
            data: data.to_vec(),
            shape: 0,
        }));
    }

    /// Chunk `chunk` arrived from team rank `from`: store it and return the
    /// copies for this rank's children. Rejects a sender other than the
    /// parent, an index out of range, a duplicate and a wrong length.
    pub fn on_msg(&mut self, from: usize, chunk: u32, data: &[u8]) -> Result<Vec<Msg>, Error> {
        if self.parent != Some(from) {
            return Err(Error::UnexpectedSender {
                me: self.me,
                from,
                chunk,
                expected: self.parent.into_iter().collect(),
            });
        }
        let range = self.chunking.check(from, chunk, data.len())?;
        let seen = &mut self.got[chunk as usize];
        if *seen {
            return Err(Error::DuplicateChunk { from, chunk });
        }
        *seen = true;
        self.missing -= 1;
        self.buf[range].copy_from_slice(data);
        let mut out = Vec::with_capacity(self.children.len());
        self.forward(chunk, &mut out);
        Ok(out)
    }

    /// How the payload is cut into chunks.
    pub fn chunking(&self) -> Chunking {
        self.chunking
    }

    /// Every chunk is here (at once on the root).
    pub fn is_done(&self) -> bool {
        self.missing == 0
    }

    /// The broadcast data, once done.
    pub fn into_result(self) -> Option<Vec<u8>> {
        self.is_done().then_some(self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(fanout: usize, max_chunk: usize) -> Config {
        Config { fanout, max_chunk }
    }

    #[test]
    fn root_sends_all_chunks_to_children() {
        let data: Vec<u8> = (0..10).collect();
        let (b, out) = Broadcast::new(5, 1, 1, 10, Some(data.clone()), cfg(2, 4)).unwrap();
        assert!(b.is_done());
        // Virtual children of the root are 1 and 2: team ranks 2 and 3.
        assert_eq!(out.len(), 6);
        assert_eq!(out[0].to, 2);
        assert_eq!(out[1].to, 3);
        assert_eq!(out[5].data, vec![8, 9]);
        assert_eq!(b.into_result(), Some(data));
    }

    #[test]
    fn empty_broadcast_sends_one_empty_chunk() {
        let (_, out) = Broadcast::new(2, 0, 0, 0, Some(vec![]), cfg(2, 4)).unwrap();
        assert_eq!(
            out,
            vec![Msg {
                to: 1,
                phase: 0,
                chunk: 0,
                data: vec![],
                shape: 0,
            }]
        );
        let (mut b, out) = Broadcast::new(2, 1, 0, 0, None, cfg(2, 4)).unwrap();
        assert!(out.is_empty() && !b.is_done());
        assert!(b.on_msg(1, 0, &[]).is_err());
        assert_eq!(b.on_msg(0, 0, &[]), Ok(vec![]));
        assert_eq!(b.into_result(), Some(vec![]));
    }

    #[test]
    fn rejects_bad_messages() {
        let (mut b, _) = Broadcast::new(3, 1, 0, 6, None, cfg(1, 4)).unwrap();
        assert!(matches!(
            b.on_msg(2, 0, &[0; 4]),
            Err(Error::UnexpectedSender { from: 2, .. })
        ));
        assert_eq!(
            b.on_msg(0, 2, &[0; 2]),
            Err(Error::ChunkOutOfRange {
                chunk: 2,
                chunks: 2
            })
        );
        assert_eq!(
            b.on_msg(0, 1, &[0; 4]),
            Err(Error::ChunkLength {
                from: 0,
                chunk: 1,
                len: 4,
                expected: 2
            })
        );
        let out = b.on_msg(0, 1, &[7; 2]).unwrap();
        assert_eq!(out[0].to, 2);
        assert_eq!(
            b.on_msg(0, 1, &[7; 2]),
            Err(Error::DuplicateChunk { from: 0, chunk: 1 })
        );
        assert!(!b.is_done());
        b.on_msg(0, 0, &[1; 4]).unwrap();
        assert_eq!(b.into_result(), Some(vec![1, 1, 1, 1, 7, 7]));
    }

    #[test]
    fn a_posted_broadcast_is_one_chunk_from_the_root_to_everyone() {
        let data: Vec<u8> = (0..100).collect();
        let root = Broadcast::posted(4, 2, 2, 100, Some(data.clone())).unwrap();
        assert!(root.is_done());
        assert_eq!(root.data(), &data[..]);
        for me in [0, 1, 3] {
            let mut b = Broadcast::posted(4, me, 2, 100, None).unwrap();
            assert!(!b.is_done());
            assert!(matches!(
                b.on_msg(if me == 0 { 1 } else { 0 }, 0, &data),
                Err(Error::UnexpectedSender { .. })
            ));
            // The whole payload is chunk 0, and nothing is forwarded.
            assert_eq!(b.on_msg(2, 0, &data), Ok(vec![]));
            assert_eq!(b.into_result(), Some(data.clone()));
        }
    }

    #[test]
    fn root_needs_matching_source() {
        assert_eq!(
            Broadcast::new(2, 0, 0, 3, None, cfg(2, 4)).unwrap_err(),
            Error::MissingSource
        );
        assert_eq!(
            Broadcast::new(2, 0, 0, 3, Some(vec![1]), cfg(2, 4)).unwrap_err(),
            Error::SourceLength {
                got: 1,
                expected: 3
            }
        );
    }
}
