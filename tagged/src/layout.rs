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

/// Bits of the synchronous-send protocol (in every layout, just above the
/// tag field).
pub const PROTO_BITS: u32 = 2;
/// Fewest communicator-id bits a layout may keep after the provider's
/// reserved bits are taken away (Open MPI's minimum).
pub const MIN_CID_BITS: u32 = 8;

/// What the chosen provider offers that the choice of layout depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderTagFacts {
    /// `FI_DIRECTED_RECV` is among the capabilities it grants.
    pub directed_recv: bool,
    /// Bytes of remote CQ data (`domain_attr->cq_data_size`); at least 4
    /// means the source rank fits, which is what `FI_REMOTE_CQ_DATA` is
    /// asked for.
    pub cq_data_size: usize,
    /// `ep_attr->mem_tag_format`: high-order zero bits are reserved by the
    /// provider (0: no format given, all 64 bits usable).
    pub mem_tag_format: u64,
}

impl ProviderTagFacts {
    /// Remote CQ data wide enough for a source rank.
    pub fn remote_cq_data(&self) -> bool {
        self.cq_data_size >= 4
    }
    /// High-order bits the provider reserves.
    pub fn reserved_bits(&self) -> u32 {
        if self.mem_tag_format == 0 {
            0
        } else {
            self.mem_tag_format.leading_zeros()
        }
    }
}

/// Why a layout cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// `ofi_tag_full` asked for on a provider without what it needs.
    #[error(
        "GASNET_OFI_TAG_MODE=ofi_tag_full is not possible with provider {provider}: it lacks {missing}. \
         ofi_tag_full sends the source rank in the remote CQ data (FI_REMOTE_CQ_DATA) and needs \
         FI_DIRECTED_RECV so that a receive can select its source; use GASNET_OFI_TAG_MODE=ofi_tag_1 \
         or ofi_tag_2 (or auto, which picks ofi_tag_1 here)"
    )]
    FullUnsupported {
        /// The provider.
        provider: String,
        /// What it lacks, e.g. `FI_DIRECTED_RECV`.
        missing: String,
    },
    /// The provider reserves so many high-order bits that fewer than
    /// [`MIN_CID_BITS`] communicator-id bits would be left.
    #[error(
        "provider {provider} reserves the {reserved} high-order tag bits (mem_tag_format {format:#018x}): \
         {mode} would keep {left} communicator-id bits, fewer than the {MIN_CID_BITS} needed"
    )]
    TooFewCidBits {
        /// The provider.
        provider: String,
        /// Reserved bits.
        reserved: u32,
        /// The provider's `mem_tag_format`.
        format: u64,
        /// The layout.
        mode: TagMode,
        /// Bits that would be left.
        left: u32,
    },
}

/// A value a layout cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// A tag above the layout's largest.
    #[error("tag {tag} is beyond what tag layout {mode} holds: the largest tag is {max}")]
    Tag {
        /// The tag.
        tag: u32,
        /// The largest accepted.
        max: u32,
        /// The layout.
        mode: TagMode,
    },
    /// A source rank above the layout's largest.
    #[error(
        "source rank {rank} is beyond what tag layout {mode} holds: the largest source rank is {max} \
         (GASNET_OFI_TAG_MODE=ofi_tag_full carries any rank)"
    )]
    Source {
        /// The rank.
        rank: u32,
        /// The largest accepted.
        max: u32,
        /// The layout.
        mode: TagMode,
    },
    /// No communicator id is left.
    #[error(
        "communicator id {cid} is beyond what tag layout {mode} holds: the largest communicator id is {max} \
         (free communicators, or use GASNET_OFI_TAG_MODE=ofi_tag_2 or ofi_tag_full for more)"
    )]
    Cid {
        /// The id.
        cid: u32,
        /// The largest accepted.
        max: u32,
        /// The layout.
        mode: TagMode,
    },
}

