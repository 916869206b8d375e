//! Framing and messages of the bootstrap protocol between `gasnetrun-ofi`
//! (crate `spawner`), its ssh agents and the ranks' TCP bootstrap
//! ([`crate::tcp`]). Public so that the launcher speaks the very same
//! protocol; applications have no use for it.
//!
//! Every message is a frame: a big-endian `u32` length, then that many
//! bytes. Integers inside are big-endian; byte strings are a `u32` length
//! then the bytes.

use crate::BootstrapError;
use std::io::{self, Read, Write};

/// Length of the per-job secret, bytes.
pub const SECRET_LEN: usize = 32;
/// Largest frame accepted before a peer has proved it knows the secret.
pub const MAX_HELLO: u32 = 64 * 1024;
/// Largest frame accepted from an authenticated peer.
pub const MAX_FRAME: u32 = u32::MAX;

/// The per-job secret.
pub type Secret = [u8; SECRET_LEN];

/// Hex text of a secret (what goes in the environment).
pub fn secret_to_hex(s: &Secret) -> String {
    s.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parse the hex text of a secret.
pub fn secret_from_hex(t: &str) -> Option<Secret> {
    let t = t.trim();
    if t.len() != 2 * SECRET_LEN || !t.is_ascii() {
        return None;
    }
    if !t.bytes().all(|c| c.is_ascii_hexdigit()) {
        // `from_str_radix` would also take a sign ("+f").
        return None;
    }
    let mut s = [0u8; SECRET_LEN];
    for (i, b) in s.iter_mut().enumerate() {
        *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(s)
}

/// Compare secrets in time independent of where they differ.
pub fn secret_eq(a: &Secret, b: &Secret) -> bool {
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// Write one frame.
pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame larger than 4 GiB"))?;
    let mut buf = Vec::with_capacity(4 + payload.len());
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(payload);
    w.write_all(&buf)?;
    w.flush()
}

/// Read one frame of at most `max` bytes.
pub fn read_frame(r: &mut impl Read, max: u32) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len);
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes exceeds the limit of {max}"),
        ));
    }
    // Grow with what actually arrives: a peer that announces a large frame
    // and sends little costs little memory.
    let mut buf = Vec::with_capacity((len as usize).min(64 * 1024));
    let got = r.take(len as u64).read_to_end(&mut buf)?;
    if got != len as usize {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("frame of {len} bytes ended after {got}"),
        ));
    }
    Ok(buf)
}

/// Encoder for message bodies: `Enc::new().u8(1).str("x").done()`.
#[derive(Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// An empty body.
    pub fn new() -> Self {
        Enc(Vec::new())
    }
    /// Append one byte.
    pub fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    /// Append a big-endian `u32`.
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Append a big-endian `i32`.
    pub fn i32(self, v: i32) -> Self {
        self.u32(v as u32)
    }
    /// Append a byte string: its `u32` length, then the bytes.
    pub fn bytes(self, v: &[u8]) -> Self {
        let mut s = self.u32(v.len() as u32);
        s.0.extend_from_slice(v);
        s
    }
    /// Append bytes without a length (fixed-size fields such as the secret).
    pub fn raw(mut self, v: &[u8]) -> Self {
        self.0.extend_from_slice(v);
        self
    }
    /// Append a string as a byte string of its UTF-8.
    pub fn str(self, v: &str) -> Self {
        self.bytes(v.as_bytes())
    }
    /// The encoded body.
    pub fn done(self) -> Vec<u8> {
        self.0
    }
}

/// Decoder for message bodies; every failure is a [`BootstrapError::Protocol`].
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    /// Decode `buf` from its start.
    pub fn new(buf: &'a [u8]) -> Self {
        Dec { buf, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], BootstrapError> {
        if self.buf.len() - self.pos < n {
            return Err(BootstrapError::Protocol("truncated message".into()));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, BootstrapError> {
        Ok(self.take(1)?[0])
    }
    /// A big-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, BootstrapError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A big-endian `i32`.
    pub fn i32(&mut self) -> Result<i32, BootstrapError> {
        Ok(self.u32()? as i32)
    }
    /// A byte string (`u32` length, then the bytes).
    pub fn bytes(&mut self) -> Result<&'a [u8], BootstrapError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// A byte string that must be UTF-8.
    pub fn str(&mut self) -> Result<String, BootstrapError> {
        String::from_utf8(self.bytes()?.to_vec())
            .map_err(|_| BootstrapError::Protocol("string is not UTF-8".into()))
    }
    /// A job secret ([`SECRET_LEN`] bytes, no length).
    pub fn secret(&mut self) -> Result<Secret, BootstrapError> {
        let mut s = [0u8; SECRET_LEN];
        s.copy_from_slice(self.take(SECRET_LEN)?);
        Ok(s)
    }
    /// Succeeds only when every byte has been read.
    pub fn finish(&self) -> Result<(), BootstrapError> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(BootstrapError::Protocol("trailing bytes in message".into()))
        }
    }
}

