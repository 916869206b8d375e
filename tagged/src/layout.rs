//! Tag layouts.

use std::fmt;
use std::str::FromStr;

/// `GASNET_OFI_TAG_MODE` (Open MPI's `mtl_ofi_tag_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TagMode {
    /// `ofi_tag_full` if the provider has `FI_REMOTE_CQ_DATA` and
    /// `FI_DIRECTED_RECV`, else `ofi_tag_1`.
    #[default]
    Auto,
    /// 12-bit communicator id, 18-bit source rank, 32-bit tag.
    Tag1,
    /// 24-bit communicator id, 18-bit source rank, 20-bit tag.
    Tag2,
    /// Source rank in the CQ data; 28-bit communicator id, 32-bit tag.
    Full,
}

impl TagMode {
    /// The accepted spellings, for error messages.
    pub const ACCEPTED: &'static str = "auto, ofi_tag_1, ofi_tag_2 or ofi_tag_full";

    /// The name as written in the variable.
    pub fn name(self) -> &'static str {
        match self {
            TagMode::Auto => "auto",
            TagMode::Tag1 => "ofi_tag_1",
            TagMode::Tag2 => "ofi_tag_2",
            TagMode::Full => "ofi_tag_full",
        }
    }
}

impl fmt::Display for TagMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TagMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(TagMode::Auto),
            "ofi_tag_1" => Ok(TagMode::Tag1),
            "ofi_tag_2" => Ok(TagMode::Tag2),
            "ofi_tag_full" => Ok(TagMode::Full),
            _ => Err(format!("expected {}", TagMode::ACCEPTED)),
        }
    }
}
