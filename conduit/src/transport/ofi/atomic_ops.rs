//! The conduit's atomic types and operations as libfabric's.

use crate::ofi::AtomicCall;
use ofi_sys as sys;
use rma::atomic::{AtomicType, NativeCall, NativeOp};

pub(super) fn call(c: NativeCall) -> AtomicCall {
    match c {
        NativeCall::Atomic => AtomicCall::Atomic,
        NativeCall::Fetch => AtomicCall::Fetch,
        NativeCall::Compare => AtomicCall::Compare,
    }
}

pub(super) fn datatype(ty: AtomicType) -> sys::fi_datatype {
    match ty {
        AtomicType::I32 => sys::fi_datatype_FI_INT32,
        AtomicType::U32 => sys::fi_datatype_FI_UINT32,
        AtomicType::I64 => sys::fi_datatype_FI_INT64,
        AtomicType::U64 => sys::fi_datatype_FI_UINT64,
        AtomicType::F32 => sys::fi_datatype_FI_FLOAT,
        AtomicType::F64 => sys::fi_datatype_FI_DOUBLE,
    }
}

pub(super) fn fi_op(op: NativeOp) -> sys::fi_op {
    match op {
        NativeOp::Min => sys::fi_op_FI_MIN,
        NativeOp::Max => sys::fi_op_FI_MAX,
        NativeOp::Sum => sys::fi_op_FI_SUM,
        NativeOp::Prod => sys::fi_op_FI_PROD,
        NativeOp::Bor => sys::fi_op_FI_BOR,
        NativeOp::Band => sys::fi_op_FI_BAND,
        NativeOp::Bxor => sys::fi_op_FI_BXOR,
        NativeOp::Read => sys::fi_op_FI_ATOMIC_READ,
        NativeOp::Write => sys::fi_op_FI_ATOMIC_WRITE,
        NativeOp::Cswap => sys::fi_op_FI_CSWAP,
    }
}
