//! Hand-written declarations of the parts of `pmix.h` (PMIx 4.x) used by
//! [`super`]. `pmix_layout.c` asserts every size, offset and constant at
//! build time.

#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int};

pub type pmix_status_t = c_int;
pub type pmix_rank_t = u32;
pub type pmix_scope_t = u8;
pub type pmix_data_type_t = u16;

pub const PMIX_SUCCESS: pmix_status_t = 0;
pub const PMIX_ERR_NOT_FOUND: pmix_status_t = -46;
pub const PMIX_BOOL: pmix_data_type_t = 1;
pub const PMIX_STRING: pmix_data_type_t = 3;
pub const PMIX_UINT32: pmix_data_type_t = 14;
pub const PMIX_BYTE_OBJECT: pmix_data_type_t = 27;
pub const PMIX_PROC_RANK: pmix_data_type_t = 40;
pub const PMIX_GLOBAL: pmix_scope_t = 3;
pub const PMIX_RANK_WILDCARD: pmix_rank_t = u32::MAX - 1;

pub const PMIX_JOB_SIZE: &std::ffi::CStr = c"pmix.job.size";
pub const PMIX_HOSTNAME: &std::ffi::CStr = c"pmix.hname";
pub const PMIX_COLLECT_DATA: &std::ffi::CStr = c"pmix.collect";

/// `pmix_proc_t`: namespace (`PMIX_MAX_NSLEN + 1` bytes) and rank.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_proc_t {
    pub nspace: [c_char; 256],
    pub rank: pmix_rank_t,
}

/// `pmix_value_t`: a type tag and a 24-byte union at offset 8. Only the
/// members used here are read: `bo` (pointer, size), `string`
/// (pointer), `uint32`/`rank` (4 bytes) and `flag` (1 byte), all at the
/// union's start.
#[repr(C, align(8))]
pub struct pmix_value_t {
    pub type_: pmix_data_type_t,
    pub _pad: [u8; 6],
    pub data: [u64; 3],
}

/// `pmix_info_t`: key (`PMIX_MAX_KEYLEN + 1` bytes), directives, value.
#[repr(C)]
pub struct pmix_info_t {
    pub key: [c_char; 512],
    pub flags: u32,
    pub _pad: u32,
    pub value: pmix_value_t,
}

#[link(name = "pmix")]
extern "C" {
    pub fn PMIx_Init(
        proc_: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t;
    pub fn PMIx_Finalize(info: *const pmix_info_t, ninfo: usize) -> pmix_status_t;
    pub fn PMIx_Abort(
        status: c_int,
        msg: *const c_char,
        procs: *mut pmix_proc_t,
        nprocs: usize,
    ) -> pmix_status_t;
    pub fn PMIx_Put(
        scope: pmix_scope_t,
        key: *const c_char,
        val: *mut pmix_value_t,
    ) -> pmix_status_t;
    pub fn PMIx_Commit() -> pmix_status_t;
    pub fn PMIx_Fence(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t;
    pub fn PMIx_Get(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        val: *mut *mut pmix_value_t,
    ) -> pmix_status_t;
    pub fn PMIx_Value_destruct(val: *mut pmix_value_t);
    pub fn PMIx_Error_string(status: pmix_status_t) -> *const c_char;
}
