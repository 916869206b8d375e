//! The modes of gex-am that check failure and exit paths: `exit`, `bad`,
//! `unregistered` and `barrier`.

use super::*;
use conduit::client::Error;

pub(crate) fn exit_mode(c: &Client, how: &str, code: i32) -> Fallible<String> {
    let flag = Arc::new(AtomicUsize::new(0));
    c.register(
        210,
        Handler::request_short(1, move |tok, a| tok.exit(a[0] as i32)),
    )?;
    c.register(211, Handler::request_short(2, |_, _| {}))?;
    let me = c.rank();
    c.barrier()?;
    if (how == "malformed" || how == "malformed-flood") && c.size() > 1 {
        // Rank 0 sends rank 1 a Short with one argument for a handler of
        // two (70 of them for `malformed-flood`: more than the 64 errors
        // kept for later polls), which rank 1 meets inside the barrier
        // (the errors wait for rank 1's next poll); rank 0 then exits at once, while rank 1
        // waits in a second barrier that rank 0 never joins: the exit
        // always overtakes the deferred error. This relies on rank 1
        // meeting the Short before rank 0's exit message: the providers the
        // test runs this mode on (shm, tcp;ofi_rxm) deliver one sender's
        // messages in order, though the conduit does not ask for it.
        if me == 0 {
            for _ in 0..if how == "malformed" { 1 } else { 70 } {
                c.request_short(1, 211, &[7])?;
            }
            c.barrier()?;
            c.exit(code)
        }
        c.barrier()?;
        c.barrier()?;
        return Err(fail(
            "rank 0 never joins this barrier: the exit should have ended it",
        ));
    }
    if how == "after-pause" {
        // For fault tests: each rank says it is past the barrier (with its
        // pid); rank 0 then polls for 2 s and exits.
        println!("ready {me} {}", std::process::id());
        std::io::Write::flush(&mut std::io::stdout())?;
    }
    match how {
        "after-pause" if me == 0 => {
            let t = std::time::Instant::now();
            c.block_until(|| t.elapsed() >= std::time::Duration::from_secs(2))?;
            c.exit(code)
        }
        "rank0" if me == 0 => c.exit(code),
        "rank1" if me == 1 % c.size() => c.exit(code),
        "handler" if me == 1 % c.size() => c.request_short(0, 210, &[code as u32])?,
        "after-barrier" => {
            c.barrier()?;
            c.exit(code)
        }
        "return" => {
            c.barrier()?;
            return Ok("return".into());
        }
        "rank0" | "rank1" | "handler" | "after-pause" | "malformed" | "malformed-flood" => {}
        _ => return Err(fail(format!("unknown exit mode {how}"))),
    }
    // Everyone else waits for the exit to reach them.
    let f = flag.clone();
    c.block_until(|| f.load(Ordering::Relaxed) == 1)?;
    Ok(String::new())
}

pub(crate) fn bad(c: &Client) -> Fallible<String> {
    c.register(220, Handler::request_medium(0, |_, _, _| {}))?;
    c.register(221, Handler::request_short(0, |_, _| {}))?;
    c.register(222, Handler::request_long(0, |_, _, _| {}))?;
    c.attach_segment(1 << 16)?;
    let max = c.max_medium();
    let mut lines = Vec::new();
    let mut expect = |r: Result<(), Error>, want: String| -> Fallible<()> {
        match r {
            Err(e) if e.to_string() == want => {
                lines.push(want);
                Ok(())
            }
            other => Err(fail(format!("expected error {want:?}, got {other:?}"))),
        }
    };
    let big = vec![0u8; max + 1];
    expect(
        c.request_medium(0, 220, &[], &big),
        format!("AM Medium payload of {} bytes exceeds the maximum of {max} bytes (GASNET_OFI_MAX_MEDIUM)", max + 1),
    )?;
    expect(
        c.request_short(0, 221, &[0; 17]),
        "17 AM arguments given; at most 16 are supported".into(),
    )?;
    let size = c.size();
    expect(
        c.request_short(size, 221, &[]),
        format!("rank {size} is not in the job (size {size})"),
    )?;
    expect(
        c.request_long(0, 222, &[], &[1, 2, 3], (1 << 16) - 2),
        "3 bytes at offset 65534 do not fit in the 65536-byte segment of rank 0".into(),
    )?;
    // Index 2 is the conduit's exit handler: a peer would exit with code 7.
    expect(
        c.request_short(0, 2, &[7, 1]),
        "AM to handler index 2: indices 0..=127 are the conduit's; a client sends to its handlers at 128..=255".into(),
    )?;
    expect(
        c.register(5, Handler::request_short(0, |_, _| {})).map(|_| ()),
        "AM handler index 5 is reserved for the conduit; client handlers use 128..=255 (or 0 for any free index)".into(),
    )?;
    expect(
        c.register(221, Handler::reply_short(0, |_, _| {}))
            .map(|_| ()),
        "AM handler index 221 is already registered (short request with 0 arguments)".into(),
    )?;
    c.barrier()?;
    Ok(format!("ok: {} bad inputs refused", lines.len()))
}

pub(crate) fn unregistered(c: &Client) -> Fallible<String> {
    c.barrier()?;
    if c.rank() == 1 % c.size() {
        c.request_short(0, 250, &[1, 2])?;
    }
    // Rank 0's poll reports the message; the others wait for the exit.
    loop {
        c.poll()?;
    }
}

pub(crate) fn barrier(c: &Client) -> Fallible<String> {
    for i in 0..50u32 {
        c.barrier_notify(Some(i))?;
        c.barrier_wait()?;
    }
    // Mixed anonymous and named is fine.
    c.barrier_notify(if c.rank() == 0 { Some(7) } else { None })?;
    c.barrier_wait()?;
    // Different names: every rank sees the mismatch.
    c.barrier_notify(Some(c.rank() as u32))?;
    let mismatch = matches!(c.barrier_wait(), Err(Error::BarrierMismatch));
    if c.size() > 1 && !mismatch {
        return Err(fail("mismatched named barrier was not reported"));
    }
    // One rank forces a mismatch: every rank sees it, whatever it notified;
    // the next barrier is clean.
    if c.rank() == c.size() - 1 {
        c.barrier_notify_mismatch()?;
    } else {
        c.barrier_notify(Some(3))?;
    }
    if !matches!(c.barrier_wait(), Err(Error::BarrierMismatch)) {
        return Err(fail("a forced mismatch was not reported"));
    }
    c.barrier_notify(Some(3))?;
    c.barrier_wait()?;
    // Split phase: work between notify and wait, try until done.
    c.barrier_notify(None)?;
    let mut tries = 0u64;
    while !c.barrier_try()? {
        tries += 1;
    }
    Ok(format!(
        "ok: 54 barriers, mismatch detected, forced mismatch seen, split-phase completed after {tries} tries"
    ))
}
