//! The send and receive paths specialised at start-up, as the OFI MTL's
//! generated `ompi_mtl_ofi_send_<cq_data>_<sep>` functions: one compiled
//! copy per combination of "the source rank travels in the CQ data"
//! (`ofi_tag_full`) and "the peers are a scalable endpoint's contexts"
//! (and, for sends, "small messages go from a copy, not injected": the
//! profile's `tagged_inject_min_libfabric`; for sends and for reading
//! completions, "each message's length travels in the CQ data": the
//! profile's `tagged_truncation_unreported`), picked once when tagged
//! messaging opens, so none of these facts is tested per message.

use super::engine::{CommInfo, Ctx, Engine};
use super::ops::{Posted, Select, SendHow};
use crate::client::Error;
use crate::ofi::{rx_addr, FiAddr};
use crate::sync::Mode;

/// `Engine::start_send_as::<CQ, SEP, COPY, LEN>`.
type SendFn<M> =
    unsafe fn(&Engine<M>, &CommInfo, *const u8, usize, u32, u32, SendHow) -> Result<Posted, Error>;
/// `Engine::recv_match_as::<CQ, SEP>`.
type MatchFn<M> = fn(&Engine<M>, &CommInfo, Select) -> Result<(FiAddr, u64, u64), Error>;
/// `Engine::progress_ctx_as::<LEN>`.
type ProgressFn<M> = fn(&Engine<M>, &Ctx<M>) -> Result<bool, Error>;

/// The provider's facts the paths are picked by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PathFacts {
    /// The source rank travels in the CQ data (`ofi_tag_full`).
    pub cq_data: bool,
    /// The peers are a scalable endpoint's contexts.
    pub sep: bool,
    /// Small messages are sent from a copy, not injected (the profile's
    /// `tagged_inject_min_libfabric`).
    pub copy_small: bool,
    /// The profile says the provider does not report truncation
    /// (`tagged_truncation_unreported`): each message's length travels in
    /// the high half of the CQ data where there is CQ data ([`Self::len`]).
    pub len_in_data: bool,
}

impl PathFacts {
    /// Whether each message's length travels in the CQ data: asked for,
    /// and the layout carries CQ data.
    pub(crate) fn len(&self) -> bool {
        self.len_in_data && self.cq_data
    }
}

/// The paths one engine uses.
pub(crate) struct Paths<M: Mode> {
    send: SendFn<M>,
    recv_match: MatchFn<M>,
    progress: ProgressFn<M>,
    /// Which combination, for the start-up report.
    pub name: &'static str,
}

/// `Engine::start_send_as::<CQ, SEP, COPY, LEN>` with `COPY` and `LEN` as
/// `copy` and `len` say.
macro_rules! send_path {
    ($cq:literal, $sep:literal, $copy:expr, $len:expr) => {
        match ($copy, $len) {
            (true, true) => Engine::<M>::start_send_as::<$cq, $sep, true, true> as SendFn<M>,
            (true, false) => Engine::<M>::start_send_as::<$cq, $sep, true, false> as SendFn<M>,
            (false, true) => Engine::<M>::start_send_as::<$cq, $sep, false, true> as SendFn<M>,
            (false, false) => Engine::<M>::start_send_as::<$cq, $sep, false, false> as SendFn<M>,
        }
    };
}

impl<M: Mode> Paths<M> {
    /// The paths for the facts `f` (the length in the CQ data as
    /// [`PathFacts::len`] says).
    pub(crate) fn pick(f: PathFacts) -> Paths<M> {
        let len = f.len();
        let copy_small = f.copy_small;
        let progress = if len {
            Engine::<M>::progress_ctx_as::<true> as ProgressFn<M>
        } else {
            Engine::<M>::progress_ctx_as::<false> as ProgressFn<M>
        };
        match (f.cq_data, f.sep) {
            (true, true) => Paths {
                send: send_path!(true, true, copy_small, len),
                progress,
                recv_match: Engine::<M>::recv_match_as::<true, true>,
                name: "source in CQ data, scalable endpoint",
            },
            (true, false) => Paths {
                send: send_path!(true, false, copy_small, len),
                progress,
                recv_match: Engine::<M>::recv_match_as::<true, false>,
                name: "source in CQ data, regular endpoints",
            },
            (false, true) => Paths {
                send: send_path!(false, true, copy_small, false),
                progress,
                recv_match: Engine::<M>::recv_match_as::<false, true>,
                name: "source in the tag, scalable endpoint",
            },
            (false, false) => Paths {
                send: send_path!(false, false, copy_small, false),
                progress,
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
        c.live()?;
        // SAFETY: per this function's contract.
        unsafe { (self.paths.send)(self, c, buf, len, dest, tag, how) }
    }

    /// Progress on one context, on the path picked at start-up (see
    /// `progress_ctx_as`).
    #[inline]
    pub fn progress_ctx(&self, c: &Ctx<M>) -> Result<bool, Error> {
        (self.paths.progress)(self, c)
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
        c.live()?;
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
    use super::{PathFacts, Paths};
    use crate::sync::Seq;

    fn pick(cq_data: bool, sep: bool, copy_small: bool, len_in_data: bool) -> Paths<Seq> {
        Paths::pick(PathFacts {
            cq_data,
            sep,
            copy_small,
            len_in_data,
        })
    }

    #[test]
    fn each_combination_has_its_own_path() {
        let names: Vec<&str> = [(true, true), (true, false), (false, true), (false, false)]
            .into_iter()
            .map(|(c, s)| pick(c, s, false, false).name)
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
        // Which of (send, receive matching, completions) two picks differ in.
        let differs = |x: &Paths<Seq>, y: &Paths<Seq>| {
            [
                x.send as usize != y.send as usize,
                x.recv_match as usize != y.recv_match as usize,
                x.progress as usize != y.progress as usize,
            ]
        };
        let a = pick(true, false, false, false);
        let b = pick(false, false, false, false);
        assert_eq!(differs(&a, &b), [true, true, false]);
        // Copying small messages changes the send path only.
        let c = pick(true, false, true, false);
        assert_eq!(differs(&a, &c), [true, false, false]);
        assert_eq!(a.name, c.name);
        // The length in the CQ data changes the send path and the
        // completions' path, not the receives' matching.
        let d = pick(true, false, false, true);
        assert_eq!(differs(&a, &d), [true, false, true]);
        let e = pick(true, false, true, true);
        assert_eq!(differs(&c, &e), [true, false, true]);
        assert_eq!(differs(&d, &e), [true, false, false]);
        // Without CQ data there is nowhere to carry the length.
        let f = pick(false, false, false, true);
        assert_eq!(differs(&b, &f), [false, false, false]);
    }
}
