//! What the transport reports and how its operations are named: the
//! endpoints of a set ([`Ep`], [`Side`], [`Cq`]), the pointer-sized
//! completion [`Context`], completions and error completions, and what a
//! post or a poll returns.

use crate::ofi::OfiError;

/// Which endpoint of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ep {
    /// AM requests.
    Request,
    /// AM replies.
    Reply,
    /// RMA (writes and atomics with `FI_DELIVERY_COMPLETE`); the libfabric
    /// transport posts it on the reply endpoint.
    Rma,
}

/// Which side of the AM protocol a receive buffer or send buffer serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Requests.
    Request,
    /// Replies.
    Reply,
}

impl Side {
    /// The endpoint of this side.
    pub fn ep(self) -> Ep {
        match self {
            Side::Request => Ep::Request,
            Side::Reply => Ep::Reply,
        }
    }
    /// 0 for requests, 1 for replies.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Which completion queue of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cq {
    /// Sends, and RMA where the transport reports it here (one queue, or
    /// one per endpoint on multi-CQ providers: the transport reads them
    /// all).
    Tx,
    /// Receives of one side. A transport may report RMA transfers
    /// ([`Context::Rma`]) on the reply side's queue, which every round of
    /// progress reads in both modes; the libfabric transport does.
    Rx(Side),
}

/// What a completion belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Receive buffer `buf` (of the side whose queue reported it).
    Recv {
        /// Buffer index.
        buf: u32,
    },
    /// Send buffer `buf` of `side`'s pool.
    Send {
        /// Pool.
        side: Side,
        /// Buffer index.
        buf: u32,
    },
    /// A transfer of the RMA operation in slot `slot`.
    Rma {
        /// Operation slot.
        slot: u32,
    },
    /// A remote write with CQ data landed here (an AM Long in one
    /// message, `am::landing`): reported by receive queues, never posted;
    /// the data is in [`Completion::data`].
    Landed,
}

const TAG_BITS: u32 = 3;
const TAG_RECV: usize = 1;
const TAG_SEND_REQ: usize = 2;
const TAG_SEND_REP: usize = 3;
const TAG_RMA: usize = 4;
const TAG_LANDED: usize = 5;

impl Context {
    /// The pointer-sized value (never 0).
    #[inline]
    pub fn encode(self) -> usize {
        let (tag, v) = match self {
            Context::Recv { buf } => (TAG_RECV, buf),
            Context::Send {
                side: Side::Request,
                buf,
            } => (TAG_SEND_REQ, buf),
            Context::Send {
                side: Side::Reply,
                buf,
            } => (TAG_SEND_REP, buf),
            Context::Rma { slot } => (TAG_RMA, slot),
            Context::Landed => (TAG_LANDED, 0),
        };
        ((v as usize) << TAG_BITS) | tag
    }

    /// The context a value of [`Context::encode`] stands for; `None` for any
    /// other value.
    #[inline]
    pub fn decode(x: usize) -> Option<Context> {
        let v = u32::try_from(x >> TAG_BITS).ok()?;
        match x & ((1 << TAG_BITS) - 1) {
            TAG_RECV => Some(Context::Recv { buf: v }),
            TAG_SEND_REQ => Some(Context::Send {
                side: Side::Request,
                buf: v,
            }),
            TAG_SEND_REP => Some(Context::Send {
                side: Side::Reply,
                buf: v,
            }),
            TAG_RMA => Some(Context::Rma { slot: v }),
            TAG_LANDED => Some(Context::Landed),
            _ => None,
        }
    }
}

/// A successful completion.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// What it belongs to.
    pub ctx: Context,
    /// Bytes received (receives).
    pub len: usize,
    /// Where a received message starts (multi-receive buffers), else null.
    pub buf: *const u8,
    /// `FI_MULTI_RECV`: the provider released the receive buffer.
    pub released: bool,
    /// Remote CQ data ([`Context::Landed`]), else 0.
    pub data: u64,
}

/// A failed operation (`fi_cq_readerr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCompletion {
    /// What it belongs to (`None` if the provider reported a context the
    /// conduit never posted).
    pub ctx: Option<Context>,
    /// libfabric error number (positive `FI_E*`).
    pub err: i32,
    /// The provider's error number.
    pub prov_errno: i32,
    /// `fi_cq_strerror`'s text.
    pub text: String,
    /// `FI_MULTI_RECV` was set: the receive buffer was released.
    pub released: bool,
    /// A failed receive into a multi-receive buffer: the address and
    /// length of the bytes the provider placed there, if it reports them
    /// (they take their room in the buffer like a delivered message's).
    pub placed: Option<(usize, usize)>,
}

impl ErrorCompletion {
    /// The failure as an RMA transfer error.
    pub fn transfer_error(&self) -> rma::ops::TransferError {
        rma::ops::TransferError {
            err: self.err,
            prov_errno: self.prov_errno,
            text: self.text.clone(),
        }
    }
}

/// What one poll of a queue found.
#[derive(Debug)]
pub enum Polled {
    /// Nothing.
    Empty,
    /// This many completions were written to the front of the buffer.
    Completions(usize),
    /// An operation failed.
    Error(ErrorCompletion),
}

/// Why a post did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostError {
    /// `-FI_EAGAIN`: retry after progress.
    Again,
    /// `-FI_ENOMEM` from a receive post: no receive entry is free.
    NoMemory,
    /// Anything else.
    Failed(OfiError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_round_trip_and_never_encode_to_zero() {
        let all = [
            Context::Recv { buf: 0 },
            Context::Recv { buf: u32::MAX },
            Context::Send {
                side: Side::Request,
                buf: 7,
            },
            Context::Send {
                side: Side::Reply,
                buf: 0,
            },
            Context::Rma { slot: 123_456 },
        ];
        for c in all {
            let v = c.encode();
            assert_ne!(v, 0);
            assert_eq!(Context::decode(v), Some(c));
        }
        assert_eq!(Context::decode(0), None);
        assert_eq!(Context::decode(0x5000), None);
        assert_eq!(Context::decode(7), None);
    }
}
