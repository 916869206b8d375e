//! How the transport shows in `Debug` output: its provider and its number
//! of endpoint sets.

use super::{DomainLock, OfiTransport};

impl<L: DomainLock> std::fmt::Debug for OfiTransport<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfiTransport")
            .field("provider", &self.facts.provider)
            .field("sets", &self.nsets)
            .finish()
    }
}
