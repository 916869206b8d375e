//! `in-handler`: an AM handler that reaches the client (through a
//! thread-local, as safe code can) and calls every tagged operation that
//! waits or makes progress: each must be refused with `InHandler` naming
//! it, none may block or run other handlers inside this one. Tagged
//! messaging still works afterwards.

use conduit::client::{Client, Error};
use std::cell::RefCell;
use std::rc::Rc;
use tests::{fail, Fallible};

thread_local! {
    static CLIENT: RefCell<Option<Rc<Client>>> = const { RefCell::new(None) };
    static SEEN: RefCell<Vec<(&'static str, Result<(), String>)>> = const { RefCell::new(Vec::new()) };
}

/// What each call is refused as.
const CALLS: [(&str, &str); 12] = [
    ("send", "a tagged send"),
    ("ssend", "a tagged send"),
    ("recv", "a tagged receive"),
    ("probe", "a tagged probe"),
    ("iprobe", "a tagged probe"),
    ("improbe", "a matched probe"),
    ("mprobe", "a matched probe"),
    ("scope", "a tagged scope"),
    ("barrier", "a communicator's barrier"),
    ("dup", "a communicator's dup"),
    ("split", "a communicator's split"),
    ("free", "a communicator's free"),
];

fn calls(c: &Client) -> Vec<(&'static str, Result<(), String>)> {
    let w = match c.tagged_world() {
        Ok(w) => w,
        Err(e) => return vec![("tagged_world", Err(e.report()))],
    };
    let mut b = [0u8; 8];
    let r = |x: Result<(), Error>| x.map_err(|e| e.report());
    vec![
        ("send", r(w.send(&b, 1, 5))),
        ("ssend", r(w.ssend(&b, 1, 5))),
        ("recv", r(w.recv(&mut b, Some(1), Some(5)).map(|_| ()))),
        ("probe", r(w.probe(Some(1), Some(5)).map(|_| ()))),
        ("iprobe", r(w.iprobe(Some(1), Some(5)).map(|_| ()))),
        ("improbe", r(w.improbe(Some(1), Some(5)).map(|_| ()))),
        ("mprobe", r(w.mprobe(Some(1), Some(5)).map(|_| ()))),
        ("scope", r(w.scope(|_| Ok::<_, Error>(())))),
        ("barrier", r(w.barrier())),
        ("dup", r(w.dup().map(|_| ()))),
        ("split", r(w.split(Some(0), 0).map(|_| ()))),
        ("free", r(w.clone().free())),
    ]
}

pub fn in_handler(c: Rc<Client>) -> Fallible<String> {
    CLIENT.with(|x| *x.borrow_mut() = Some(c.clone()));
    c.on_request_short(200, 0, |_tok, _args| {
        if let Some(c) = CLIENT.with(|x| x.borrow().clone()) {
            let got = calls(&c);
            SEEN.with(|s| s.borrow_mut().extend(got));
        }
    })?;
    c.barrier()?;
    let w = c.tagged_world()?;
    if c.rank() == 1 {
        c.request_short(0, 200, &[])?;
        w.send(&[7u8; 8], 0, 9)?;
    } else if c.rank() == 0 {
        c.block_until(|| SEEN.with(|s| !s.borrow().is_empty()))?;
        let seen = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
        let names: Vec<&str> = seen.iter().map(|(n, _)| *n).collect();
        let want: Vec<&str> = CALLS.iter().map(|(n, _)| *n).collect();
        if names != want {
            return Err(fail(format!("the handler ran {names:?}, not {want:?}")));
        }
        for ((name, got), (_, what)) in seen.iter().zip(CALLS) {
            let msg = format!(
                "{what} is not allowed inside an AM handler (handlers may not poll, block or send requests)"
            );
            if got.as_ref().err() != Some(&msg) {
                return Err(fail(format!(
                    "{name} in a handler gave {got:?}, not Err({msg:?})"
                )));
            }
        }
        let mut b = [0u8; 8];
        w.recv(&mut b, Some(1), Some(9))?;
        if b != [7u8; 8] {
            return Err(fail(format!(
                "the tagged message after the handler read {b:?}"
            )));
        }
    }
    CLIENT.with(|x| x.borrow_mut().take());
    Ok(format!(
        "ok: {} tagged calls refused inside a handler, each by name; a tagged message after it",
        CALLS.len()
    ))
}
