//! Reduction operators and data types: GASNet-EX's built-in `GEX_OP_*` /
//! `GEX_DT_*` for reductions, and user-defined operators.
//!
//! Operands are native-endian byte buffers holding whole elements.
//!
//! Operand order: a reduction over team ranks `0..n` with contributions
//! `x0 .. x(n-1)` yields `((x0 ∘ x1) ∘ x2) ∘ ... ∘ x(n-1)`. Every combine
//! here has the form `acc = acc ∘ other`: the accumulator is the left
//! operand. (Commutative operators may be combined in any order; only
//! non-commutative user operators rely on this.)

use std::fmt;
use std::sync::Arc;

use crate::Error;

/// Built-in data types (`GEX_DT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `GEX_DT_I32`: `int32_t`.
    I32,
    /// `GEX_DT_U32`: `uint32_t`.
    U32,
    /// `GEX_DT_I64`: `int64_t`.
    I64,
    /// `GEX_DT_U64`: `uint64_t`.
    U64,
    /// `GEX_DT_FLT`: `float`.
    F32,
    /// `GEX_DT_DBL`: `double`.
    F64,
}

impl DType {
    /// Every built-in data type.
    pub const ALL: [DType; 6] = [
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F32,
        DType::F64,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// An integer type (as opposed to floating point).
    pub fn is_integer(self) -> bool {
        !matches!(self, DType::F32 | DType::F64)
    }
}

/// Built-in reduction operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `GEX_OP_ADD`: `a + b` (integers wrap).
    Sum,
    /// `GEX_OP_MULT`: `a * b` (integers wrap).
    Prod,
    /// `GEX_OP_MIN`: `a < b ? a : b`.
    Min,
    /// `GEX_OP_MAX`: `a > b ? a : b`.
    Max,
    /// `GEX_OP_AND`: bit-wise and (integers only).
    Band,
    /// `GEX_OP_OR`: bit-wise or (integers only).
    Bor,
    /// `GEX_OP_XOR`: bit-wise exclusive or (integers only).
    Bxor,
    /// Logical and, `1` if both are non-zero else `0` (integers only; an
    /// extension: GASNet-EX has no logical operators, MPI's `MPI_LAND`).
    Land,
    /// Logical or, `1` if either is non-zero else `0` (integers only; an
    /// extension like [`Op::Land`]).
    Lor,
}

impl Op {
    /// Every built-in operator.
    pub const ALL: [Op; 9] = [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::Band,
        Op::Bor,
        Op::Bxor,
        Op::Land,
        Op::Lor,
    ];
}

/// Whether `op` may reduce `dtype`, following GASNet-EX: `ADD`, `MULT`,
/// `MIN` and `MAX` are valid for every built-in type, the bit-wise
/// operators only for the integer types; the logical operators (not in
/// GASNet-EX) are likewise integer-only.
pub fn validity(op: Op, dtype: DType) -> Result<(), Error> {
    match op {
        Op::Sum | Op::Prod | Op::Min | Op::Max => Ok(()),
        Op::Band | Op::Bor | Op::Bxor | Op::Land | Op::Lor if dtype.is_integer() => Ok(()),
        _ => Err(Error::InvalidOp { op, dtype }),
    }
}

/// `acc` and `other` have equal lengths, a multiple of `elem_size`.
fn check_lengths(acc: &[u8], other: &[u8], elem_size: usize) -> Result<(), Error> {
    if acc.len() != other.len() {
        return Err(Error::LengthMismatch {
            acc: acc.len(),
            other: other.len(),
        });
    }
    if elem_size == 0 {
        return Err(Error::ZeroElemSize);
    }
    if acc.len() % elem_size != 0 {
        return Err(Error::NotElementMultiple {
            len: acc.len(),
            elem_size,
        });
    }
    Ok(())
}

/// Apply `f` element-wise to `N`-byte native-endian elements. Generic over
/// the operator (not a function pointer), so each operator's loop is
/// compiled on its own with `f` inlined and can be vectorised.
#[inline(always)]
fn apply<const N: usize, T: Copy>(
    acc: &mut [u8],
    other: &[u8],
    from: impl Fn([u8; N]) -> T,
    to: impl Fn(T) -> [u8; N],
    f: impl Fn(T, T) -> T,
) {
    for (a, b) in acc.chunks_exact_mut(N).zip(other.chunks_exact(N)) {
        let x = from(a.try_into().expect("exact chunk"));
        let y = from(b.try_into().expect("exact chunk"));
        a.copy_from_slice(&to(f(x, y)));
    }
}

