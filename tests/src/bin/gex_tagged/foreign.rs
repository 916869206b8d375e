//! `foreign`: requests returned out of the scope that started it (which
//! finished them when it ended) and then waited for, tested or waited for
//! among others in a second scope are refused with `ForeignRequest`
//! instead of waiting for ever or reporting a made-up status; messages
//! sent afterwards arrive as usual.

use conduit::client::{Client, Error};
use tests::{fail, Fallible};

const WANT: &str = "this receive request is not one of this scope's: a request is waited for or \
                    tested in the scope that started it (one returned out of its scope was \
                    finished when that scope ended)";

fn expect_foreign<T: std::fmt::Debug>(what: &str, r: Result<T, Error>) -> Fallible<()> {
    match r {
        Err(e) if e.report() == WANT => Ok(()),
        other => Err(fail(format!(
            "{what} gave {:?}, not the foreign-request error",
            other.map_err(|e| e.report())
        ))),
    }
}

pub fn foreign(c: &Client) -> Fallible<String> {
    let w = c.tagged_world()?;
    let me = w.rank();
    let peer = (me + 1) % w.size();
    let mut bufs = [[0u8; 8]; 3];
    let [b0, b1, b2] = &mut bufs;
    // Three receives that no message matches, each returned out of its
    // scope (which cancels it when it ends).
    let escaped = [b0, b1, b2].map(|b| {
        w.scope(|s| s.irecv(&w, b, Some(peer), Some(77)))
            .map_err(|e| e.report())
    });
    let [r0, r1, r2] = escaped;
    let (r0, r1, r2) = (r0.map_err(fail)?, r1.map_err(fail)?, r2.map_err(fail)?);
    w.scope(|s| {
        expect_foreign("a wait in another scope", s.wait(r0))?;
        match s.test(r1) {
            Ok(r) => expect_foreign("a test in another scope", r)?,
            Err(_) => return Err(fail("a test in another scope said 'not finished'")),
        }
        let mut rs = vec![r2];
        match s.wait_any(&mut rs) {
            Some((0, r)) if rs.is_empty() => expect_foreign("a wait_any in another scope", r)?,
            other => {
                return Err(fail(format!(
                    "a wait_any in another scope gave {:?}",
                    other.map(|(i, r)| (i, r.map_err(|e| e.report())))
                )))
            }
        }
        Ok(())
    })?;
    // Nothing was lost or matched by the finished receives.
    let out = [me as u8 + 1; 8];
    let mut got = [0u8; 8];
    w.scope(|s| {
        let r = s.irecv(&w, &mut got, Some((me + w.size() - 1) % w.size()), Some(78))?;
        s.isend(&w, &out, peer, 78).and_then(|x| s.wait(x))?;
        s.wait(r)
    })?;
    let from = (me + w.size() - 1) % w.size();
    if got != [from as u8 + 1; 8] {
        return Err(fail(format!("the message after them read {got:?}")));
    }
    Ok("ok: requests waited, tested and waited among others outside their scope refused; a message after them".into())
}
