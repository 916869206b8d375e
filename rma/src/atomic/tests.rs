use super::*;

fn b<V: AtomicValue>(v: V) -> u64 {
    v.to_bits()
}

#[test]
fn bitwise_operations_are_refused_on_floats_only() {
    for ty in AtomicType::ALL {
        for op in AtomicOp::ALL {
            let bitwise = matches!(
                op,
                AtomicOp::And
                    | AtomicOp::Fand
                    | AtomicOp::Or
                    | AtomicOp::For
                    | AtomicOp::Xor
                    | AtomicOp::Fxor
            );
            assert_eq!(op.valid_for(ty), !(bitwise && ty.is_float()), "{op} {ty}");
        }
    }
    assert_eq!(
        check_domain(
            AtomicType::F64,
            OpSet::empty().with(AtomicOp::Fadd).with(AtomicOp::Xor)
        )
        .unwrap_err()
        .to_string(),
        "atomic operation xor is not valid on f64 (bit-wise operations are for integer types)"
    );
    assert_eq!(
        check_domain(AtomicType::U64, OpSet::empty()),
        Err(AtomicError::NoOperations)
    );
    assert!(check_domain(AtomicType::U64, OpSet::all_for(AtomicType::U64)).is_ok());
}

#[test]
fn codes_round_trip() {
    for op in AtomicOp::ALL {
        assert_eq!(AtomicOp::from_code(op.code()), Some(op));
    }
    assert_eq!(AtomicOp::from_code(25), None);
}

#[test]
fn integer_semantics_wrap() {
    let t = AtomicType::U32;
    assert_eq!(AtomicOp::Add.apply(t, b(u32::MAX), 2, 0), Some(1));
    assert_eq!(AtomicOp::Dec.apply(t, 0, 0, 0), Some(u32::MAX as u64));
    assert_eq!(
        AtomicOp::Sub.apply(t, 3, 5, 0),
        Some(b(3u32.wrapping_sub(5)))
    );
    let t = AtomicType::I32;
    assert_eq!(AtomicOp::Min.apply(t, b(-3i32), b(2i32), 0), Some(b(-3i32)));
    assert_eq!(AtomicOp::Max.apply(t, b(-3i32), b(2i32), 0), Some(b(2i32)));
    assert_eq!(
        AtomicOp::Mult.apply(t, b(-3i32), b(7i32), 0),
        Some(b(-21i32))
    );
    let t = AtomicType::I64;
    assert_eq!(
        AtomicOp::Fmin.apply(t, b(-3i64), b(-9i64), 0),
        Some(b(-9i64))
    );
    assert_eq!(AtomicOp::Xor.apply(t, 0b1100, 0b1010, 0), Some(0b0110));
    assert_eq!(AtomicOp::And.apply(t, 0b1100, 0b1010, 0), Some(0b1000));
    assert_eq!(AtomicOp::Or.apply(t, 0b1100, 0b1010, 0), Some(0b1110));
    assert_eq!(AtomicOp::Get.apply(t, 5, 6, 7), None);
    assert_eq!(AtomicOp::Cas.apply(t, 5, 5, 7), Some(7));
    assert_eq!(AtomicOp::Fcas.apply(t, 5, 6, 7), None);
}

