//! Raw bindings to the system libfabric (OFI).
//!
//! Generated at build time by bindgen from the installed headers (found with
//! pkg-config; libfabric 1.15 or newer). libfabric implements most of its data
//! path as `static inline` functions in its headers (`fi_send`, `fi_cq_read`,
//! `fi_write`, `fi_mr_reg`, `fi_close`, ...); bindgen's `wrap_static_fns`
//! emits a small C shim that this crate compiles with `cc`, so each of them is
//! callable from Rust under its usual name.
//!
//! Everything here is `unsafe` and mirrors the C API one to one. The safe
//! wrapper lives in the `conduit` crate (`conduit::ofi`).

/// The bindgen output, kept apart so the lints that every hand-written
/// `unsafe` block of the workspace obeys (a `// SAFETY:` comment, no unsafe
/// operation without its own block) are waived only for generated code.
#[allow(non_upper_case_globals, non_camel_case_types, non_snake_case)]
#[allow(clippy::all, clippy::undocumented_unsafe_blocks)]
#[allow(missing_docs, rustdoc::all, unsafe_op_in_unsafe_fn)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

pub use generated::*;

/// `FI_VERSION(major, minor)` from `fabric.h` (a macro, so bindgen cannot see it).
pub const fn fi_version_num(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor & 0xFFFF)
}

/// `FI_MAJOR(version)`.
pub const fn fi_major(version: u32) -> u32 {
    version >> 16
}

/// `FI_MINOR(version)`.
pub const fn fi_minor(version: u32) -> u32 {
    version & 0xFFFF
}

/// The libfabric API version of the headers this crate was built against
/// (`FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)`): what the conduit
/// asks `fi_getinfo` for, so a build against 2.x headers gets libfabric
/// 2.x semantics and a build against 1.x the semantics of its 1.x.
pub const HEADER_VERSION: u32 = fi_version_num(FI_MAJOR_VERSION, FI_MINOR_VERSION);

/// Whether the headers are libfabric 2.x (their 1.x names changed or went).
pub const LIBFABRIC2: bool = cfg!(libfabric2);

/// `FI_RESTRICTED_COMP` as a mode bit: `1 << 53` in 1.x; 2.x removed the
/// mode and defines it as 0 (no provider can ask for it).
// The cast is needed with 2.x, whose `0ULL` bindgen types as u32.
#[allow(clippy::unnecessary_cast)]
pub const RESTRICTED_COMP: u64 = FI_RESTRICTED_COMP as u64;

/// Set a domain's data progress model: the `data_progress` field of
/// libfabric 1.x, which 2.x made a union with its new name `progress`
/// (1.x's `control_progress` is deprecated in 2.x and set apart).
pub fn set_data_progress(attr: &mut fi_domain_attr, progress: fi_progress) {
    #[cfg(not(libfabric2))]
    {
        attr.data_progress = progress;
    }
    #[cfg(libfabric2)]
    {
        attr.__bindgen_anon_1.progress = progress;
    }
}

/// `FI_ADDR_UNSPEC` (`(uint64_t) -1`).
pub const FI_ADDR_UNSPEC_VALUE: fi_addr_t = u64::MAX;

/// `FI_ADDR_NOTAVAIL` (`(uint64_t) -1`).
pub const FI_ADDR_NOTAVAIL_VALUE: fi_addr_t = u64::MAX;

/// `FI_KEY_NOTAVAIL` (`(uint64_t) -1`).
pub const FI_KEY_NOTAVAIL_VALUE: u64 = u64::MAX;

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn runtime_version_is_at_least_1_15() {
        // SAFETY: fi_version takes no arguments and only returns a number.
        let v = unsafe { fi_version() };
        assert!(
            v >= fi_version_num(1, 15),
            "libfabric {}.{} is older than 1.15",
            fi_major(v),
            fi_minor(v)
        );
    }

    #[test]
    fn the_loaded_library_is_not_older_than_the_headers() {
        // SAFETY: fi_version takes no arguments and only returns a number.
        let v = unsafe { fi_version() };
        assert!(
            v >= HEADER_VERSION,
            "built against libfabric {}.{} headers, loaded libfabric {}.{}",
            fi_major(HEADER_VERSION),
            fi_minor(HEADER_VERSION),
            fi_major(v),
            fi_minor(v)
        );
        assert_eq!(LIBFABRIC2, FI_MAJOR_VERSION >= 2);
    }

    #[test]
    fn data_progress_is_set_under_either_name() {
        // SAFETY: fi_allocinfo returns an owned fi_info with a domain_attr
        // (or NULL); freed below.
        unsafe {
            let info = fi_allocinfo();
            assert!(!info.is_null());
            set_data_progress(&mut *(*info).domain_attr, fi_progress_FI_PROGRESS_MANUAL);
            // The same slot under the 1.x name (2.x keeps it in the union).
            #[cfg(not(libfabric2))]
            let got = (*(*info).domain_attr).data_progress;
            #[cfg(libfabric2)]
            let got = (*(*info).domain_attr).__bindgen_anon_1.data_progress;
            assert_eq!(got, fi_progress_FI_PROGRESS_MANUAL);
            fi_freeinfo(info);
        }
    }

    #[test]
    fn strerror_and_inline_shim_work() {
        // SAFETY: fi_strerror returns a pointer to a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(fi_strerror(FI_EAGAIN as i32)) };
        assert!(
            s.to_string_lossy()
                .to_lowercase()
                .contains("temporarily unavailable"),
            "{s:?}"
        );
        // fi_allocinfo is static inline in fabric.h: calling it exercises the shim.
        // SAFETY: fi_allocinfo returns an owned, zeroed fi_info or NULL; we free it.
        unsafe {
            let info = fi_allocinfo();
            assert!(!info.is_null());
            assert!(!(*info).ep_attr.is_null());
            fi_freeinfo(info);
        }
    }

    #[test]
    fn getinfo_finds_a_provider() {
        // SAFETY: hints come from fi_allocinfo, the result list is freed below.
        unsafe {
            let hints = fi_allocinfo();
            (*(*hints).ep_attr).type_ = fi_ep_type_FI_EP_RDM;
            (*hints).caps = (FI_MSG | FI_RMA) as u64;
            let mut info: *mut fi_info = std::ptr::null_mut();
            let rc = fi_getinfo(
                HEADER_VERSION,
                std::ptr::null(),
                std::ptr::null(),
                0,
                hints,
                &mut info,
            );
            fi_freeinfo(hints);
            assert_eq!(rc, 0, "fi_getinfo found no RDM provider with FI_MSG|FI_RMA");
            assert!(!info.is_null());
            fi_freeinfo(info);
        }
    }
}
