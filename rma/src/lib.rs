//! rma
