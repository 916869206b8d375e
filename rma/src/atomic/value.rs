//! The Rust types of atomic domains.

use super::AtomicType;
use std::fmt;

/// A Rust type usable in an atomic domain.
pub trait AtomicValue: Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// Its [`AtomicType`].
    const TYPE: AtomicType;
    /// Its bit pattern.
    fn to_bits(self) -> u64;
    /// The value of a bit pattern.
    fn from_bits(b: u64) -> Self;
}

macro_rules! value {
    ($t:ty, $ty:ident, |$v:ident| $to:expr, |$b:ident| $from:expr) => {
        impl AtomicValue for $t {
            const TYPE: AtomicType = AtomicType::$ty;
            fn to_bits(self) -> u64 {
                let $v = self;
                $to
            }
            fn from_bits($b: u64) -> Self {
                $from
            }
        }
    };
}

value!(i32, I32, |v| v as u32 as u64, |b| b as u32 as i32);
value!(u32, U32, |v| v as u64, |b| b as u32);
value!(i64, I64, |v| v as u64, |b| b as i64);
value!(u64, U64, |v| v, |b| b);
value!(f32, F32, |v| v.to_bits() as u64, |b| f32::from_bits(
    b as u32
));
value!(f64, F64, |v| v.to_bits(), |b| f64::from_bits(b));
