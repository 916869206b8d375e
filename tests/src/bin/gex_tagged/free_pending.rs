//! `free-pending`: a communicator freed while a member has a receive
//! pending on it. Every member is refused with `FreePending` naming the
//! member that has one (before, the free went through and the receive was
//! left to match the next communicator that took the id, or a synchronous
//! send's acknowledgement was never sent); the communicator stays usable:
//! the message is sent and received on it, then the free succeeds, and a
//! communicator made after it works.

use conduit::client::{Client, Error};
use conduit::tagged::TaggedError;
use tests::{fail, Fallible};

pub fn free_pending(c: &Client) -> Fallible<String> {
    let w = c.tagged_world()?;
    let me = w.rank();
    let d = w.dup()?;
    let mut buf = [0u8; 8];
    d.scope(|s| -> Fallible<()> {
        let r = if me == 0 {
            Some(s.irecv(&d, &mut buf, Some(1), Some(5))?)
        } else {
            None
        };
        match d.clone().free() {
            Err(Error::Tagged(TaggedError::FreePending { ranks, .. })) if ranks == [0] => {}
            other => {
                return Err(fail(format!(
                    "a free with a receive pending on rank 0 gave {:?}",
                    other.map_err(|e| e.report())
                )))
            }
        }
        if me == 1 {
            d.ssend(&[9u8; 8], 0, 5)?;
        }
        if let Some(r) = r {
            s.wait(r)?;
        }
        Ok(())
    })?;
    if me == 0 && buf != [9u8; 8] {
        return Err(fail(format!(
            "the message after the refused free read {buf:?}"
        )));
    }
    d.free()?;
    let e = w.dup()?;
    if me == 1 {
        e.send(&[4u8; 8], 0, 5)?;
    } else {
        let mut b = [0u8; 8];
        e.recv(&mut b, Some(1), Some(5))?;
        if b != [4u8; 8] {
            return Err(fail(format!(
                "the communicator after the free received {b:?}"
            )));
        }
    }
    e.free()?;
    Ok("ok: a free with a receive pending refused on every member, naming it; the message received, then freed".into())
}
