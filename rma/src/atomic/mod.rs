//! Remote atomic operations (GASNet-EX's atomic domains), with no libfabric
//! in them: the operations and types, which operation is valid for which
//! type, what each computes, and how each maps onto a libfabric atomic
//! (`fi_atomic`, `fi_fetch_atomic`, `fi_compare_atomic`).
//!
//! Values travel as 64-bit patterns ([`AtomicValue::to_bits`]): a 32-bit
//! type uses the low 32 bits, floats their IEEE bit patterns.
//!
//! Semantics (GASNet-EX, "Atomic Operations"), with `op0` the target's
//! value before the operation:
//!
//! | operation | new target value | fetched |
//! |---|---|---|
//! | `Set` | `op1` | |
//! | `Get` | `op0` (unchanged) | `op0` |
//! | `Swap` | `op1` | `op0` |
//! | `Cas` / `Fcas` | `op0 == op1 ? op2 : op0` | `op0` (`Fcas`) |
//! | `Add` `Sub` `Mult` `Min` `Max` `And` `Or` `Xor` | `op0 <op> op1` | `op0` (fetching forms) |
//! | `Inc` / `Dec` | `op0 + 1` / `op0 - 1` | `op0` (fetching forms) |
//!
//! Integer arithmetic wraps. Bit-wise operations are for integer types only.
//! Floating-point `Cas` compares bit patterns, as on integers of the same
//! width (GASNet-EX allows it; libfabric's `FI_CSWAP`, which native domains
//! use, does so): `-0.0` does not match `0.0`, and a NaN matches the same
//! NaN, so a domain gives the same answer by AM and natively.

use std::fmt;

mod arith;
mod native;
mod value;

use arith::{arith, equal, Arith};
pub use native::{Native, NativeCall, NativeOp};
pub use value::AtomicValue;

/// The data type of an atomic domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicType {
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl AtomicType {
    /// Every type.
    pub const ALL: [AtomicType; 6] = [
        AtomicType::I32,
        AtomicType::U32,
        AtomicType::I64,
        AtomicType::U64,
        AtomicType::F32,
        AtomicType::F64,
    ];

    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            AtomicType::I32 | AtomicType::U32 | AtomicType::F32 => 4,
            _ => 8,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, AtomicType::F32 | AtomicType::F64)
    }

    /// The name GASNet-EX gives it (`GEX_DT_I32` ...).
    pub fn name(self) -> &'static str {
        match self {
            AtomicType::I32 => "i32",
            AtomicType::U32 => "u32",
            AtomicType::I64 => "i64",
            AtomicType::U64 => "u64",
            AtomicType::F32 => "f32",
            AtomicType::F64 => "f64",
        }
    }

    /// Keep only the bits the type uses.
    pub fn mask(self, bits: u64) -> u64 {
        if self.size() == 4 {
            bits & 0xffff_ffff
        } else {
            bits
        }
    }
}

impl fmt::Display for AtomicType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An atomic operation (GASNet-EX's `GEX_OP_*` valid for atomics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicOp {
    /// Write `op1`.
    Set = 0,
    /// Read.
    Get,
    /// Write `op1`, fetch the old value.
    Swap,
    /// Compare with `op1`, write `op2` if equal.
    Cas,
    /// Fetching `Cas`.
    Fcas,
    /// Add `op1`.
    Add,
    /// Fetching `Add`.
    Fadd,
    /// Subtract `op1`.
    Sub,
    /// Fetching `Sub`.
    Fsub,
    /// Add one.
    Inc,
    /// Fetching `Inc`.
    Finc,
    /// Subtract one.
    Dec,
    /// Fetching `Dec`.
    Fdec,
    /// Multiply by `op1`.
    Mult,
    /// Fetching `Mult`.
    Fmult,
    /// Minimum with `op1`.
    Min,
    /// Fetching `Min`.
    Fmin,
    /// Maximum with `op1`.
    Max,
    /// Fetching `Max`.
    Fmax,
    /// Bit-wise and with `op1` (integers).
    And,
    /// Fetching `And`.
    Fand,
    /// Bit-wise or with `op1` (integers).
    Or,
    /// Fetching `Or`.
    For,
    /// Bit-wise exclusive or with `op1` (integers).
    Xor,
    /// Fetching `Xor`.
    Fxor,
}

