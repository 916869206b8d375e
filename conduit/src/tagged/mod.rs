//! Tagged point-to-point messaging over `fi_tagged` (Open MPI's OFI MTL
//! design, `../shared/seeds/ompi-mtl-ofi-README.txt`), beside Active
//! Messages and RMA in the same client.
//!
//! Start the client with [`crate::client::Options::tagged`]; then
//! `client.tagged_world()` is the world [`Comm`]:
//!
//! ```no_run
//! use conduit::client::{Client, Options};
//!
//! let c = Client::init_with(Options::new(()).tagged()).unwrap();
//! let world = c.tagged_world().unwrap();
//! let (me, n) = (world.rank(), world.size());
//! world.send(&me.to_le_bytes(), (me + 1) % n, 7).unwrap();
//! let mut buf = [0u8; 4];
//! let st = world.recv(&mut buf, None, Some(7)).unwrap();
//! assert_eq!(st.source, (me + n - 1) % n);
//! ```
//!
//! * The tag layout (`GASNET_OFI_TAG_MODE`) is chosen at start-up as the
//!   seed describes: [`tagged::Layout`].
//! * Tagged traffic has endpoints of its own (in a fabric and domain of the
//!   client's provider and device): the AM endpoints post multi-receive
//!   buffers for `FI_MSG` and read `FI_CQ_FORMAT_DATA` queues, while tagged
//!   receives are posted one per operation into the caller's buffer and
//!   read `FI_CQ_FORMAT_TAGGED`; a scalable endpoint's contexts are
//!   created lazily, as communicators are made. One progress call (the
//!   client's `poll`, and every wait) serves both.

mod claim;
mod comm;
pub(crate) mod engine;
mod error;
pub(crate) mod open;
mod ops;
mod paths;
mod scope;
mod spill;

pub use claim::Message;
pub use comm::Comm;
pub use engine::TaggedStats;
pub use error::TaggedError;
pub use open::Settings;
pub use scope::{Request, TagScope};
pub use tagged::{Layout, Status, TagMode};

use crate::client::{ClientOf, Error};
use crate::sync::Mode;
use crate::transport::Transport;

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    /// The world communicator of tagged messaging
    /// ([`TaggedError::NotEnabled`] unless the client was started with
    /// [`crate::client::Options::tagged`]).
    pub fn tagged_world(&self) -> Result<Comm<'_, M, S, T>, Error> {
        Comm::world(&self.core)
    }

    /// The tag layout in use, if tagged messaging is enabled.
    pub fn tagged_layout(&self) -> Option<Layout> {
        self.core.tagged.get().map(|e| e.layout)
    }

    /// Tagged-messaging counters, if enabled.
    pub fn tagged_stats(&self) -> Option<&TaggedStats<M::Counter>> {
        self.core.tagged.get().map(|e| &e.stats)
    }
}