#[test]
fn float_semantics() {
    let t = AtomicType::F64;
    assert_eq!(
        AtomicOp::Fadd.apply(t, b(1.5f64), b(2.25f64), 0),
        Some(b(3.75f64))
    );
    assert_eq!(AtomicOp::Inc.apply(t, b(1.5f64), 0, 0), Some(b(2.5f64)));
    assert_eq!(
        AtomicOp::Min.apply(t, b(1.5f64), b(-2.0f64), 0),
        Some(b(-2.0f64))
    );
    // Cas compares bit patterns (as FI_CSWAP): -0.0 is not 0.0, a NaN
    // matches the same NaN.
    assert_eq!(
        AtomicOp::Cas.apply(t, b(-0.0f64), b(0.0f64), b(4.0f64)),
        None
    );
    assert_eq!(
        AtomicOp::Cas.apply(t, b(f64::NAN), b(f64::NAN), b(4.0f64)),
        Some(b(4.0f64))
    );
    assert_eq!(
        AtomicOp::Cas.apply(t, b(1.5f64), b(1.5f64), b(4.0f64)),
        Some(b(4.0f64))
    );
    assert_eq!(
        AtomicOp::Cas.apply(AtomicType::F32, b(-0.0f32), b(0.0f32), b(4.0f32)),
        None
    );
    let t = AtomicType::F32;
    assert_eq!(AtomicOp::Dec.apply(t, b(1.0f32), 0, 0), Some(b(0.0f32)));
    assert_eq!(
        AtomicOp::Fmult.apply(t, b(1.5f32), b(4.0f32), 0),
        Some(b(6.0f32))
    );
}

#[test]
fn native_forms_compute_what_the_operation_does() {
    // Performing the native form (sum with the sent operand, ...) gives
    // the same new value as the operation itself.
    let vals = [0u64, 1, 7, 0xffff_fff0, u64::MAX - 3];
    for ty in AtomicType::ALL {
        for op in AtomicOp::ALL.iter().filter(|o| o.valid_for(ty)) {
            for &old in &vals {
                for &x in &vals {
                    let (old, x) = if ty.is_float() {
                        let f = |v: u64| match ty {
                            AtomicType::F32 => b((v % 1000) as f32 - 3.0),
                            _ => b((v % 1000) as f64 - 3.0),
                        };
                        (f(old), f(x))
                    } else {
                        (ty.mask(old), ty.mask(x))
                    };
                    let n = op.native(ty, x);
                    let via = match n.op {
                        NativeOp::Sum => AtomicOp::Add.apply(ty, old, n.operand, 0),
                        NativeOp::Prod => AtomicOp::Mult.apply(ty, old, n.operand, 0),
                        NativeOp::Min => AtomicOp::Min.apply(ty, old, n.operand, 0),
                        NativeOp::Max => AtomicOp::Max.apply(ty, old, n.operand, 0),
                        NativeOp::Band => AtomicOp::And.apply(ty, old, n.operand, 0),
                        NativeOp::Bor => AtomicOp::Or.apply(ty, old, n.operand, 0),
                        NativeOp::Bxor => AtomicOp::Xor.apply(ty, old, n.operand, 0),
                        NativeOp::Read => None,
                        NativeOp::Write => Some(n.operand),
                        NativeOp::Cswap => AtomicOp::Cas.apply(ty, old, n.operand, x),
                    };
                    assert_eq!(
                        via,
                        op.apply(ty, old, x, x),
                        "{op} on {ty}: {old:#x} {x:#x}"
                    );
                    assert_eq!(
                        n.call != NativeCall::Atomic,
                        op.is_fetching() || *op == AtomicOp::Cas,
                        "{op}"
                    );
                }
            }
        }
    }
}

#[test]
fn op_sets() {
    let s: OpSet = [AtomicOp::Fadd, AtomicOp::Get].into_iter().collect();
    assert!(s.contains(AtomicOp::Get) && !s.contains(AtomicOp::Add));
    assert_eq!(s.to_string(), "{get, fadd}");
    assert_eq!(OpSet::all_for(AtomicType::F32).iter().count(), 19);
    assert_eq!(OpSet::all_for(AtomicType::U32).iter().count(), 25);
}

#[test]
fn values_round_trip() {
    assert_eq!(i32::from_bits((-5i32).to_bits()), -5);
    assert_eq!((-5i32).to_bits(), 0xffff_fffb);
    assert_eq!(f32::from_bits(2.5f32.to_bits()), 2.5);
    assert_eq!(u64::from_bits(u64::MAX.to_bits()), u64::MAX);
}
