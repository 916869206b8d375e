//! The C types of `gasnetex.h`, as Rust sees them.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `gex_Rank_t`.
pub type gex_Rank_t = u32;
/// `gex_Flags_t`.
pub type gex_Flags_t = u32;
/// `gex_TI_t`.
pub type gex_TI_t = u32;
/// `gex_EC_t`.
pub type gex_EC_t = u32;
/// `gex_AM_Arg_t`.
pub type gex_AM_Arg_t = i32;
/// Any opaque handle (`gex_Client_t`, `gex_EP_t`, `gex_TM_t`,
/// `gex_Segment_t`, `gex_Token_t`, `gex_Event_t`, `gex_AM_SrcDesc_t`).
pub type Handle = *mut c_void;

/// `gex_AM_Entry_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gex_AM_Entry_t {
    /// 0 or 128..=255.
    pub gex_index: u8,
    /// The handler (unprototyped in C).
    pub gex_fnptr: Option<unsafe extern "C" fn()>,
    /// Category and direction flags.
    pub gex_flags: gex_Flags_t,
    /// Argument count.
    pub gex_nargs: c_uint,
    /// Client data.
    pub gex_cdata: *const c_void,
    /// Name for messages.
    pub gex_name: *const c_char,
}

/// `gex_Token_Info_t`.
#[repr(C)]
#[derive(Debug)]
pub struct gex_Token_Info_t {
    /// Sender's job rank.
    pub gex_srcrank: gex_Rank_t,
    /// Receiving endpoint.
    pub gex_ep: Handle,
    /// The running handler's entry.
    pub gex_entry: *const gex_AM_Entry_t,
    /// 1 for a request.
    pub gex_is_req: c_int,
    /// 1 for a Long.
    pub gex_is_long: c_int,
}

/// `gex_RankInfo_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gex_RankInfo_t {
    /// Job rank.
    pub gex_jobrank: gex_Rank_t,
}

/// `gex_HSL_t`.
#[repr(C)]
#[derive(Debug)]
pub struct gex_HSL_t {
    /// Whether the lock is held.
    pub held: c_int,
    /// Unused.
    pub reserved: c_int,
}

/// `gex_Memvec_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gex_Memvec_t {
    /// Start.
    pub gex_addr: *mut c_void,
    /// Length in bytes.
    pub gex_len: usize,
}

/// `gex_DT_t`.
pub type gex_DT_t = u32;
/// `gex_OP_t`.
pub type gex_OP_t = u32;
/// `gex_Coll_ReduceFn_t`: `arg2_and_out[i] = arg1[i] op arg2_and_out[i]`
/// for `count` elements.
pub type gex_Coll_ReduceFn_t =
    Option<unsafe extern "C" fn(*const c_void, *mut c_void, usize, *const c_void)>;