/// How a rank ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankEnd {
    /// `exit(code)`.
    Code(i32),
    /// Killed by this signal number.
    Signal(i32),
}

impl RankEnd {
    /// The shell convention: the code, or 128 + the signal (a signal
    /// number no system has, as a peer could send, saturates instead of
    /// overflowing).
    pub fn shell_code(self) -> i32 {
        match self {
            RankEnd::Code(c) => c,
            RankEnd::Signal(s) => s.saturating_add(128),
        }
    }
    /// True for `exit(0)`.
    pub fn is_success(self) -> bool {
        self == RankEnd::Code(0)
    }
    /// Words for the one-line report: `exited with code 3`,
    /// `was killed by signal 9 (SIGKILL)`.
    pub fn describe(self) -> String {
        match self {
            RankEnd::Code(c) => format!("exited with code {c}"),
            RankEnd::Signal(s) => format!("was killed by signal {s} ({})", signal_name(s)),
        }
    }
}

/// `SIGKILL` for 9, and so on.
pub fn signal_name(s: i32) -> String {
    nix::sys::signal::Signal::try_from(s)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {s}"))
}

/// Messages on the launcher's control connections (and the agent's stdin).
/// Their `Debug` form (`wire_debug`) shows no secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Msg {
    /// rank -> launcher: first message of a rank.
    RankHello {
        /// The job secret.
        secret: Secret,
        /// The rank saying hello.
        rank: u32,
        /// The job size it was told.
        size: u32,
        /// Where it accepts its tree children (`ip:port`).
        listen: String,
    },
    /// ssh agent -> launcher: first message of an agent.
    AgentHello {
        /// The job secret.
        secret: Secret,
        /// The agent's host index.
        host: u32,
    },
    /// launcher -> rank: where the tree parent listens, and the rank's host.
    Welcome {
        /// Radix of the tree.
        radix: u32,
        /// Where the rank's tree parent listens (`None` for rank 0).
        parent: Option<String>,
        /// The rank's host index.
        host_index: u32,
        /// The rank's host name.
        host_name: String,
    },
    /// child -> parent in the tree.
    ChildHello {
        /// The job secret.
        secret: Secret,
        /// The child's rank.
        rank: u32,
    },
    /// rank -> launcher: end the whole job with this code.
    Abort {
        /// The job's exit code.
        code: i32,
    },
    /// rank -> launcher: this rank is about to exit with this code.
    Finalize {
        /// The rank's exit code.
        code: i32,
    },
    /// agent -> launcher: a rank on the agent's host ended.
    RankExit {
        /// The rank.
        rank: u32,
        /// How it ended.
        end: RankEnd,
    },
    /// launcher -> agent: send this signal to every rank (SIGKILL ends the agent too).
    Kill {
        /// The signal number.
        signal: i32,
    },
    /// launcher <-> agent, every second: still here. A side that hears
    /// nothing for the exit timeout takes the other as unreachable.
    Heartbeat,
    /// agent -> launcher: the ssh session this agent started for another
    /// host's agent (the ssh tree) ended.
    SshEnded {
        /// The other host's index.
        host: u32,
        /// How the ssh process ended.
        end: RankEnd,
    },
}

impl Msg {
    /// The frame payload of this message.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Msg::RankHello {
                secret,
                rank,
                size,
                listen,
            } => Enc::new()
                .u8(1)
                .raw(secret)
                .u32(*rank)
                .u32(*size)
                .str(listen)
                .done(),
            Msg::AgentHello { secret, host } => Enc::new().u8(2).raw(secret).u32(*host).done(),
            Msg::Welcome {
                radix,
                parent,
                host_index,
                host_name,
            } => Enc::new()
                .u8(3)
                .u32(*radix)
                .str(parent.as_deref().unwrap_or(""))
                .u32(*host_index)
                .str(host_name)
                .done(),
            Msg::ChildHello { secret, rank } => Enc::new().u8(4).raw(secret).u32(*rank).done(),
            Msg::Abort { code } => Enc::new().u8(5).i32(*code).done(),
            Msg::Finalize { code } => Enc::new().u8(6).i32(*code).done(),
            Msg::RankExit { rank, end } => {
                let (k, v) = end_parts(end);
                Enc::new().u8(7).u32(*rank).u8(k).i32(v).done()
            }
            Msg::Kill { signal } => Enc::new().u8(8).i32(*signal).done(),
            Msg::Heartbeat => Enc::new().u8(9).done(),
            Msg::SshEnded { host, end } => {
                let (k, v) = end_parts(end);
                Enc::new().u8(10).u32(*host).u8(k).i32(v).done()
            }
        }
    }

    /// Parse a frame payload; anything malformed is a
    /// [`BootstrapError::Protocol`].
    pub fn decode(b: &[u8]) -> Result<Msg, BootstrapError> {
        let mut d = Dec::new(b);
        let m = match d.u8()? {
            1 => Msg::RankHello {
                secret: d.secret()?,
                rank: d.u32()?,
                size: d.u32()?,
                listen: d.str()?,
            },
            2 => Msg::AgentHello {
                secret: d.secret()?,
                host: d.u32()?,
            },
            3 => Msg::Welcome {
                radix: d.u32()?,
                parent: Some(d.str()?).filter(|s| !s.is_empty()),
                host_index: d.u32()?,
                host_name: d.str()?,
            },
            4 => Msg::ChildHello {
                secret: d.secret()?,
                rank: d.u32()?,
            },
            5 => Msg::Abort { code: d.i32()? },
            6 => Msg::Finalize { code: d.i32()? },
            7 => {
                let rank = d.u32()?;
                let end = end_from(d.u8()?, d.i32()?)?;
                Msg::RankExit { rank, end }
            }
            8 => Msg::Kill { signal: d.i32()? },
            9 => Msg::Heartbeat,
            10 => {
                let host = d.u32()?;
                let end = end_from(d.u8()?, d.i32()?)?;
                Msg::SshEnded { host, end }
            }
            t => return Err(BootstrapError::Protocol(format!("unknown message tag {t}"))),
        };
        d.finish()?;
        Ok(m)
    }
}