impl AtomicOp {
    /// Every operation.
    pub const ALL: [AtomicOp; 25] = [
        AtomicOp::Set,
        AtomicOp::Get,
        AtomicOp::Swap,
        AtomicOp::Cas,
        AtomicOp::Fcas,
        AtomicOp::Add,
        AtomicOp::Fadd,
        AtomicOp::Sub,
        AtomicOp::Fsub,
        AtomicOp::Inc,
        AtomicOp::Finc,
        AtomicOp::Dec,
        AtomicOp::Fdec,
        AtomicOp::Mult,
        AtomicOp::Fmult,
        AtomicOp::Min,
        AtomicOp::Fmin,
        AtomicOp::Max,
        AtomicOp::Fmax,
        AtomicOp::And,
        AtomicOp::Fand,
        AtomicOp::Or,
        AtomicOp::For,
        AtomicOp::Xor,
        AtomicOp::Fxor,
    ];

    /// The operation with this code (what [`AtomicOp::code`] gives).
    pub fn from_code(c: u8) -> Option<AtomicOp> {
        AtomicOp::ALL.get(c as usize).copied()
    }

    /// A small number naming the operation on the wire.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// GASNet-EX's name (`GEX_OP_FADD` is `fadd`).
    pub fn name(self) -> &'static str {
        use AtomicOp::*;
        match self {
            Set => "set",
            Get => "get",
            Swap => "swap",
            Cas => "cas",
            Fcas => "fcas",
            Add => "add",
            Fadd => "fadd",
            Sub => "sub",
            Fsub => "fsub",
            Inc => "inc",
            Finc => "finc",
            Dec => "dec",
            Fdec => "fdec",
            Mult => "mult",
            Fmult => "fmult",
            Min => "min",
            Fmin => "fmin",
            Max => "max",
            Fmax => "fmax",
            And => "and",
            Fand => "fand",
            Or => "or",
            For => "for",
            Xor => "xor",
            Fxor => "fxor",
        }
    }

    /// Whether it returns the target's old value.
    pub fn is_fetching(self) -> bool {
        use AtomicOp::*;
        matches!(
            self,
            Get | Swap | Fcas | Fadd | Fsub | Finc | Fdec | Fmult | Fmin | Fmax | Fand | For | Fxor
        )
    }

    /// How many operands it reads (`op1`, `op2`).
    pub fn operands(self) -> usize {
        use AtomicOp::*;
        match self {
            Get | Inc | Finc | Dec | Fdec => 0,
            Cas | Fcas => 2,
            _ => 1,
        }
    }

    /// Whether it is valid on `ty` (bit-wise operations are for integers).
    pub fn valid_for(self, ty: AtomicType) -> bool {
        use AtomicOp::*;
        !(ty.is_float() && matches!(self, And | Fand | Or | For | Xor | Fxor))
    }

    /// The target's new value given its old one (`None`: unchanged).
    pub fn apply(self, ty: AtomicType, old: u64, op1: u64, op2: u64) -> Option<u64> {
        use AtomicOp::*;
        let v = match self {
            Get => return None,
            Set | Swap => op1,
            Cas | Fcas => {
                if equal(ty, old, op1) {
                    op2
                } else {
                    return None;
                }
            }
            Add | Fadd => arith(ty, old, op1, Arith::Add),
            Sub | Fsub => arith(ty, old, op1, Arith::Sub),
            Inc | Finc => arith(ty, old, ty.one(), Arith::Add),
            Dec | Fdec => arith(ty, old, ty.one(), Arith::Sub),
            Mult | Fmult => arith(ty, old, op1, Arith::Mul),
            Min | Fmin => arith(ty, old, op1, Arith::Min),
            Max | Fmax => arith(ty, old, op1, Arith::Max),
            And | Fand => old & op1,
            Or | For => old | op1,
            Xor | Fxor => old ^ op1,
        };
        Some(ty.mask(v))
    }

    /// How libfabric performs it: the call, its `enum fi_op`, and the
    /// operand to send (subtraction, increment and decrement become a sum
    /// with the negated operand, one, or minus one).
    pub fn native(self, ty: AtomicType, op1: u64) -> Native {
        use AtomicOp::*;
        use NativeCall::{Atomic, Compare, Fetch};
        use NativeOp as N;
        let (call, op, operand) = match self {
            Set => (Atomic, N::Write, op1),
            Get => (Fetch, N::Read, 0),
            Swap => (Fetch, N::Write, op1),
            Cas => (Compare, N::Cswap, op1),
            Fcas => (Compare, N::Cswap, op1),
            Add => (Atomic, N::Sum, op1),
            Fadd => (Fetch, N::Sum, op1),
            Sub => (Atomic, N::Sum, ty.negate(op1)),
            Fsub => (Fetch, N::Sum, ty.negate(op1)),
            Inc => (Atomic, N::Sum, ty.one()),
            Finc => (Fetch, N::Sum, ty.one()),
            Dec => (Atomic, N::Sum, ty.negate(ty.one())),
            Fdec => (Fetch, N::Sum, ty.negate(ty.one())),
            Mult => (Atomic, N::Prod, op1),
            Fmult => (Fetch, N::Prod, op1),
            Min => (Atomic, N::Min, op1),
            Fmin => (Fetch, N::Min, op1),
            Max => (Atomic, N::Max, op1),
            Fmax => (Fetch, N::Max, op1),
            And => (Atomic, N::Band, op1),
            Fand => (Fetch, N::Band, op1),
            Or => (Atomic, N::Bor, op1),
            For => (Fetch, N::Bor, op1),
            Xor => (Atomic, N::Bxor, op1),
            Fxor => (Fetch, N::Bxor, op1),
        };
        Native {
            call,
            op,
            operand: ty.mask(operand),
        }
    }
}

