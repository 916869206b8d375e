//! The send and receive paths specialised at start-up, as the OFI MTL's
//! generated `ompi_mtl_ofi_send_<cq_data>_<sep>` functions: one compiled
//! copy per combination of "the source rank travels in the CQ data"
//! (`ofi_tag_full`) and "the peers are a scalable endpoint's contexts"
//! (and, for sends, "small messages go from a copy, not injected": the
//! profile's `tagged_inject_min_libfabric`), picked once when tagged
//! messaging opens, so none of these facts is tested per message.

use super::engine::{CommInfo, Engine};
use super::ops::{Posted, Select, SendHow};
use crate::client::Error;
use crate::ofi::{rx_addr, FiAddr};
use crate::sync::Mode;

/// `Engine::start_send_as::<CQ, SEP, COPY>`.
type SendFn<M> =
    unsafe fn(&Engine<M>, &CommInfo, *const u8, usize, u32, u32, SendHow) -> Result<Posted, Error>;
/// `Engine::recv_match_as::<CQ, SEP>`.
type MatchFn<M> = fn(&Engine<M>, &CommInfo, Select) -> Result<(FiAddr, u64, u64), Error>;

/// The paths one engine uses.
pub(crate) struct Paths<M: Mode> {
    send: SendFn<M>,
    recv_match: MatchFn<M>,
    /// Which combination, for the start-up report.
    pub name: &'static str,
}

/// `Engine::start_send_as::<CQ, SEP, true or false>` as `copy` says.
macro_rules! send_path {
    ($cq:literal, $sep:literal, $copy:expr) => {
        if $copy {
            Engine::<M>::start_send_as::<$cq, $sep, true> as SendFn<M>
        } else {
            Engine::<M>::start_send_as::<$cq, $sep, false> as SendFn<M>
        }
    };
}

impl<M: Mode> Paths<M> {
    /// The paths for a layout with (`cq_data`) or without the source in
    /// the CQ data, over a scalable endpoint (`sep`) or regular ones,
    /// sending small messages from a copy (`copy_small`) or injecting them.
    pub(crate) fn pick(cq_data: bool, sep: bool, copy_small: bool) -> Paths<M> {
        match (cq_data, sep) {
            (true, true) => Paths {
                send: send_path!(true, true, copy_small),
                recv_match: Engine::<M>::recv_match_as::<true, true>,
                name: "source in CQ data, scalable endpoint",
            },
            (true, false) => Paths {
                send: send_path!(true, false, copy_small),
                recv_match: Engine::<M>::recv_match_as::<true, false>,
                name: "source in CQ data, regular endpoints",
            },
            (false, true) => Paths {
                send: send_path!(false, true, copy_small),
                recv_match: Engine::<M>::recv_match_as::<false, true>,
                name: "source in the tag, scalable endpoint",
            },
            (false, false) => Paths {
                send: send_path!(false, false, copy_small),
                recv_match: Engine::<M>::recv_match_as::<false, false>,
                name: "source in the tag, regular endpoints",
            },
        }
    }
}

impl<M: Mode> Engine<M> {
    /// Start a send of `len` bytes at `buf` to communicator rank `dest`
    /// on the path picked at start-up.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unmodified until the request
    /// finishes (an injected send is done at return).
    #[inline]
    pub(crate) unsafe fn start_send(
        &self,
        c: &CommInfo,
        buf: *const u8,
        len: usize,
        dest: u32,
        tag: u32,
        how: SendHow,
    ) -> Result<Posted, Error> {
        // SAFETY: per this function's contract.
        unsafe { (self.paths.send)(self, c, buf, len, dest, tag, how) }
    }

    /// A receive's source address, match bits and ignore mask for `sel`
    /// (checked against the layout and the communicator), on the path
    /// picked at start-up.
    #[inline]
    pub(crate) fn recv_match(
        &self,
        c: &CommInfo,
        sel: Select,
    ) -> Result<(FiAddr, u64, u64), Error> {
        (self.paths.recv_match)(self, c, sel)
    }

    /// The address of world rank `world`'s context `ctx`: through
    /// `fi_rx_addr` on a scalable endpoint (`SEP`), else its regular
    /// endpoint's.
    #[inline]
    pub(crate) fn addr_as<const SEP: bool>(&self, ctx: usize, world: u32) -> FiAddr {
        if SEP {
            rx_addr(self.addrs[0][world as usize], ctx as i32, self.rx_ctx_bits)
        } else {
            self.addrs[ctx][world as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Paths;
    use crate::sync::Seq;

    #[test]
    fn each_combination_has_its_own_path() {
        let names: Vec<&str> = [(true, true), (true, false), (false, true), (false, false)]
            .into_iter()
            .map(|(c, s)| Paths::<Seq>::pick(c, s, false).name)
            .collect();
        assert_eq!(
            names,
            [
                "source in CQ data, scalable endpoint",
                "source in CQ data, regular endpoints",
                "source in the tag, scalable endpoint",
                "source in the tag, regular endpoints"
            ]
        );
        let a = Paths::<Seq>::pick(true, false, false);
        let b = Paths::<Seq>::pick(false, false, false);
        assert_ne!(a.send as usize, b.send as usize);
        assert_ne!(a.recv_match as usize, b.recv_match as usize);
        // Copying small messages changes the send path only.
        let c = Paths::<Seq>::pick(true, false, true);
        assert_ne!(a.send as usize, c.send as usize);
        assert_eq!(a.recv_match as usize, c.recv_match as usize);
        assert_eq!(a.name, c.name);
    }
}
