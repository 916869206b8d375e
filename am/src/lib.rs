//! am
