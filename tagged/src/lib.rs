//! Tagged point-to-point messaging, sans IO: the parts of Open MPI's OFI MTL
//! design that do not touch libfabric.
//!
//! * [`layout`]: the tag layouts (`ofi_tag_1`, `ofi_tag_2`, `ofi_tag_full`)
//!   and the choice among them, the match and ignore bits of sends, receives
//!   and synchronous-send acknowledgements, and the limits of each field;
//! * [`comm`]: communicator ids in use and their collective agreement, the
//!   members of a split;
//! * [`request`]: the request table a completion's context indexes, and
//!   what a completion does to each kind of request.
#![forbid(unsafe_code)]

pub mod comm;
pub mod layout;
pub mod request;

pub use layout::{Decoded, Layout, LayoutError, LimitError, ProviderTagFacts, TagMode};
pub use request::{Kind, OpError, Part, ReqId, Requests, Status, NO_OWNER};
