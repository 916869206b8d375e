//! Safe libfabric wrapper.
