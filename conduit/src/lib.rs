//! conduit