/// How the 64 bits of a libfabric tag are used, from the lowest bit up:
/// the tag, the two synchronous-send bits, the source rank (not in
/// `ofi_tag_full`, which carries it in the CQ data), the communicator id.
/// The tag field's highest bit marks the conduit's own messages (Open MPI's
/// negative tags), which a wildcard tag never matches; user tags go up to
/// [`Layout::max_tag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The layout in use (never `Auto`).
    pub mode: TagMode,
    /// Communicator-id bits (after the provider's reserved bits).
    pub cid_bits: u32,
    /// Source-rank bits (0 in `ofi_tag_full`).
    pub src_bits: u32,
    /// Tag bits (the highest is the internal marker).
    pub tag_bits: u32,
}

/// What a received tag (and CQ data) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// Source rank in the communicator.
    pub source: u32,
    /// The tag (user or internal, without the marker bit).
    pub tag: u32,
    /// The message is a conduit-internal one.
    pub internal: bool,
    /// The sender waits for an acknowledgement (synchronous send).
    pub sync: bool,
    /// This is an acknowledgement.
    pub ack: bool,
}

const fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Layout {
    /// The layout for `mode` on a provider with `facts`; `Auto` picks
    /// `ofi_tag_full` when the provider has remote CQ data and directed
    /// receive, else `ofi_tag_1` (the MTL's rule).
    pub fn choose(
        mode: TagMode,
        facts: &ProviderTagFacts,
        provider: &str,
    ) -> Result<Layout, LayoutError> {
        let full_ok = facts.remote_cq_data() && facts.directed_recv;
        let mode = match mode {
            TagMode::Auto if full_ok => TagMode::Full,
            TagMode::Auto => TagMode::Tag1,
            TagMode::Full if !full_ok => {
                let mut missing = Vec::new();
                if !facts.remote_cq_data() {
                    missing.push(format!(
                        "FI_REMOTE_CQ_DATA (cq_data_size {} bytes, 4 needed)",
                        facts.cq_data_size
                    ));
                }
                if !facts.directed_recv {
                    missing.push("FI_DIRECTED_RECV".to_string());
                }
                return Err(LayoutError::FullUnsupported {
                    provider: provider.to_string(),
                    missing: missing.join(" and "),
                });
            }
            m => m,
        };
        let (cid, src, tag): (u32, u32, u32) = match mode {
            TagMode::Tag1 => (12, 18, 32),
            TagMode::Tag2 => (24, 18, 20),
            _ => (28, 0, 32),
        };
        let reserved = facts.reserved_bits();
        let left = cid.saturating_sub(reserved);
        if left < MIN_CID_BITS {
            return Err(LayoutError::TooFewCidBits {
                provider: provider.to_string(),
                reserved,
                format: facts.mem_tag_format,
                mode,
                left,
            });
        }
        Ok(Layout {
            mode,
            cid_bits: left,
            src_bits: src,
            tag_bits: tag,
        })
    }

    /// The source rank travels in the CQ data (`ofi_tag_full`).
    #[inline]
    pub fn cq_data(&self) -> bool {
        self.src_bits == 0
    }
    /// The largest user tag.
    #[inline]
    pub fn max_tag(&self) -> u32 {
        mask(self.tag_bits - 1) as u32
    }
    /// The largest source rank (`u32::MAX` with the source in CQ data).
    #[inline]
    pub fn max_source(&self) -> u32 {
        if self.cq_data() {
            u32::MAX
        } else {
            mask(self.src_bits) as u32
        }
    }
    /// The largest communicator id.
    #[inline]
    pub fn max_cid(&self) -> u32 {
        mask(self.cid_bits) as u32
    }
    #[inline]
    fn proto_shift(&self) -> u32 {
        self.tag_bits
    }
    #[inline]
    fn src_shift(&self) -> u32 {
        self.tag_bits + PROTO_BITS
    }
    #[inline]
    fn cid_shift(&self) -> u32 {
        self.tag_bits + PROTO_BITS + self.src_bits
    }
    /// The synchronous-send bit.
    #[inline]
    pub fn sync_bit(&self) -> u64 {
        1 << self.proto_shift()
    }
    /// The acknowledgement bit.
    #[inline]
    pub fn ack_bit(&self) -> u64 {
        2 << self.proto_shift()
    }
    /// The internal-message bit (the tag field's highest).
    #[inline]
    pub fn internal_bit(&self) -> u64 {
        1 << (self.tag_bits - 1)
    }

    /// Check a user tag.
    pub fn check_tag(&self, tag: u32) -> Result<(), LimitError> {
        if tag > self.max_tag() {
            return Err(LimitError::Tag {
                tag,
                max: self.max_tag(),
                mode: self.mode,
            });
        }
        Ok(())
    }
    /// Check a source rank.
    pub fn check_source(&self, rank: u32) -> Result<(), LimitError> {
        if rank > self.max_source() {
            return Err(LimitError::Source {
                rank,
                max: self.max_source(),
                mode: self.mode,
            });
        }
        Ok(())
    }
    /// Check a communicator id.
    pub fn check_cid(&self, cid: u32) -> Result<(), LimitError> {
        if cid > self.max_cid() {
            return Err(LimitError::Cid {
                cid,
                max: self.max_cid(),
                mode: self.mode,
            });
        }
        Ok(())
    }

    /// The tag of a message from `source` on communicator `cid` with user
    /// tag `tag` (all checked by the caller: [`Layout::check_tag`] etc.).
    /// `internal` marks a conduit message.
    #[inline]
    pub fn send_bits(&self, cid: u32, source: u32, tag: u32, internal: bool) -> u64 {
        let mut b = ((cid as u64) << self.cid_shift()) | (tag as u64 & mask(self.tag_bits - 1));
        if !self.cq_data() {
            b |= (source as u64 & mask(self.src_bits)) << self.src_shift();
        }
        if internal {
            b |= self.internal_bit();
        }
        b
    }

    /// Match and ignore bits of a receive on `cid` from `source` (`None`:
    /// any) with `tag` (`None`: any user tag). A receive matches plain and
    /// synchronous sends, never acknowledgements, and a wildcard tag never
    /// matches an internal message. With the source in the CQ data the
    /// source is selected by a directed receive instead.
    #[inline]
    pub fn recv_bits(
        &self,
        cid: u32,
        source: Option<u32>,
        tag: Option<u32>,
        internal: bool,
    ) -> (u64, u64) {
        let mut ignore = self.sync_bit();
        let mut bits = self.send_bits(cid, source.unwrap_or(0), tag.unwrap_or(0), internal);
        if source.is_none() && !self.cq_data() {
            ignore |= mask(self.src_bits) << self.src_shift();
        }
        if tag.is_none() {
            ignore |= mask(self.tag_bits - 1);
            bits &= !mask(self.tag_bits - 1);
        }
        (bits, ignore)
    }

    /// The acknowledgement a receiver (`receiver`, its rank in `cid`) sends
    /// for a synchronous message with `tag` (the tag field as received).
    #[inline]
    pub fn ack_bits(&self, cid: u32, receiver: u32, tag_field: u64) -> u64 {
        let t = tag_field & mask(self.tag_bits);
        let mut b = ((cid as u64) << self.cid_shift()) | t | self.ack_bit();
        if !self.cq_data() {
            b |= (receiver as u64 & mask(self.src_bits)) << self.src_shift();
        }
        b
    }

    /// The bits a synchronous sender waits for: the acknowledgement from
    /// `dest` of its message with `send_bits` (exact match).
    #[inline]
    pub fn ack_wait_bits(&self, cid: u32, dest: u32, send_bits: u64) -> u64 {
        self.ack_bits(cid, dest, send_bits)
    }

    /// What a received message's tag and CQ data say.
    #[inline]
    pub fn decode(&self, bits: u64, data: u64) -> Decoded {
        let t = bits & mask(self.tag_bits);
        Decoded {
            source: if self.cq_data() {
                data as u32
            } else {
                ((bits >> self.src_shift()) & mask(self.src_bits)) as u32
            },
            tag: (t & mask(self.tag_bits - 1)) as u32,
            internal: t & self.internal_bit() != 0,
            sync: bits & self.sync_bit() != 0,
            ack: bits & self.ack_bit() != 0,
        }
    }

    /// The communicator id in a tag.
    #[inline]
    pub fn cid_of(&self, bits: u64) -> u32 {
        ((bits >> self.cid_shift()) & mask(self.cid_bits)) as u32
    }
}

#[cfg(test)]
mod tests;
