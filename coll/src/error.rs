//! The crate's one error type.

use crate::op::{DType, Op};

/// Everything the collectives logic can report: misuse at initiation (bad
/// ranks, operators, lengths) and messages a peer should not have sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A team rank at or beyond the team's size.
    #[error("team rank {rank} is outside a team of size {size}")]
    RankOutsideTeam {
        /// The rank asked about.
        rank: usize,
        /// The team's size.
        size: usize,
    },
    /// A team listing the same job rank twice.
    #[error("job rank {job_rank} appears more than once in the team's members")]
    DuplicateMember {
        /// The repeated job rank.
        job_rank: usize,
    },
    /// A team or tree with no ranks.
    #[error("a team (or tree) must have at least one rank")]
    EmptyTeam,
    /// A split given a number of entries other than the parent's size.
    #[error(
        "split of a team of size {size} got {got} entries; every member contributes exactly one"
    )]
    SplitCount {
        /// Entries given.
        got: usize,
        /// The parent team's size.
        size: usize,
    },
    /// A split entry at the wrong index (entries are indexed by parent rank).
    #[error("split entry at index {index} claims parent rank {parent_rank}; entries are indexed by parent team rank")]
    SplitEntryRank {
        /// Where it was.
        index: usize,
        /// What it claimed.
        parent_rank: usize,
    },
    /// Encoded split-entry words that do not decode.
    #[error("malformed split entry {words:?}: {why}")]
    SplitDecode {
        /// The words received.
        words: [u32; 4],
        /// What is wrong.
        why: &'static str,
    },
    /// A tree fan-out of zero.
    #[error("tree fan-out must be at least 1 (1 is a chain), got 0")]
    ZeroFanout,
    /// A chunk size of zero.
    #[error("the maximum chunk size must be at least 1 byte, got 0")]
    ZeroChunk,
    /// A payload needing more chunks than a `u32` counts.
    #[error("{len} bytes in chunks of {chunk} bytes needs more than u32::MAX chunks")]
    TooManyChunks {
        /// Payload length.
        len: usize,
        /// Chunk size.
        chunk: usize,
    },
    /// A built-in operator not defined for a data type.
    #[error("reduction operator {op:?} is not valid for data type {dtype:?} (bit-wise and logical operators take integer types only)")]
    InvalidOp {
        /// The operator.
        op: Op,
        /// The data type.
        dtype: DType,
    },
    /// A user-defined element size of zero.
    #[error("a user-defined reduction's element size must be non-zero")]
    ZeroElemSize,
    /// Operands of different lengths.
    #[error("reduction operands differ in length: accumulator {acc} bytes, other {other} bytes")]
    LengthMismatch {
        /// Accumulator length.
        acc: usize,
        /// Other operand's length.
        other: usize,
    },
    /// A length that is not a whole number of elements.
    #[error("{len} bytes is not a multiple of the {elem_size}-byte element size")]
    NotElementMultiple {
        /// The length.
        len: usize,
        /// The element size.
        elem_size: usize,
    },
    /// A root's source buffer whose length differs from the collective's.
    #[error("source buffer of {got} bytes for a collective of {expected} bytes")]
    SourceLength {
        /// Bytes given.
        got: usize,
        /// Bytes the collective moves.
        expected: usize,
    },
    /// A collective was started in a shape made for another kind (an
    /// internal error).
    #[error("this collective cannot be posted in that shape (an internal error)")]
    WrongShape,
    /// A broadcast root without source data.
    #[error("the broadcast root must supply the source data")]
    MissingSource,
    /// A chunk from a rank this rank expects nothing from.
    #[error("team rank {me} got chunk {chunk} from team rank {from}, which is not one of its expected senders {expected:?}")]
    UnexpectedSender {
        /// The receiving rank.
        me: usize,
        /// The sender.
        from: usize,
        /// The chunk index.
        chunk: u32,
        /// Ranks this rank receives from in this phase.
        expected: Vec<usize>,
    },
    /// A chunk index beyond the payload's chunks.
    #[error("chunk {chunk} is out of range: the payload has {chunks} chunks")]
    ChunkOutOfRange {
        /// The index received.
        chunk: u32,
        /// The number of chunks.
        chunks: u32,
    },
    /// A chunk received twice from the same sender.
    #[error("duplicate chunk {chunk} from team rank {from}")]
    DuplicateChunk {
        /// The sender.
        from: usize,
        /// The chunk index.
        chunk: u32,
    },
    /// A chunk of the wrong length.
    #[error("chunk {chunk} from team rank {from} has {len} bytes; expected {expected}")]
    ChunkLength {
        /// The sender.
        from: usize,
        /// The chunk index.
        chunk: u32,
        /// Bytes received.
        len: usize,
        /// Bytes expected.
        expected: usize,
    },
    /// A phase this collective does not have.
    #[error("phase {phase} is not a phase of this collective (it has {phases})")]
    BadPhase {
        /// The phase received.
        phase: u8,
        /// How many phases the collective has.
        phases: u8,
    },
    /// A message for a collective this rank started and has since retired.
    #[error(
        "message for sequence {seq}, a collective this rank has already completed and retired"
    )]
    StaleSequence {
        /// The sequence number.
        seq: u32,
    },
    /// A result asked for before the collective completed.
    #[error("collective sequence {seq} is not complete on this rank")]
    NotDone {
        /// The sequence number.
        seq: u32,
    },
    /// A collective-cache slot claiming more bytes than fit.
    #[error("a collective cache slot from team rank {from} claims {len} bytes; at most {max} fit")]
    BadSlot {
        /// The sending team rank.
        from: usize,
        /// Bytes claimed.
        len: usize,
        /// Bytes a slot carries.
        max: usize,
    },
    /// A board post (a contribution or payload posted in shared memory)
    /// claiming more bytes than a board buffer holds.
    #[error("a collective board post from team rank {from} claims {len} bytes; a board buffer holds at most {max}")]
    BadPost {
        /// The posting team rank.
        from: usize,
        /// Bytes claimed.
        len: usize,
        /// Bytes a board buffer holds.
        max: usize,
    },
    /// A user-defined reduction whose element does not fit in one chunk
    /// (an AM Medium): every member refuses it at the start.
    #[error("reduction element size elem_size = {elem_size} bytes exceeds the collective chunk limit of {max} bytes (GASNET_OFI_MAX_MEDIUM); use elements of at most {max} bytes or raise GASNET_OFI_MAX_MEDIUM")]
    ElemTooLarge {
        /// The element size given.
        elem_size: usize,
        /// The chunk limit.
        max: usize,
    },
    /// A member's operand (or a broadcast's length) differs from this
    /// rank's: seen from the chunks it sent.
    #[error("operands differ in length: team rank {me} has {ours} bytes, team rank {from} {}; every member must pass the same length", theirs_text(.theirs, *.chunk, *.chunk_len))]
    OperandsDiffer {
        /// This rank.
        me: usize,
        /// This rank's operand length.
        ours: usize,
        /// The member whose chunk did not fit.
        from: usize,
        /// That member's operand length, when its chunk tells.
        theirs: Option<usize>,
        /// The chunk's index.
        chunk: u32,
        /// The chunk's length.
        chunk_len: usize,
    },
    /// A member running another kind of collective under this one's
    /// sequence number.
    #[error("team rank {from} runs {theirs} where this rank runs {ours}; every member must start the same collectives in the same order")]
    CollectiveMismatch {
        /// The other member.
        from: usize,
        /// What this rank runs.
        ours: &'static str,
        /// What the other member runs.
        theirs: &'static str,
    },
    /// Another member failed this collective and said why.
    #[error("collective aborted by team rank {from}: {reason}")]
    Aborted {
        /// The member that failed it.
        from: usize,
        /// Its error.
        reason: String,
    },
    /// This rank could not send one of the collective's messages (the
    /// transport refused the post); the other members were told.
    #[error("collective failed on this rank: a message could not be sent: {reason}")]
    SendFailed {
        /// The transport's error.
        reason: String,
    },
    /// This rank could not start the collective (its caller got why); the
    /// other members were told.
    #[error("collective could not start on this rank: {reason}")]
    NotStarted {
        /// Why.
        reason: String,
    },
    /// A collective asked to run outside the machines while messages are
    /// held for its sequence number.
    #[error("collective sequence {seq} has messages held for it, so it cannot run outside the team's machines")]
    HeldForOutside {
        /// The sequence number.
        seq: u32,
    },
}

/// How [`Error::OperandsDiffer`] describes the other member's operand.
fn theirs_text(theirs: &Option<usize>, chunk: u32, chunk_len: usize) -> String {
    match theirs {
        Some(n) => format!("has {n} bytes"),
        None => format!("sent chunk {chunk} of {chunk_len} bytes, which does not fit this rank's"),
    }
}
