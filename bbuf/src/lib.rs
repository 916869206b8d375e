//! bbuf