macro_rules! int_combine {
    ($t:ty, $op:expr, $acc:expr, $other:expr) => {{
        let (from, to) = (<$t>::from_ne_bytes, <$t>::to_ne_bytes);
        match $op {
            Op::Sum => apply($acc, $other, from, to, |a: $t, b| a.wrapping_add(b)),
            Op::Prod => apply($acc, $other, from, to, |a: $t, b| a.wrapping_mul(b)),
            Op::Min => apply($acc, $other, from, to, |a: $t, b| a.min(b)),
            Op::Max => apply($acc, $other, from, to, |a: $t, b| a.max(b)),
            Op::Band => apply($acc, $other, from, to, |a: $t, b| a & b),
            Op::Bor => apply($acc, $other, from, to, |a: $t, b| a | b),
            Op::Bxor => apply($acc, $other, from, to, |a: $t, b| a ^ b),
            Op::Land => apply($acc, $other, from, to, |a: $t, b| {
                <$t>::from(a != 0 && b != 0)
            }),
            Op::Lor => apply($acc, $other, from, to, |a: $t, b| {
                <$t>::from(a != 0 || b != 0)
            }),
        }
    }};
}

macro_rules! float_combine {
    ($t:ty, $op:expr, $acc:expr, $other:expr) => {{
        let (from, to) = (<$t>::from_ne_bytes, <$t>::to_ne_bytes);
        match $op {
            Op::Sum => apply($acc, $other, from, to, |a: $t, b| a + b),
            Op::Prod => apply($acc, $other, from, to, |a: $t, b| a * b),
            // `if` rather than `min`/`max`: a NaN operand keeps the
            // comparison's semantics (as before), not IEEE minNum's.
            Op::Min => apply($acc, $other, from, to, |a: $t, b| if a < b { a } else { b }),
            Op::Max => apply($acc, $other, from, to, |a: $t, b| if a > b { a } else { b }),
            _ => unreachable!("validity() rejects bit-wise and logical floats"),
        }
    }};
}

/// `acc = acc op other`, element-wise over native-endian elements of
/// `dtype`. The lengths must be equal and a multiple of `dtype.size()`.
pub fn combine(op: Op, dtype: DType, acc: &mut [u8], other: &[u8]) -> Result<(), Error> {
    validity(op, dtype)?;
    check_lengths(acc, other, dtype.size())?;
    match dtype {
        DType::I32 => int_combine!(i32, op, acc, other),
        DType::U32 => int_combine!(u32, op, acc, other),
        DType::I64 => int_combine!(i64, op, acc, other),
        DType::U64 => int_combine!(u64, op, acc, other),
        DType::F32 => float_combine!(f32, op, acc, other),
        DType::F64 => float_combine!(f64, op, acc, other),
    }
    Ok(())
}

/// The function of a user-defined operator: `f(acc, other)` computes
/// `acc = acc ∘ other` element-wise.
pub type UserFn = dyn Fn(&mut [u8], &[u8]) + Send + Sync;

/// A user-defined reduction operator (`GEX_OP_USER` / `GEX_OP_USER_NC`).
#[derive(Clone)]
pub struct UserOp {
    /// `f(acc, other)` computes `acc = acc ∘ other` element-wise: `acc` is
    /// the left operand and receives the result. Both slices have the same
    /// length, a positive multiple of the element size (any number of
    /// elements, not necessarily the whole contribution).
    pub f: Arc<UserFn>,
    /// Whether `a ∘ b == b ∘ a`; non-commutative operators are reduced
    /// serially in team-rank order.
    pub commutative: bool,
}

impl fmt::Debug for UserOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserOp")
            .field("commutative", &self.commutative)
            .finish_non_exhaustive()
    }
}

/// The reduction a collective performs.
#[derive(Debug, Clone)]
pub enum Reduction {
    /// A built-in operator on a built-in type (always commutative).
    Builtin(Op, DType),
    /// A user-defined operator on elements of `elem_size` bytes.
    User {
        /// The operator.
        op: UserOp,
        /// Bytes per element (non-zero).
        elem_size: usize,
    },
}

