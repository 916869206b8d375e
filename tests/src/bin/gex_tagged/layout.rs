//! `gex-tagged limits` and `layout`: the tag layout's limits and what it
//! chose.

use super::checks::check;
use conduit::client::Client;
use tests::{fail, Fallible};

/// Values beyond the layout: each refusal's text, one per line.
pub fn limits(c: &Client) -> Fallible<String> {
    let w = c.tagged_world()?;
    let l = c.tagged_layout().ok_or_else(|| fail("no layout"))?;
    let mut lines = Vec::new();
    let over = l
        .max_tag()
        .checked_add(1)
        .ok_or_else(|| fail("no tag beyond the largest"))?;
    match w.send(b"x", 0, over) {
        Err(e) => lines.push(e.to_string()),
        Ok(()) => return Err(fail(format!("tag {over} was accepted"))),
    }
    let mut b = [0u8; 1];
    match w.recv(&mut b, None, Some(over)) {
        Err(e) => lines.push(e.to_string()),
        Ok(st) => {
            return Err(fail(format!(
                "receive with tag {over} was accepted: {st:?}"
            )))
        }
    }
    match w.send(b"x", w.size(), 1) {
        Err(e) => lines.push(e.to_string()),
        Ok(()) => return Err(fail("a rank beyond the communicator was accepted")),
    }
    // Communicator ids run out (ofi_tag_1's 12 bits: 4,095 dups).
    if l.max_cid() < 5000 {
        let mut dups = Vec::new();
        let err = loop {
            match w.dup() {
                Ok(d) => dups.push(d),
                Err(e) => break e,
            }
            if dups.len() > l.max_cid() as usize {
                return Err(fail(format!(
                    "{} dups were accepted with {} communicator ids",
                    dups.len(),
                    l.max_cid()
                )));
            }
        };
        lines.push(err.to_string());
        let made = dups.len();
        for d in dups {
            d.free()?;
        }
        let again = w.dup()?;
        again.free()?;
        lines.push(format!(
            "{made} communicators duplicated, freed, and one more made"
        ));
    }
    w.send(b"ok", w.rank(), l.max_tag())?;
    let st = w.recv(&mut [0u8; 2], Some(w.rank()), Some(l.max_tag()))?;
    check(st.tag == l.max_tag(), || format!("largest tag: {st:?}"))?;
    Ok(format!(
        "ok: {} (largest tag {} accepted)\n{}",
        l.mode,
        l.max_tag(),
        lines.join("\n")
    ))
}

/// The layout chosen.
pub fn layout(c: &Client) -> Fallible<String> {
    let l = c.tagged_layout().ok_or_else(|| fail("no layout"))?;
    Ok(format!(
        "{}: communicator id {} bits, source {} bits, tag {} bits; largest communicator id {}, source {}, tag {}",
        l.mode,
        l.cid_bits,
        l.src_bits,
        l.tag_bits,
        l.max_cid(),
        l.max_source(),
        l.max_tag()
    ))
}
