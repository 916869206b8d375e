//! Vector, indexed and strided puts and gets (GASNet-EX's
//! `gex_VIS_{Vector,Indexed,Strided}{Put,Get}` semantics, blocking): the
//! local side is a buffer with offsets into it, the remote side offsets
//! into the target's segment. Every piece is checked before anything
//! moves: a piece outside the segment or the buffer is an error naming it,
//! and nothing is written.
//!
//! ```no_run
//! use conduit::client::Client;
//!
//! let c = Client::init().unwrap();
//! c.attach_segment(1 << 20).unwrap();
//! let peer = (c.rank() + 1) % c.size();
//! // Column 2 of a 4x4 u32 matrix at offset 0 of the peer's segment from
//! // a local row of 4 values.
//! let row: Vec<u8> = [1u32, 2, 3, 4].iter().flat_map(|x| x.to_ne_bytes()).collect();
//! c.put_strided(peer, 8, &[16], &row, 0, &[4], 4, &[4]).unwrap();
//! c.barrier().unwrap();
//! ```

use super::engine::{not_in_handler, Dir};
use super::{ClientOf, Error};
use crate::sync::Mode;
use crate::transport::Transport;
use rma::vis::{walk_indexed, walk_strided, walk_vector, Indexed, Strided, Walk};

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    fn segment_len(&self, rank: usize) -> Result<usize, Error> {
        Ok(self.core().segment_info(rank)?.size as usize)
    }

    fn vis_run(
        &self,
        rank: usize,
        dir: Dir,
        local: *mut u8,
        walk: Result<Walk<'_>, rma::vis::Error>,
    ) -> Result<(), Error> {
        self.core().vis(0, rank, dir, local, walk?)?;
        self.core().exit_if_requested()
    }

    /// Vector put: the bytes of `src`'s pieces `(offset, len)`, in order,
    /// into `rank`'s segment pieces `dst` (equal totals; the pieces on the
    /// two sides may differ in size).
    pub fn put_vector(
        &self,
        rank: usize,
        dst: &[(usize, usize)],
        src: &[u8],
        src_pieces: &[(usize, usize)],
    ) -> Result<(), Error> {
        not_in_handler("put_vector")?;
        let plan = walk_vector(src_pieces, src.len(), dst, self.segment_len(rank)?);
        self.vis_run(rank, Dir::Put, src.as_ptr() as *mut u8, plan)
    }

    /// Vector get: `rank`'s segment pieces `src` into `dst`'s pieces.
    pub fn get_vector(
        &self,
        rank: usize,
        dst: &mut [u8],
        dst_pieces: &[(usize, usize)],
        src: &[(usize, usize)],
    ) -> Result<(), Error> {
        not_in_handler("get_vector")?;
        let plan = walk_vector(dst_pieces, dst.len(), src, self.segment_len(rank)?);
        self.vis_run(rank, Dir::Get, dst.as_mut_ptr(), plan)
    }

    /// Indexed put: pieces of `src_len` bytes at `src_offsets` of `src`
    /// into pieces of `dst_len` bytes at `dst_offsets` of `rank`'s segment.
    #[allow(clippy::too_many_arguments)]
    pub fn put_indexed(
        &self,
        rank: usize,
        dst_offsets: &[usize],
        dst_len: usize,
        src: &[u8],
        src_offsets: &[usize],
        src_len: usize,
    ) -> Result<(), Error> {
        not_in_handler("put_indexed")?;
        let plan = walk_indexed(
            Indexed {
                offsets: src_offsets,
                len: src_len,
            },
            src.len(),
            Indexed {
                offsets: dst_offsets,
                len: dst_len,
            },
            self.segment_len(rank)?,
        );
        self.vis_run(rank, Dir::Put, src.as_ptr() as *mut u8, plan)
    }

    /// Indexed get.
    #[allow(clippy::too_many_arguments)]
    pub fn get_indexed(
        &self,
        rank: usize,
        dst: &mut [u8],
        dst_offsets: &[usize],
        dst_len: usize,
        src_offsets: &[usize],
        src_len: usize,
    ) -> Result<(), Error> {
        not_in_handler("get_indexed")?;
        let plan = walk_indexed(
            Indexed {
                offsets: dst_offsets,
                len: dst_len,
            },
            dst.len(),
            Indexed {
                offsets: src_offsets,
                len: src_len,
            },
            self.segment_len(rank)?,
        );
        self.vis_run(rank, Dir::Get, dst.as_mut_ptr(), plan)
    }

    /// Strided put (GASNet-EX's format): contiguous elements of `elemsz`
    /// bytes, `count[i]` items at level `i` (level 0 varying fastest), the
    /// items of level `i` `strides[i]` bytes apart on each side; the local
    /// side starts at `src_offset` of `src`, the remote one at
    /// `dst_offset` of `rank`'s segment.
    #[allow(clippy::too_many_arguments)]
    pub fn put_strided(
        &self,
        rank: usize,
        dst_offset: usize,
        dst_strides: &[isize],
        src: &[u8],
        src_offset: usize,
        src_strides: &[isize],
        elemsz: usize,
        count: &[usize],
    ) -> Result<(), Error> {
        not_in_handler("put_strided")?;
        let plan = walk_strided(
            Strided {
                offset: src_offset,
                strides: src_strides,
            },
            src.len(),
            Strided {
                offset: dst_offset,
                strides: dst_strides,
            },
            self.segment_len(rank)?,
            elemsz,
            count,
        );
        self.vis_run(rank, Dir::Put, src.as_ptr() as *mut u8, plan)
    }

    /// Strided get.
    #[allow(clippy::too_many_arguments)]
    pub fn get_strided(
        &self,
        rank: usize,
        dst: &mut [u8],
        dst_offset: usize,
        dst_strides: &[isize],
        src_offset: usize,
        src_strides: &[isize],
        elemsz: usize,
        count: &[usize],
    ) -> Result<(), Error> {
        not_in_handler("get_strided")?;
        let plan = walk_strided(
            Strided {
                offset: dst_offset,
                strides: dst_strides,
            },
            dst.len(),
            Strided {
                offset: src_offset,
                strides: src_strides,
            },
            self.segment_len(rank)?,
            elemsz,
            count,
        );
        self.vis_run(rank, Dir::Get, dst.as_mut_ptr(), plan)
    }

    /// Vector put or get with the local side as raw memory (for C
    /// callers): `local_pieces` are offsets into `local ..
    /// local + local_len`, `remote` offsets into `rank`'s segment. Checked
    /// as [`ClientOf::put_vector`] before anything moves.
    ///
    /// # Safety
    /// Every local piece is readable (put) or writable (get) memory for the
    /// duration of the call, and not accessed by anything else meanwhile;
    /// the span between pieces is never touched.
    pub unsafe fn raw_vector(
        &self,
        rank: usize,
        put: bool,
        local: *mut u8,
        local_len: usize,
        local_pieces: &[(usize, usize)],
        remote: &[(usize, usize)],
    ) -> Result<(), Error> {
        not_in_handler("a vector transfer")?;
        let plan = walk_vector(local_pieces, local_len, remote, self.segment_len(rank)?);
        self.vis_run(rank, dir(put), local, plan)
    }

    /// Indexed put or get with the local side as raw memory (see
    /// [`ClientOf::raw_vector`]): pieces of `local_piece` bytes at
    /// `local_offsets`, of `remote_piece` bytes at `remote_offsets`.
    ///
    /// # Safety
    /// As [`ClientOf::raw_vector`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn raw_indexed(
        &self,
        rank: usize,
        put: bool,
        local: *mut u8,
        local_len: usize,
        local_offsets: &[usize],
        local_piece: usize,
        remote_offsets: &[usize],
        remote_piece: usize,
    ) -> Result<(), Error> {
        not_in_handler("an indexed transfer")?;
        let plan = walk_indexed(
            Indexed {
                offsets: local_offsets,
                len: local_piece,
            },
            local_len,
            Indexed {
                offsets: remote_offsets,
                len: remote_piece,
            },
            self.segment_len(rank)?,
        );
        self.vis_run(rank, dir(put), local, plan)
    }

    /// Strided put or get with the local side as raw memory (see
    /// [`ClientOf::raw_vector`] and [`ClientOf::put_strided`]).
    ///
    /// # Safety
    /// As [`ClientOf::raw_vector`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn raw_strided(
        &self,
        rank: usize,
        put: bool,
        local: *mut u8,
        local_len: usize,
        local_offset: usize,
        local_strides: &[isize],
        remote_offset: usize,
        remote_strides: &[isize],
        elemsz: usize,
        count: &[usize],
    ) -> Result<(), Error> {
        not_in_handler("a strided transfer")?;
        let plan = walk_strided(
            Strided {
                offset: local_offset,
                strides: local_strides,
            },
            local_len,
            Strided {
                offset: remote_offset,
                strides: remote_strides,
            },
            self.segment_len(rank)?,
            elemsz,
            count,
        );
        self.vis_run(rank, dir(put), local, plan)
    }
}

fn dir(put: bool) -> Dir {
    if put {
        Dir::Put
    } else {
        Dir::Get
    }
}
