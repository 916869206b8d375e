//! Tagged point-to-point messaging, sans IO: the parts of Open MPI's OFI MTL
//! design that do not touch libfabric.
//!
//! * [`layout`]: the tag layouts (`ofi_tag_1`, `ofi_tag_2`, `ofi_tag_full`)
//!   and the choice among them, the match and ignore bits of sends, receives
//!   and synchronous-send acknowledgements, and the limits of each field.
#![forbid(unsafe_code)]

pub mod layout;

pub use layout::TagMode;