impl Reduction {
    /// Check the reduction is usable: a valid built-in pair, or a non-zero
    /// user element size.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Reduction::Builtin(op, dt) => validity(*op, *dt),
            Reduction::User { elem_size: 0, .. } => Err(Error::ZeroElemSize),
            Reduction::User { .. } => Ok(()),
        }
    }

    /// What a reduction machine checks at its start: a non-empty team of
    /// `n` with `me` in it, a usable reduction, and a contribution of
    /// `len` bytes in whole elements.
    pub fn check_start(&self, n: usize, me: usize, len: usize) -> Result<(), Error> {
        if n == 0 {
            return Err(Error::EmptyTeam);
        }
        if me >= n {
            return Err(Error::RankOutsideTeam { rank: me, size: n });
        }
        self.validate()?;
        let elem_size = self.elem_size();
        if len % elem_size != 0 {
            return Err(Error::NotElementMultiple { len, elem_size });
        }
        Ok(())
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> usize {
        match self {
            Reduction::Builtin(_, dt) => dt.size(),
            Reduction::User { elem_size, .. } => *elem_size,
        }
    }

    /// Whether operands may be combined in any order.
    pub fn commutative(&self) -> bool {
        match self {
            Reduction::Builtin(..) => true,
            Reduction::User { op, .. } => op.commutative,
        }
    }

    /// `acc = acc ∘ other` (see the module documentation for the order).
    pub fn combine(&self, acc: &mut [u8], other: &[u8]) -> Result<(), Error> {
        match self {
            Reduction::Builtin(op, dt) => combine(*op, *dt, acc, other),
            Reduction::User { op, elem_size } => {
                check_lengths(acc, other, *elem_size)?;
                if !acc.is_empty() {
                    (op.f)(acc, other);
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn validity_follows_gasnet() {
        for dt in DType::ALL {
            for op in Op::ALL {
                let ok = validity(op, dt).is_ok();
                let arith = matches!(op, Op::Sum | Op::Prod | Op::Min | Op::Max);
                assert_eq!(ok, arith || dt.is_integer(), "{op:?} {dt:?}");
            }
        }
        let msg = validity(Op::Bxor, DType::F64).unwrap_err().to_string();
        assert!(msg.contains("Bxor") && msg.contains("F64"), "{msg}");
    }

    #[test]
    fn integer_ops() {
        let mut a = i32s(&[i32::MAX, 3, 0, -4]);
        combine(Op::Sum, DType::I32, &mut a, &i32s(&[1, 4, 0, 2])).unwrap();
        assert_eq!(a, i32s(&[i32::MIN, 7, 0, -2]));
        let mut a = i32s(&[5, 0, 0, -3]);
        combine(Op::Land, DType::I32, &mut a, &i32s(&[7, 1, 0, 2])).unwrap();
        assert_eq!(a, i32s(&[1, 0, 0, 1]));
        let mut a = i32s(&[5, 0, 0, -3]);
        combine(Op::Lor, DType::I32, &mut a, &i32s(&[7, 1, 0, 0])).unwrap();
        assert_eq!(a, i32s(&[1, 1, 0, 1]));
        let mut a = i32s(&[5, -1]);
        combine(Op::Min, DType::I32, &mut a, &i32s(&[3, 2])).unwrap();
        assert_eq!(a, i32s(&[3, -1]));
    }

    #[test]
    fn float_ops() {
        let f = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        let mut a = f(&[1.5, -2.0]);
        combine(Op::Prod, DType::F64, &mut a, &f(&[2.0, 3.0])).unwrap();
        assert_eq!(a, f(&[3.0, -6.0]));
        let mut a = f(&[1.5, -2.0]);
        combine(Op::Max, DType::F64, &mut a, &f(&[2.0, -3.0])).unwrap();
        assert_eq!(a, f(&[2.0, -2.0]));
    }

    #[test]
    fn length_errors_state_lengths() {
        let mut a = vec![0u8; 8];
        let e = combine(Op::Sum, DType::U32, &mut a, &[0u8; 4]).unwrap_err();
        assert_eq!(e, Error::LengthMismatch { acc: 8, other: 4 });
        assert!(e.to_string().contains('8') && e.to_string().contains('4'));
        let mut a = vec![0u8; 6];
        let e = combine(Op::Sum, DType::U32, &mut a, &[0u8; 6]).unwrap_err();
        assert_eq!(
            e,
            Error::NotElementMultiple {
                len: 6,
                elem_size: 4
            }
        );
    }

    #[test]
    fn user_op_is_left_accumulating() {
        // acc = acc * 10 + other, on single bytes: not commutative.
        let r = Reduction::User {
            op: UserOp {
                f: Arc::new(|acc: &mut [u8], o: &[u8]| {
                    for (a, b) in acc.iter_mut().zip(o) {
                        *a = *a * 10 + b;
                    }
                }),
                commutative: false,
            },
            elem_size: 1,
        };
        assert!(!r.commutative());
        let mut acc = vec![1u8];
        r.combine(&mut acc, &[2]).unwrap();
        r.combine(&mut acc, &[3]).unwrap();
        assert_eq!(acc, vec![123]);
        assert!(Reduction::Builtin(Op::Sum, DType::F32).commutative());
    }
}
