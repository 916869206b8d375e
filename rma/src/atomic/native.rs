//! How libfabric performs an atomic operation.

/// Which libfabric call performs an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NativeCall {
    /// `fi_atomic` (no result).
    Atomic,
    /// `fi_fetch_atomic`.
    Fetch,
    /// `fi_compare_atomic`.
    Compare,
}

/// libfabric's `enum fi_op` values the conduit uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NativeOp {
    /// `FI_MIN`.
    Min,
    /// `FI_MAX`.
    Max,
    /// `FI_SUM`.
    Sum,
    /// `FI_PROD`.
    Prod,
    /// `FI_BOR`.
    Bor,
    /// `FI_BAND`.
    Band,
    /// `FI_BXOR`.
    Bxor,
    /// `FI_ATOMIC_READ`.
    Read,
    /// `FI_ATOMIC_WRITE`.
    Write,
    /// `FI_CSWAP`.
    Cswap,
}

/// A libfabric atomic performing one [`super::AtomicOp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Native {
    /// The call.
    pub call: NativeCall,
    /// Its `enum fi_op`.
    pub op: NativeOp,
    /// The operand to send (for `Compare`, the compare value).
    pub operand: u64,
}
