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
    /// `GEX_FLAG_USES_GASNET1`.
    pub const FLAG_USES_GASNET1: u32 = 0x8;
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
    /// `GASNET_BARRIERFLAG_UNNAMED`.
    pub const BARRIERFLAG_UNNAMED: i32 = 4;
    /// `GASNET_WAIT_SPIN`.
    pub const WAIT_SPIN: i32 = 0;
    /// `GASNET_WAIT_BLOCK`.
    pub const WAIT_BLOCK: i32 = 1;
    /// `GASNET_WAIT_SPINBLOCK`.
    pub const WAIT_SPINBLOCK: i32 = 2;
}