/// Constants of `gasnetex.h` (the header's values; capi/tests/header.rs
/// checks they agree).
pub mod consts {
    /// `GASNET_OK`.
    pub const GASNET_OK: i32 = 0;
    /// `GASNET_ERR_NOT_INIT`.
    pub const GASNET_ERR_NOT_INIT: i32 = 10001;
    /// `GASNET_ERR_RESOURCE`.
    pub const GASNET_ERR_RESOURCE: i32 = 10002;
    /// `GASNET_ERR_BAD_ARG`.
    pub const GASNET_ERR_BAD_ARG: i32 = 10003;
    /// `GASNET_ERR_NOT_READY`.
    pub const GASNET_ERR_NOT_READY: i32 = 10004;
    /// `GASNET_ERR_BARRIER_MISMATCH`.
    pub const GASNET_ERR_BARRIER_MISMATCH: i32 = 10005;
    /// `GEX_FLAG_IMMEDIATE`.
    pub const FLAG_IMMEDIATE: u32 = 0x1;
    /// `GEX_FLAG_AM_PREPARE_LEAST_ALLOC`.
    pub const FLAG_AM_PREPARE_LEAST_ALLOC: u32 = 0x4;
    /// `GEX_FLAG_USES_GASNET1`.
    pub const FLAG_USES_GASNET1: u32 = 0x8;
    /// `GEX_FLAG_ENABLE_LEAF_LC` (VIS puts: local completion as a leaf of
    /// the root event).
    pub const FLAG_ENABLE_LEAF_LC: u32 = 0x10;
    /// `GEX_FLAG_AM_SHORT`.
    pub const AM_SHORT: u32 = 0x100;
    /// `GEX_FLAG_AM_MEDIUM`.
    pub const AM_MEDIUM: u32 = 0x200;
    /// `GEX_FLAG_AM_LONG`.
    pub const AM_LONG: u32 = 0x400;
    /// `GEX_FLAG_AM_REQUEST`.
    pub const AM_REQUEST: u32 = 0x800;
    /// `GEX_FLAG_AM_REPLY`.
    pub const AM_REPLY: u32 = 0x1000;
    /// `GEX_TI_SRCRANK`.
    pub const TI_SRCRANK: u32 = 0x1;
    /// `GEX_TI_EP`.
    pub const TI_EP: u32 = 0x2;
    /// `GEX_TI_ENTRY`.
    pub const TI_ENTRY: u32 = 0x4;
    /// `GEX_TI_IS_REQ`.
    pub const TI_IS_REQ: u32 = 0x8;
    /// `GEX_TI_IS_LONG`.
    pub const TI_IS_LONG: u32 = 0x10;
    /// `GEX_EC_GET`.
    pub const EC_GET: u32 = 0x1;
    /// `GEX_EC_PUT`.
    pub const EC_PUT: u32 = 0x2;
    /// `GEX_EC_LC`.
    pub const EC_LC: u32 = 0x8;
    /// `GASNET_PAGESIZE`: the unit of GASNet-1 segment sizes.
    pub const PAGESIZE: usize = 4096;
    /// `GEX_EVENT_NO_OP` as an address.
    pub const EVENT_NO_OP: usize = 1;
    /// `GEX_EVENT_NOW` as an address.
    pub const EVENT_NOW: usize = 1;
    /// `GEX_EVENT_DEFER` as an address.
    pub const EVENT_DEFER: usize = 2;
    /// `GEX_EVENT_GROUP` as an address.
    pub const EVENT_GROUP: usize = 3;
    /// `GASNET_BARRIERFLAG_ANONYMOUS`.
    pub const BARRIERFLAG_ANONYMOUS: i32 = 1;
    /// `GASNET_BARRIERFLAG_MISMATCH` (refused by a notify: see barrier.rs).
    pub const BARRIERFLAG_MISMATCH: i32 = 2;
    /// `GASNET_BARRIERFLAG_UNNAMED`.
    pub const BARRIERFLAG_UNNAMED: i32 = 4;
    /// `GASNET_WAIT_SPIN`.
    pub const WAIT_SPIN: i32 = 0;
    /// `GASNET_WAIT_BLOCK`.
    pub const WAIT_BLOCK: i32 = 1;
    /// `GASNET_WAIT_SPINBLOCK`.
    pub const WAIT_SPINBLOCK: i32 = 2;
    /// `GEX_RANK_INVALID`.
    pub const RANK_INVALID: u32 = 0xFFFF_FFFF;
    /// `GEX_EC_RMW`.
    pub const EC_RMW: u32 = 0x10;
    /// `GEX_FLAG_RANK_IS_JOBRANK`.
    pub const FLAG_RANK_IS_JOBRANK: u32 = 0x1_0000;
    /// `GEX_FLAG_AD_MY_RANK`.
    pub const FLAG_AD_MY_RANK: u32 = 0x2_0000;
    /// `GEX_FLAG_AD_MY_NBRHD`.
    pub const FLAG_AD_MY_NBRHD: u32 = 0x4_0000;
    /// `GEX_FLAG_AD_FAVOR_MY_RANK`.
    pub const FLAG_AD_FAVOR_MY_RANK: u32 = 0x8_0000;
    /// `GEX_FLAG_AD_FAVOR_MY_NBRHD`.
    pub const FLAG_AD_FAVOR_MY_NBRHD: u32 = 0x10_0000;
    /// `GEX_FLAG_AD_FAVOR_REMOTE`.
    pub const FLAG_AD_FAVOR_REMOTE: u32 = 0x20_0000;
    /// `GEX_FLAG_AD_ACQ`.
    pub const FLAG_AD_ACQ: u32 = 0x40_0000;
    /// `GEX_FLAG_AD_REL`.
    pub const FLAG_AD_REL: u32 = 0x80_0000;
    /// `GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED`.
    pub const FLAG_TM_SCRATCH_SIZE_RECOMMENDED: u32 = 0x100_0000;
    /// `GEX_FLAG_TM_SCRATCH_SIZE_MIN` (deprecated).
    pub const FLAG_TM_SCRATCH_SIZE_MIN: u32 = 0x200_0000;
    /// `GEX_FLAG_TM_NO_SCRATCH`.
    pub const FLAG_TM_NO_SCRATCH: u32 = 0x400_0000;
    /// `GEX_FLAG_GLOBALLY_QUIESCED` (`gex_TM_Destroy`).
    pub const FLAG_GLOBALLY_QUIESCED: u32 = 0x800_0000;
    /// `GEX_FLAG_TM_GLOBAL_SCRATCH` (`gex_TM_Create`).
    pub const FLAG_TM_GLOBAL_SCRATCH: u32 = 0x1000_0000;
    /// `GEX_FLAG_TM_LOCAL_SCRATCH` (`gex_TM_Create`).
    pub const FLAG_TM_LOCAL_SCRATCH: u32 = 0x2000_0000;
    /// `GEX_FLAG_TM_SYMMETRIC_SCRATCH` (`gex_TM_Create`).
    pub const FLAG_TM_SYMMETRIC_SCRATCH: u32 = 0x4000_0000;
    /// `GEX_FLAG_SCRATCH_SEG_OFFSET` (`gex_TM_Create`: scratch addresses
    /// are offsets into the segment).
    pub const FLAG_SCRATCH_SEG_OFFSET: u32 = 0x8000_0000;
    /// `GEX_DT_I32`.
    pub const DT_I32: u32 = 0x1;
    /// `GEX_DT_U32`.
    pub const DT_U32: u32 = 0x2;
    /// `GEX_DT_I64`.
    pub const DT_I64: u32 = 0x4;
    /// `GEX_DT_U64`.
    pub const DT_U64: u32 = 0x8;
    /// `GEX_DT_FLT`.
    pub const DT_FLT: u32 = 0x10;
    /// `GEX_DT_DBL`.
    pub const DT_DBL: u32 = 0x20;
    /// `GEX_DT_USER`.
    pub const DT_USER: u32 = 0x40;
    /// `GEX_OP_*`: a non-fetching operation's bit, its fetching form the
    /// next bit up (`GEX_OP_TO_FETCHING` is a shift).
    pub const OP_ADD: u32 = 1 << 0;
    /// `GEX_OP_FADD`.
    pub const OP_FADD: u32 = 1 << 1;
    /// `GEX_OP_MULT`.
    pub const OP_MULT: u32 = 1 << 2;
    /// `GEX_OP_FMULT`.
    pub const OP_FMULT: u32 = 1 << 3;
    /// `GEX_OP_MIN`.
    pub const OP_MIN: u32 = 1 << 4;
    /// `GEX_OP_FMIN`.
    pub const OP_FMIN: u32 = 1 << 5;
    /// `GEX_OP_MAX`.
    pub const OP_MAX: u32 = 1 << 6;
    /// `GEX_OP_FMAX`.
    pub const OP_FMAX: u32 = 1 << 7;
    /// `GEX_OP_SUB`.
    pub const OP_SUB: u32 = 1 << 8;
    /// `GEX_OP_FSUB`.
    pub const OP_FSUB: u32 = 1 << 9;
    /// `GEX_OP_INC`.
    pub const OP_INC: u32 = 1 << 10;
    /// `GEX_OP_FINC`.
    pub const OP_FINC: u32 = 1 << 11;
    /// `GEX_OP_DEC`.
    pub const OP_DEC: u32 = 1 << 12;
    /// `GEX_OP_FDEC`.
    pub const OP_FDEC: u32 = 1 << 13;
    /// `GEX_OP_AND`.
    pub const OP_AND: u32 = 1 << 14;
    /// `GEX_OP_FAND`.
    pub const OP_FAND: u32 = 1 << 15;
    /// `GEX_OP_OR`.
    pub const OP_OR: u32 = 1 << 16;
    /// `GEX_OP_FOR`.
    pub const OP_FOR: u32 = 1 << 17;
    /// `GEX_OP_XOR`.
    pub const OP_XOR: u32 = 1 << 18;
    /// `GEX_OP_FXOR`.
    pub const OP_FXOR: u32 = 1 << 19;
    /// `GEX_OP_SET`.
    pub const OP_SET: u32 = 1 << 20;
    /// `GEX_OP_SWAP` (`GEX_OP_TO_FETCHING(GEX_OP_SET)`).
    pub const OP_SWAP: u32 = 1 << 21;
    /// `GEX_OP_CAS`.
    pub const OP_CAS: u32 = 1 << 22;
    /// `GEX_OP_FCAS`.
    pub const OP_FCAS: u32 = 1 << 23;
    /// `GEX_OP_GET`.
    pub const OP_GET: u32 = 1 << 24;
    /// `GEX_OP_USER`.
    pub const OP_USER: u32 = 1 << 25;
    /// `GEX_OP_USER_NC`.
    pub const OP_USER_NC: u32 = 1 << 26;
}
