//! Errors from libfabric calls.

use std::ffi::CStr;

/// A libfabric call failed. Carries the call's name, its return code and
/// `fi_strerror`'s text, e.g. `fi_domain failed: -22 (Invalid argument)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {code} ({text})")]
pub struct OfiError {
    /// The libfabric function that failed.
    pub call: &'static str,
    /// Its (negative) return code.
    pub code: i64,
    /// `fi_strerror(-code)`.
    pub text: String,
}

impl OfiError {
    /// Build the error for `call` returning `code`.
    pub fn new(call: &'static str, code: i64) -> Self {
        OfiError {
            call,
            code,
            text: strerror(code),
        }
    }

    /// True for `-FI_EAGAIN`: the operation may succeed after progress.
    pub fn is_again(&self) -> bool {
        self.code == -(ofi_sys::FI_EAGAIN as i64)
    }
}

/// `fi_strerror` of a libfabric return code (sign ignored).
pub fn strerror(code: i64) -> String {
    let errnum = code.unsigned_abs().min(i32::MAX as u64) as i32;
    // SAFETY: fi_strerror returns a pointer to a static NUL-terminated string
    // for any input.
    unsafe { CStr::from_ptr(ofi_sys::fi_strerror(errnum)) }
        .to_string_lossy()
        .into_owned()
}

/// Turn a libfabric return code into a `Result` (negative = error).
#[inline]
pub fn check(call: &'static str, rc: i64) -> Result<i64, OfiError> {
    if rc < 0 {
        Err(OfiError::new(call, rc))
    } else {
        Ok(rc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_names_call_code_and_reason() {
        let e = OfiError::new("fi_domain", -22);
        assert_eq!(e.to_string(), "fi_domain failed: -22 (Invalid argument)");
        assert!(!e.is_again());
        assert!(OfiError::new("fi_send", -(ofi_sys::FI_EAGAIN as i64)).is_again());
        assert_eq!(check("x", 3), Ok(3));
    }
}
