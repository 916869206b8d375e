//! Target `bootstrap_wire`: bytes a peer sends on a bootstrap connection
//! (crate `bootstrap`, module `wire`), and the job secret's hex text.
//!
//! The first byte picks a mode; the rest is the payload:
//!
//! | first byte % 5 | what the payload goes through |
//! |---|---|
//! | 0 | a TCP stream from a peer that has not proved the secret: `read_frame(_, MAX_HELLO)` over a `Cursor` until it fails, `Msg::decode` of every frame |
//! | 1 | a stream from an authenticated peer (tree parent or child, ssh agent's stdin): the same with `MAX_FRAME` |
//! | 2 | a `Dec` script: the next byte `n`, then `n` operation bytes (`u8`, `u32`, `i32`, `bytes`, `str`, `secret`, `finish`) run over the remaining bytes (the decoder of the allgather/broadcast bodies and of the agent's job description) |
//! | 3 | `secret_from_hex` of the payload as text (`GASNET_OFI_BOOTSTRAP_SECRET`) |
//! | 4 | `HostMap::new` for every rank, with `(host index, name)` entries read from the payload as the allgathered host map (`u32` index, `str` name, repeated) |
//!
//! In every mode the payload is also given to `Msg::decode` as one frame.
//!
//! Checked besides "no panic": a frame never exceeds its limit and the
//! frames read re-frame (`write_frame`) to exactly the bytes consumed; a
//! decoded `Msg` re-encodes to exactly its frame (the encoding is
//! canonical); every `Dec` result matches a reference model of the
//! format; a parsed secret's hex text parses back to it.

use bootstrap::wire::{
    read_frame, secret_eq, secret_from_hex, secret_to_hex, signal_name, write_frame, Dec, Enc, Msg,
    RankEnd, MAX_FRAME, MAX_HELLO, SECRET_LEN,
};
use std::io::Cursor;

/// Mode bytes (the first input byte, modulo 4).
pub const MODE_HELLO_STREAM: u8 = 0;
/// See the module documentation.
pub const MODE_FRAME_STREAM: u8 = 1;
/// See the module documentation.
pub const MODE_DEC_SCRIPT: u8 = 2;
/// See the module documentation.
pub const MODE_SECRET_HEX: u8 = 3;
/// See the module documentation.
pub const MODE_HOST_MAP: u8 = 4;

/// One fuzz input.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    check_msg(rest);
    match mode % 5 {
        MODE_HELLO_STREAM => frames(rest, MAX_HELLO),
        MODE_FRAME_STREAM => frames(rest, MAX_FRAME),
        MODE_DEC_SCRIPT => dec_script(rest),
        MODE_SECRET_HEX => secret_text(rest),
        _ => host_map(rest),
    }
}

