//! spawner
