//! Provider profiles.
