//! Provider selection.
