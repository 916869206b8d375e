//! The transport's table of endpoint addresses: every rank's `EPS * sets`
//! addresses in rank order, `FI_ADDR_NOTAVAIL` for a rank outside the
//! provider's address vector (one that shares memory with this rank when
//! the shared-memory path carries everything).

use crate::ofi::{FiAddr, OfiError};
use crate::transport::{Ep, PostError};
use ofi_sys as sys;

/// The address of `rank`'s endpoint `ep` of set `set` in `addrs` (every
/// rank's `EPS * nsets` addresses in order); a rank outside the address
/// vector is refused.
#[inline(always)]
pub(super) fn lookup(
    addrs: &[FiAddr],
    nsets: usize,
    rank: usize,
    set: usize,
    ep: Ep,
) -> Result<FiAddr, PostError> {
    let a = addrs[(rank * nsets + set) * EPS + ep_index(ep)];
    if a == sys::FI_ADDR_NOTAVAIL_VALUE {
        return Err(unreachable_rank(rank));
    }
    Ok(a)
}

/// A transfer to a rank outside the address vector (the shared-memory path
/// carries everything to it): a conduit bug, reported, never posted.
#[cold]
#[inline(never)]
fn unreachable_rank(rank: usize) -> PostError {
    PostError::Failed(OfiError {
        call: "address lookup",
        code: -(sys::FI_EHOSTUNREACH as i64),
        text: format!(
            "rank {rank} shares memory with this rank and its endpoints are not in the \
             provider's address vector (the shared-memory path carries everything \
             between them); set GASNET_SUPERNODE_MAXSIZE=1 to send through the provider"
        ),
    })
}

/// Endpoints per set: request and reply.
pub(super) const EPS: usize = 2;

/// Where endpoint `ep` sits in a set: RMA goes through the reply endpoint
/// (whose queue every round reads, in both progress modes).
#[inline(always)]
pub(super) fn ep_index(ep: Ep) -> usize {
    match ep {
        Ep::Request => 0,
        Ep::Reply | Ep::Rma => 1,
    }
}

/// The local endpoint an AM to a peer's endpoint `ep` leaves from where
/// the profile says `am_paired_endpoints` (tcp;ofi_rxm, and tcp's native
/// RDM endpoint of libfabric 1.18+): the other AM
/// endpoint of the set. A rank's requests go from its reply endpoint to
/// the peer's request endpoint, and the peer's replies come back from that
/// request endpoint to this reply endpoint, so a request and its reply
/// travel over one connection in both directions: each message's
/// TCP acknowledgement rides on the next message instead of being a
/// segment of its own, which costs the receiving kernel work on the round
/// trip's path (docs/PERFORMANCE.md, "Requests and their replies over one
/// connection"). RMA keeps the reply endpoint at both ends (memory bound
/// to an endpoint is bound to that one).
#[inline(always)]
pub(super) fn sender(ep: Ep) -> Ep {
    match ep {
        Ep::Request => Ep::Reply,
        Ep::Reply => Ep::Request,
        Ep::Rma => Ep::Rma,
    }
}

/// Which local endpoint (its index in the set) a message to a peer's
/// endpoint `ep` leaves from: [`sender`]'s for a profile with
/// `am_paired_endpoints`, the same side's otherwise. Decided once when the
/// transport opens, so a send looks the index up instead of branching on
/// the profile.
#[derive(Debug, Clone, Copy)]
pub(super) struct Senders([u8; 3]);

impl Senders {
    /// The table for a profile that does (`paired`) or does not pair
    /// requests with their replies.
    pub(super) fn new(paired: bool) -> Self {
        let pick = |ep: Ep| ep_index(if paired { sender(ep) } else { ep }) as u8;
        Senders([pick(Ep::Request), pick(Ep::Reply), pick(Ep::Rma)])
    }

    /// The local endpoint's index in its set for a message to `ep`.
    #[inline(always)]
    pub(super) fn index(&self, ep: Ep) -> usize {
        self.0[ep as usize] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_senders_table_matches_the_pairing_rule() {
        for ep in [Ep::Request, Ep::Reply, Ep::Rma] {
            assert_eq!(Senders::new(true).index(ep), ep_index(sender(ep)));
            assert_eq!(Senders::new(false).index(ep), ep_index(ep));
        }
    }

    #[test]
    fn a_request_and_its_reply_share_a_pair_of_endpoints() {
        // Rank a's request leaves a's reply endpoint for b's request
        // endpoint; b's reply leaves b's request endpoint for a's reply
        // endpoint: the same two endpoints, so one connection.
        let request = (ep_index(sender(Ep::Request)), ep_index(Ep::Request));
        let reply = (ep_index(sender(Ep::Reply)), ep_index(Ep::Reply));
        assert_eq!(request, (reply.1, reply.0));
        assert_ne!(request.0, request.1);
        assert_eq!(sender(Ep::Rma), Ep::Rma);
    }

    #[test]
    fn a_rank_outside_the_address_vector_is_refused_by_name() {
        // Two sets; rank 1's addresses only (rank 0 and 2 share memory).
        let na = sys::FI_ADDR_NOTAVAIL_VALUE;
        let mut addrs = vec![na; EPS * 2 * 3];
        for (i, a) in addrs[4..8].iter_mut().enumerate() {
            *a = i as FiAddr;
        }
        assert_eq!(lookup(&addrs, 2, 1, 0, Ep::Request).ok(), Some(0));
        assert_eq!(lookup(&addrs, 2, 1, 1, Ep::Reply).ok(), Some(3));
        assert_eq!(lookup(&addrs, 2, 1, 1, Ep::Rma).ok(), Some(3));
        match lookup(&addrs, 2, 2, 1, Ep::Reply) {
            Err(PostError::Failed(e)) => {
                assert_eq!(e.code, -(sys::FI_EHOSTUNREACH as i64));
                assert!(
                    e.text.starts_with("rank 2 shares memory with this rank and its endpoints are not in the provider's address vector"),
                    "{}",
                    e.text
                );
            }
            Err(PostError::Again) | Err(PostError::NoMemory) | Ok(_) => {
                panic!("rank 2 is outside the address vector")
            }
        }
    }
}
