//! What the arithmetic operations compute on each type (integers wrap;
//! floats compare by value).

use super::AtomicType;

#[derive(Clone, Copy)]
pub(super) enum Arith {
    Add,
    Sub,
    Mul,
    Min,
    Max,
}

impl AtomicType {
    /// The value one.
    pub fn one(self) -> u64 {
        match self {
            AtomicType::F32 => 1.0f32.to_bits() as u64,
            AtomicType::F64 => 1.0f64.to_bits(),
            _ => 1,
        }
    }

    /// `-x` (wrapping for integers).
    pub fn negate(self, x: u64) -> u64 {
        match self {
            AtomicType::F32 => (-f32::from_bits(x as u32)).to_bits() as u64,
            AtomicType::F64 => (-f64::from_bits(x)).to_bits(),
            _ => self.mask(x.wrapping_neg()),
        }
    }
}

/// `Cas`'s comparison: the bit patterns, floating-point types included
/// (what `FI_CSWAP` does, so AM and native domains agree).
pub(super) fn equal(ty: AtomicType, a: u64, b: u64) -> bool {
    ty.mask(a) == ty.mask(b)
}

macro_rules! int_arith {
    ($t:ty, $a:expr, $b:expr, $op:expr) => {{
        let (a, b) = ($a as $t, $b as $t);
        let r: $t = match $op {
            Arith::Add => a.wrapping_add(b),
            Arith::Sub => a.wrapping_sub(b),
            Arith::Mul => a.wrapping_mul(b),
            Arith::Min => a.min(b),
            Arith::Max => a.max(b),
        };
        r
    }};
}

macro_rules! float_arith {
    ($t:ty, $a:expr, $b:expr, $op:expr) => {{
        let (a, b) = ($a, $b);
        let r: $t = match $op {
            Arith::Add => a + b,
            Arith::Sub => a - b,
            Arith::Mul => a * b,
            Arith::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            Arith::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
        };
        r
    }};
}

pub(super) fn arith(ty: AtomicType, a: u64, b: u64, op: Arith) -> u64 {
    match ty {
        AtomicType::I32 => int_arith!(i32, a as u32, b as u32, op) as u32 as u64,
        AtomicType::U32 => int_arith!(u32, a, b, op) as u64,
        AtomicType::I64 => int_arith!(i64, a, b, op) as u64,
        AtomicType::U64 => int_arith!(u64, a, b, op),
        AtomicType::F32 => {
            float_arith!(f32, f32::from_bits(a as u32), f32::from_bits(b as u32), op).to_bits()
                as u64
        }
        AtomicType::F64 => float_arith!(f64, f64::from_bits(a), f64::from_bits(b), op).to_bits(),
    }
}