/// A process end as (kind, value) on the wire.
fn end_parts(end: &RankEnd) -> (u8, i32) {
    match end {
        RankEnd::Code(c) => (0, *c),
        RankEnd::Signal(s) => (1, *s),
    }
}

fn end_from(kind: u8, v: i32) -> Result<RankEnd, BootstrapError> {
    match kind {
        0 => Ok(RankEnd::Code(v)),
        1 => Ok(RankEnd::Signal(v)),
        _ => Err(BootstrapError::Protocol("bad exit kind".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_hex_roundtrip() {
        let mut s = [0u8; SECRET_LEN];
        for (i, b) in s.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) ^ 0xa5;
        }
        let h = secret_to_hex(&s);
        assert_eq!(h.len(), 64);
        assert_eq!(secret_from_hex(&h), Some(s));
        assert_eq!(secret_from_hex("abc"), None);
        assert!(secret_eq(&s, &s));
        let mut t = s;
        t[31] ^= 1;
        assert!(!secret_eq(&s, &t));
    }

    #[test]
    fn messages_roundtrip() {
        let secret = [7u8; SECRET_LEN];
        for m in [
            Msg::RankHello {
                secret,
                rank: 3,
                size: 9,
                listen: "127.0.0.1:5".into(),
            },
            Msg::AgentHello { secret, host: 2 },
            Msg::Welcome {
                radix: 8,
                parent: None,
                host_index: 1,
                host_name: "h".into(),
            },
            Msg::Welcome {
                radix: 8,
                parent: Some("1.2.3.4:5".into()),
                host_index: 1,
                host_name: "h".into(),
            },
            Msg::ChildHello { secret, rank: 1 },
            Msg::Abort { code: -1 },
            Msg::Finalize { code: 3 },
            Msg::RankExit {
                rank: 4,
                end: RankEnd::Signal(9),
            },
            Msg::Kill { signal: 15 },
            Msg::Heartbeat,
            Msg::SshEnded {
                host: 3,
                end: RankEnd::Code(255),
            },
        ] {
            assert_eq!(Msg::decode(&m.encode()).unwrap(), m);
        }
        assert!(Msg::decode(&[99]).is_err());
        assert!(Msg::decode(&[1, 2]).is_err());
    }

    #[test]
    fn frame_limit() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &[0u8; 100]).unwrap();
        assert!(read_frame(&mut &buf[..], 10).is_err());
        assert_eq!(read_frame(&mut &buf[..], 100).unwrap().len(), 100);
    }

    #[test]
    fn describe_ends() {
        assert_eq!(RankEnd::Code(3).describe(), "exited with code 3");
        assert_eq!(
            RankEnd::Signal(9).describe(),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(RankEnd::Signal(15).shell_code(), 143);
    }

    #[test]
    fn hostile_peer_input_is_refused_without_panicking() {
        // Found by reading the fuzz targets' code (docs/fuzzing.md).
        assert_eq!(RankEnd::Signal(i32::MAX).shell_code(), i32::MAX);
        assert_eq!(RankEnd::Signal(9).shell_code(), 137);
        let plus = format!("+f{}", "0".repeat(2 * SECRET_LEN - 2));
        assert_eq!(secret_from_hex(&plus), None);
        // A frame that announces more than it carries.
        let mut r = std::io::Cursor::new(vec![0, 0xff, 0xff, 0xff, 1, 2, 3]);
        let e = read_frame(&mut r, u32::MAX).unwrap_err();
        assert_eq!(e.to_string(), "frame of 16777215 bytes ended after 3");
    }
}