/// `Msg::decode` of one frame payload.
fn check_msg(payload: &[u8]) {
    match Msg::decode(payload) {
        Ok(m) => {
            assert_eq!(m.encode(), payload, "{m:?} re-encodes differently");
            // What the launcher and the agent do with what they decoded.
            match m {
                Msg::RankExit { end, .. } => {
                    let _ = end.describe();
                    let _ = end.is_success();
                    let _ = end.shell_code();
                }
                Msg::Kill { signal } => {
                    let _ = signal_name(signal);
                }
                _ => {}
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// Read frames from `stream` until the first error.
fn frames(stream: &[u8], max: u32) {
    let mut cur = Cursor::new(stream);
    let mut echo = Vec::new();
    while let Ok(f) = read_frame(&mut cur, max) {
        assert!(f.len() as u64 <= u64::from(max), "frame above the limit");
        write_frame(&mut echo, &f).expect("writing to a Vec");
        let consumed = cur.position() as usize;
        assert_eq!(
            &echo[..],
            &stream[..consumed],
            "frames do not re-frame to the stream"
        );
        check_msg(&f);
    }
}

/// A reference model of `Dec` (position and results), to compare with.
struct Model<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Model<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len())?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

fn dec_script(rest: &[u8]) {
    let Some((&n, rest)) = rest.split_first() else {
        return;
    };
    let (ops, body) = rest.split_at(usize::from(n).min(rest.len()));
    let mut d = Dec::new(body);
    let mut m = Model { buf: body, pos: 0 };
    for op in ops {
        match op % 7 {
            0 => assert_eq!(d.u8().ok(), m.take(1).map(|b| b[0])),
            1 => assert_eq!(d.u32().ok(), m.u32()),
            2 => assert_eq!(d.i32().ok(), m.u32().map(|v| v as i32)),
            3 => assert_eq!(d.bytes().ok(), m.bytes()),
            4 => {
                let want = m.bytes().and_then(|b| std::str::from_utf8(b).ok());
                assert_eq!(d.str().ok().as_deref(), want);
            }
            5 => {
                let want = m
                    .take(SECRET_LEN)
                    .map(|b| <[u8; SECRET_LEN]>::try_from(b).unwrap());
                assert_eq!(d.secret().ok(), want);
            }
            _ => assert_eq!(d.finish().is_ok(), m.pos == body.len()),
        }
    }
}

/// The host map a rank builds from the allgathered `(host index, name)`
/// entries: here from the input's 4-byte words (host index, name length
/// byte and name), for every rank of that job.
fn host_map(rest: &[u8]) {
    let mut d = Dec::new(rest);
    let mut entries = Vec::new();
    while let (Ok(h), Ok(name)) = (d.u32(), d.str()) {
        entries.push((h as usize, name));
        if entries.len() > 64 {
            break;
        }
    }
    for rank in 0..entries.len().max(1) {
        if let Ok(m) = bootstrap::HostMap::new(rank, &entries) {
            assert!(m.nhosts() <= entries.len());
            assert!(m.local_ranks().contains(&rank));
        }
    }
}

fn secret_text(rest: &[u8]) {
    let text = String::from_utf8_lossy(rest);
    if let Some(s) = secret_from_hex(&text) {
        assert_eq!(text.trim().len(), 2 * SECRET_LEN);
        assert!(secret_eq(&s, &s));
        assert_eq!(secret_from_hex(&secret_to_hex(&s)), Some(s));
    }
}

fn framed(msgs: &[Msg]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in msgs {
        write_frame(&mut out, &m.encode()).expect("writing to a Vec");
    }
    out
}

fn with_mode(mode: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![mode];
    v.extend_from_slice(body);
    v
}

/// Frame streams of every message, `Dec` scripts over the bodies the tree
/// collectives and the agent's job description use, and secrets.
pub fn seeds() -> crate::Seeds {
    let secret: [u8; SECRET_LEN] = std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xa5);
    let every = [
        Msg::RankHello {
            secret,
            rank: 3,
            size: 9,
            listen: "127.0.0.1:40000".into(),
        },
        Msg::AgentHello { secret, host: 2 },
        Msg::Welcome {
            radix: 8,
            parent: None,
            host_index: 0,
            host_name: "node0".into(),
        },
        Msg::Welcome {
            radix: 8,
            parent: Some("10.0.0.1:40001".into()),
            host_index: 1,
            host_name: "node1".into(),
        },
        Msg::ChildHello { secret, rank: 9 },
        Msg::Abort { code: -1 },
        Msg::Finalize { code: 0 },
        Msg::RankExit {
            rank: 4,
            end: RankEnd::Code(3),
        },
        Msg::RankExit {
            rank: 5,
            end: RankEnd::Signal(9),
        },
        Msg::Kill { signal: 15 },
    ];
    let mut v = Vec::new();
    // Each message alone in a pre-authentication stream.
    for (i, m) in every.iter().enumerate() {
        v.push((
            format!("hello-{i}"),
            with_mode(MODE_HELLO_STREAM, &framed(std::slice::from_ref(m))),
        ));
    }
    // A launcher/agent conversation, and the tree frames of the collectives
    // (op, big-endian sequence number, body) on an authenticated stream.
    v.push((
        "stream-all".into(),
        with_mode(MODE_FRAME_STREAM, &framed(&every)),
    ));
    let mut tree = Vec::new();
    let allgather_up = Enc::new().u32(1).bytes(b"\0\0\0\0node0").done();
    let mut f = vec![2u8];
    f.extend_from_slice(&7u64.to_be_bytes());
    f.extend_from_slice(&allgather_up);
    write_frame(&mut tree, &f).unwrap();
    let mut b = vec![1u8];
    b.extend_from_slice(&8u64.to_be_bytes());
    write_frame(&mut tree, &b).unwrap();
    v.push(("stream-tree".into(), with_mode(MODE_FRAME_STREAM, &tree)));
    // Dec scripts. Operations: 0 u8, 1 u32, 2 i32, 3 bytes, 4 str, 5 secret, 6 finish.
    let script = |ops: &[u8], body: &[u8]| {
        let mut s = vec![MODE_DEC_SCRIPT, ops.len() as u8];
        s.extend_from_slice(ops);
        s.extend_from_slice(body);
        s
    };
    // The allgather result: count, then that many byte strings.
    let down = Enc::new()
        .u32(2)
        .bytes(b"\0\0\0\0a")
        .bytes(b"\0\0\0\x01b")
        .done();
    v.push(("dec-allgather".into(), script(&[1, 3, 3, 6], &down)));
    // The agent's job description.
    let job = Enc::new()
        .raw(&secret)
        .str("127.0.0.1:40000")
        .u32(0)
        .u32(2)
        .u32(2)
        .u32(0)
        .u32(1)
        .u32(1)
        .bytes(b"GASNET_QUIET")
        .bytes(b"1")
        .bytes(b"/bin/true")
        .u32(1)
        .bytes(b"--flag")
        .u8(1)
        .done();
    v.push((
        "dec-agent-job".into(),
        script(&[5, 4, 1, 1, 1, 1, 1, 1, 3, 3, 3, 1, 3, 0, 6], &job),
    ));
    v.push((
        "dec-mixed".into(),
        script(&[0, 2, 4, 6], &Enc::new().u8(1).i32(-5).str("x").done()),
    ));
    // Secrets.
    v.push((
        "secret".into(),
        with_mode(MODE_SECRET_HEX, secret_to_hex(&secret).as_bytes()),
    ));
    v.push((
        "secret-spaces".into(),
        with_mode(
            MODE_SECRET_HEX,
            format!("  {}\n", secret_to_hex(&secret).to_uppercase()).as_bytes(),
        ),
    ));
    v
}
