//! The shared-memory neighbourhood of a rank (GASNet's supernode): who is
//! in it, and where their segments are mapped here.

use super::ClientOf;
use crate::pshm::Position;
use crate::sync::Mode;
use crate::transport::Transport;

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    /// The ranks of this rank's supernode, in rank order (GASNet's
    /// neighbourhood with shared memory): their segments are mapped here
    /// and AMs to them travel through shared memory, not the provider.
    /// Only this rank when the shared-memory path is off
    /// (`GASNET_SUPERNODE_MAXSIZE=1`) or no other rank of its host joined.
    pub fn supernode(&self) -> Vec<usize> {
        match &self.core.pshm {
            Some(sh) => sh.members.clone(),
            None => vec![self.core.rank],
        }
    }

    /// This rank's neighbourhood (its supernode) among the job's: how many
    /// there are and which is this rank's (GASNet-EX's
    /// `gex_System_QueryMyPosition`). With the path off every rank is a
    /// neighbourhood of its own.
    pub fn neighbourhood(&self) -> Position {
        self.core.nbrhds.position(self.core.rank)
    }

    /// The neighbourhood (supernode) index of `rank`, as
    /// [`neighbourhood`](Self::neighbourhood) gives each rank its own
    /// (GASNet-1's `gasnet_getNodeInfo` supernode field); `None` for a rank
    /// outside the job. Known from start-up: no communication.
    pub fn neighbourhood_of(&self, rank: usize) -> Option<usize> {
        self.core.nbrhds.of(rank)
    }

    /// Whether puts, gets and AMs to `rank` take the shared-memory path.
    pub fn is_shared(&self, rank: usize) -> bool {
        self.core
            .pshm
            .as_ref()
            .is_some_and(|sh| sh.peer(rank).is_some())
    }

    /// Where `rank`'s segment is mapped in this process, and its length,
    /// when `rank` is in this supernode and segments are attached (this
    /// rank's own included). A runtime may load and store there directly;
    /// the segment is shared memory that other ranks write at any time, so
    /// every access is the caller's `unsafe` to synchronise (as for this
    /// rank's own [`Segment`](super::Segment) view).
    pub fn shared_segment(&self, rank: usize) -> Option<(*mut u8, usize)> {
        let sh = self.core.pshm.as_ref()?;
        let i = sh.peer(rank)?;
        let seg = sh.segments.get()?.get(i)?;
        Some((seg.base, seg.len))
    }
}