impl fmt::Display for AtomicOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of operations (what an atomic domain is created with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct OpSet(u32);

impl OpSet {
    /// No operations.
    pub fn empty() -> OpSet {
        OpSet(0)
    }
    /// Every operation valid on `ty`.
    pub fn all_for(ty: AtomicType) -> OpSet {
        AtomicOp::ALL
            .iter()
            .filter(|o| o.valid_for(ty))
            .copied()
            .collect()
    }
    /// Add `op`.
    pub fn with(self, op: AtomicOp) -> OpSet {
        OpSet(self.0 | 1 << op.code())
    }
    /// Whether `op` is in the set.
    pub fn contains(self, op: AtomicOp) -> bool {
        self.0 & (1 << op.code()) != 0
    }
    /// The operations, in [`AtomicOp::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = AtomicOp> {
        AtomicOp::ALL.into_iter().filter(move |o| self.contains(*o))
    }
    /// Whether it is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The set as bits (bit `op.code()` per operation).
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl FromIterator<AtomicOp> for OpSet {
    fn from_iter<I: IntoIterator<Item = AtomicOp>>(it: I) -> OpSet {
        it.into_iter().fold(OpSet::empty(), OpSet::with)
    }
}

impl fmt::Display for OpSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = self.iter().map(AtomicOp::name).collect();
        write!(f, "{{{}}}", names.join(", "))
    }
}

/// Why an atomic domain or operation is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtomicError {
    /// An operation that is not valid on the domain's type.
    #[error(
        "atomic operation {op} is not valid on {ty} (bit-wise operations are for integer types)"
    )]
    InvalidForType {
        /// The operation.
        op: AtomicOp,
        /// The type.
        ty: AtomicType,
    },
    /// A domain with no operations.
    #[error("an atomic domain needs at least one operation")]
    NoOperations,
    /// An operation the domain was not created with.
    #[error("atomic operation {op} is not one of the domain's operations {ops}")]
    NotInDomain {
        /// The operation.
        op: AtomicOp,
        /// The domain's operations.
        ops: OpSet,
    },
    /// A target not aligned to the type's size.
    #[error("atomic target offset {offset} is not a multiple of {ty}'s size {size}")]
    Misaligned {
        /// The offset.
        offset: usize,
        /// The type.
        ty: AtomicType,
        /// Its size.
        size: usize,
    },
}

/// Check a domain's type and operations.
pub fn check_domain(ty: AtomicType, ops: OpSet) -> Result<(), AtomicError> {
    if ops.is_empty() {
        return Err(AtomicError::NoOperations);
    }
    match ops.iter().find(|o| !o.valid_for(ty)) {
        Some(op) => Err(AtomicError::InvalidForType { op, ty }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
