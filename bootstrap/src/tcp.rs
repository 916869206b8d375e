//! The TCP bootstrap a rank uses under `gasnetrun-ofi` (local and ssh
//! spawners).
//!
//! Wiring, for a job of `N` ranks and tree radix `k`:
//! 1. The rank connects once to the launcher (`GASNET_OFI_BOOTSTRAP_ADDR`),
//!    binds its own listener on the address it used to reach the launcher,
//!    and sends `RankHello { secret, rank, size, listen address }`.
//! 2. The launcher answers `Welcome { radix, parent's listen address, host }`
//!    once the parent `(rank - 1) / k` has said hello.
//! 3. The rank connects to its parent (`ChildHello { secret, rank }`) and
//!    accepts its children `k*rank + 1 ..= k*rank + k`. Connections without
//!    the secret are dropped and logged.
//! 4. Collectives go up the tree (children to parent) and back down.
//!    Every rank holds at most `k + 2` sockets whatever `N` is.

mod accept;

use crate::hostmap::HostMap;
use crate::wire::{self, read_frame, write_frame, Msg, Secret, MAX_FRAME, MAX_HELLO};
use crate::{Bootstrap, BootstrapError};
use accept::accept_children;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::Duration;

/// How long a rank tries to reach the launcher.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

const OP_BARRIER: u8 = 1;
const OP_ALLGATHER: u8 = 2;
const OP_BROADCAST: u8 = 3;

/// Parent of `rank` in a `radix`-ary tree rooted at rank 0.
pub fn tree_parent(rank: usize, radix: usize) -> Option<usize> {
    (rank > 0).then(|| (rank - 1) / radix)
}

/// Children of `rank` in a `radix`-ary tree of `size` ranks.
pub fn tree_children(rank: usize, size: usize, radix: usize) -> Vec<usize> {
    let first = rank.saturating_mul(radix).saturating_add(1);
    (first..first.saturating_add(radix).min(size)).collect()
}

/// What a rank wrote to its tree connections: its `ChildHello` to its
/// parent and every frame of the collectives (bytes include each frame's
/// 4-byte length). The launcher connection is not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeTraffic {
    /// Frames written.
    pub frames: u64,
    /// Bytes written.
    pub bytes: u64,
}

impl TreeTraffic {
    fn add(&mut self, payload: usize) {
        self.frames += 1;
        self.bytes += 4 + payload as u64;
    }
}

struct Tree {
    parent: Option<(usize, TcpStream)>,
    children: Vec<(usize, TcpStream)>,
    seq: u64,
    broken: Option<String>,
    sent: TreeTraffic,
}

/// A rank's bootstrap over TCP (see the module documentation).
pub struct TcpBootstrap {
    rank: usize,
    size: usize,
    hosts: HostMap,
    tree: Mutex<Tree>,
    control: Mutex<TcpStream>,
}

impl std::fmt::Debug for TcpBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpBootstrap")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

fn lost(what: String) -> impl FnOnce(std::io::Error) -> BootstrapError {
    move |e| BootstrapError::PeerLost(format!("{what}: {e}"))
}

impl TcpBootstrap {
    /// Join the job whose launcher listens at `addr`, as `rank` of `size`.
    pub fn connect(
        addr: &str,
        secret: Secret,
        rank: usize,
        size: usize,
    ) -> Result<TcpBootstrap, BootstrapError> {
        if rank >= size {
            return Err(BootstrapError::InvalidArgument(format!(
                "rank {rank} outside a job of {size} ranks"
            )));
        }
        let sa: SocketAddr = addr
            .to_socket_addrs()
            .map_err(|e| BootstrapError::io(format!("resolving the launcher address {addr}"), e))?
            .next()
            .ok_or_else(|| {
                BootstrapError::Protocol(format!("launcher address {addr} resolves to nothing"))
            })?;
        let mut ctl = TcpStream::connect_timeout(&sa, CONNECT_TIMEOUT)
            .map_err(|e| BootstrapError::io(format!("connecting to the launcher at {sa}"), e))?;
        let _ = ctl.set_nodelay(true);
        let my_ip = ctl
            .local_addr()
            .map_err(|e| BootstrapError::io("reading the local address", e))?
            .ip();
        let listener = TcpListener::bind((my_ip, 0))
            .map_err(|e| BootstrapError::io(format!("binding the tree listener on {my_ip}"), e))?;
        let listen = listener
            .local_addr()
            .map_err(|e| BootstrapError::io("reading the listener address", e))?;
        let hello = Msg::RankHello {
            secret,
            rank: rank as u32,
            size: size as u32,
            listen: listen.to_string(),
        };
        write_frame(&mut ctl, &hello.encode()).map_err(lost("launcher".into()))?;
        let welcome = read_frame(&mut ctl, MAX_HELLO).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                // The launcher closes a hello it refuses.
                BootstrapError::PeerLost(format!(
                    "the launcher at {addr} closed the connection instead of welcoming rank {rank} of {size}: \
it refuses a second process saying hello as one rank (a child that inherited a rank's GASNET_OFI_RANK and \
bootstrap variables?), a wrong GASNET_OFI_BOOTSTRAP_SECRET, and a rank or size it did not start"
                ))
            } else {
                lost("launcher".into())(e)
            }
        })?;
        let (radix, parent_addr, host_index, host_name) = match Msg::decode(&welcome)? {
            Msg::Welcome {
                radix,
                parent,
                host_index,
                host_name,
            } => (radix as usize, parent, host_index as usize, host_name),
            m => {
                return Err(BootstrapError::Protocol(format!(
                    "expected a welcome from the launcher, got {m:?}"
                )))
            }
        };
        if radix < 2 {
            return Err(BootstrapError::Protocol(format!("tree radix {radix} < 2")));
        }
        let mut sent = TreeTraffic::default();
        let parent = match (tree_parent(rank, radix), parent_addr) {
            (None, _) => None,
            (Some(p), Some(a)) => {
                // The same deadline as the launcher's connection (not the
                // kernel's SYN retries, about two minutes).
                let mut s = a
                    .parse::<SocketAddr>()
                    .map_err(|e| {
                        BootstrapError::Protocol(format!(
                            "the launcher gave parent rank {p}'s address as {a:?}: {e}"
                        ))
                    })
                    .and_then(|sa| {
                        TcpStream::connect_timeout(&sa, CONNECT_TIMEOUT).map_err(|e| {
                            BootstrapError::io(format!("connecting to parent rank {p} at {a}"), e)
                        })
                    })?;
                let _ = s.set_nodelay(true);
                let m = Msg::ChildHello {
                    secret,
                    rank: rank as u32,
                };
                let m = m.encode();
                write_frame(&mut s, &m).map_err(lost(format!("parent rank {p}")))?;
                sent.add(m.len());
                Some((p, s))
            }
            (Some(p), None) => {
                return Err(BootstrapError::Protocol(format!(
                    "the launcher gave no address for parent rank {p}"
                )))
            }
        };
        let expected = tree_children(rank, size, radix);
        let children = accept_children(listener, secret, &expected, &ctl)?;
        let boot = TcpBootstrap {
            rank,
            size,
            hosts: HostMap::single(&host_name),
            tree: Mutex::new(Tree {
                parent,
                children,
                seq: 0,
                broken: None,
                sent,
            }),
            control: Mutex::new(ctl),
        };
        // Host map: every rank contributes (host index, host name).
        let mut mine = (host_index as u32).to_be_bytes().to_vec();
        mine.extend_from_slice(host_name.as_bytes());
        let all = boot.allgather(&mine)?;
        let entries = all
            .iter()
            .map(|b| {
                if b.len() < 4 {
                    return Err(BootstrapError::Protocol("short host-map entry".into()));
                }
                let h = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
                Ok((h, String::from_utf8_lossy(&b[4..]).into_owned()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let hosts = HostMap::new(rank, &entries)?;
        Ok(TcpBootstrap { hosts, ..boot })
    }

    /// What this rank has written to its tree connections so far.
    pub fn traffic(&self) -> TreeTraffic {
        self.tree.lock().map(|t| t.sent).unwrap_or_default()
    }

    fn with_tree<T>(
        &self,
        f: impl FnOnce(&mut Tree, u64) -> Result<T, BootstrapError>,
    ) -> Result<T, BootstrapError> {
        let mut t = self
            .tree
            .lock()
            .map_err(|_| BootstrapError::Protocol("bootstrap lock poisoned".into()))?;
        if let Some(why) = &t.broken {
            return Err(BootstrapError::PeerLost(format!(
                "an earlier collective failed: {why}"
            )));
        }
        t.seq += 1;
        let seq = t.seq;
        let r = f(&mut t, seq);
        if let Err(e) = &r {
            t.broken = Some(e.to_string());
        }
        r
    }
}

fn header(op: u8, seq: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(9);
    h.push(op);
    h.extend_from_slice(&seq.to_be_bytes());
    h
}

/// Send `payload` tagged with `op` and `seq`, counted in `sent`.
fn send(
    s: &mut TcpStream,
    who: &str,
    op: u8,
    seq: u64,
    payload: &[u8],
    sent: &mut TreeTraffic,
) -> Result<(), BootstrapError> {
    let mut f = header(op, seq);
    f.extend_from_slice(payload);
    write_frame(s, &f).map_err(lost(who.to_string()))?;
    sent.add(f.len());
    Ok(())
}

/// Receive a whole frame, check its tag; returns the frame (header included).
fn recv(s: &mut TcpStream, who: &str, op: u8, seq: u64) -> Result<Vec<u8>, BootstrapError> {
    let f = read_frame(s, MAX_FRAME).map_err(lost(who.to_string()))?;
    if f.len() < 9 || f[0] != op || f[1..9] != seq.to_be_bytes() {
        return Err(BootstrapError::Protocol(format!(
            "{who} is out of step: expected collective {op} #{seq}, got a different message \
             (do all ranks call the bootstrap collectives in the same order?)"
        )));
    }
    Ok(f)
}

impl Bootstrap for TcpBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn hosts(&self) -> &HostMap {
        &self.hosts
    }

    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        let (rank, size) = (self.rank, self.size);
        self.with_tree(|t, seq| {
            // Up: my subtree's contributions, as (u32 rank, bytes) pairs.
            let mut up = wire::Enc::new().u32(rank as u32).bytes(mine).done();
            for (c, s) in t.children.iter_mut() {
                let f = recv(s, &format!("child rank {c}"), OP_ALLGATHER, seq)?;
                up.extend_from_slice(&f[9..]);
            }
            let down = match &mut t.parent {
                Some((p, s)) => {
                    let who = format!("parent rank {p}");
                    send(s, &who, OP_ALLGATHER, seq, &up, &mut t.sent)?;
                    recv(s, &who, OP_ALLGATHER, seq)?
                }
                None => {
                    let mut slots: Vec<Option<&[u8]>> = vec![None; size];
                    let mut d = wire::Dec::new(&up);
                    let mut n = 0;
                    while n < up.len() {
                        let r = d.u32()? as usize;
                        let b = d.bytes()?;
                        n += 8 + b.len();
                        match slots.get_mut(r) {
                            Some(slot @ None) => *slot = Some(b),
                            _ => {
                                return Err(BootstrapError::Protocol(format!(
                                    "allgather: rank {r} contributed twice or is out of range"
                                )))
                            }
                        }
                    }
                    let mut e = wire::Enc(header(OP_ALLGATHER, seq)).u32(size as u32);
                    for (r, s) in slots.iter().enumerate() {
                        let b = s.ok_or_else(|| {
                            BootstrapError::Protocol(format!("allgather: rank {r} missing"))
                        })?;
                        e = e.bytes(b);
                    }
                    e.done()
                }
            };
            for (c, s) in t.children.iter_mut() {
                write_frame(s, &down).map_err(lost(format!("child rank {c}")))?;
                t.sent.add(down.len());
            }
            let mut d = wire::Dec::new(&down[9..]);
            let n = d.u32()? as usize;
            if n != size {
                return Err(BootstrapError::Protocol(format!(
                    "allgather result has {n} entries for {size} ranks"
                )));
            }
            let out = (0..n)
                .map(|_| d.bytes().map(<[u8]>::to_vec))
                .collect::<Result<Vec<_>, _>>()?;
            d.finish()?;
            Ok(out)
        })
    }

    fn barrier(&self) -> Result<(), BootstrapError> {
        self.with_tree(|t, seq| {
            for (c, s) in t.children.iter_mut() {
                recv(s, &format!("child rank {c}"), OP_BARRIER, seq)?;
            }
            if let Some((p, s)) = &mut t.parent {
                let who = format!("parent rank {p}");
                send(s, &who, OP_BARRIER, seq, &[], &mut t.sent)?;
                recv(s, &who, OP_BARRIER, seq)?;
            }
            for (c, s) in t.children.iter_mut() {
                send(
                    s,
                    &format!("child rank {c}"),
                    OP_BARRIER,
                    seq,
                    &[],
                    &mut t.sent,
                )?;
            }
            Ok(())
        })
    }

    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        if root >= self.size {
            return Err(BootstrapError::InvalidArgument(format!(
                "broadcast root {root} is not a rank of a job of {} ranks",
                self.size
            )));
        }
        let rank = self.rank;
        self.with_tree(|t, seq| {
            // Up: the root's data climbs to rank 0; other subtrees send "none".
            let mut have: Option<Vec<u8>> = (rank == root).then(|| data.to_vec());
            for (c, s) in t.children.iter_mut() {
                let f = recv(s, &format!("child rank {c}"), OP_BROADCAST, seq)?;
                if f.get(9) == Some(&1) {
                    have = Some(f[10..].to_vec());
                }
            }
            let value = match &mut t.parent {
                Some((p, s)) => {
                    let who = format!("parent rank {p}");
                    let mut up = vec![u8::from(have.is_some())];
                    if let Some(h) = &have {
                        up.extend_from_slice(h);
                    }
                    send(s, &who, OP_BROADCAST, seq, &up, &mut t.sent)?;
                    recv(s, &who, OP_BROADCAST, seq)?[9..].to_vec()
                }
                None => have.ok_or_else(|| {
                    BootstrapError::Protocol(format!(
                        "broadcast: data of root {root} never arrived"
                    ))
                })?,
            };
            for (c, s) in t.children.iter_mut() {
                send(
                    s,
                    &format!("child rank {c}"),
                    OP_BROADCAST,
                    seq,
                    &value,
                    &mut t.sent,
                )?;
            }
            Ok(value)
        })
    }

    fn abort(&self, code: i32) -> ! {
        // Tell the launcher, wait briefly for its acknowledgement so the
        // launcher reports the abort rather than a bare exit, then end.
        if let Ok(mut c) = self.control.lock() {
            if write_frame(&mut *c, &Msg::Abort { code }.encode()).is_ok() {
                let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = read_frame(&mut *c, MAX_HELLO);
            }
        }
        std::process::exit(code)
    }

    fn name(&self) -> &'static str {
        "tcp"
    }

    fn finalize(&self, code: i32) -> Result<(), BootstrapError> {
        let mut c = self
            .control
            .lock()
            .map_err(|_| BootstrapError::Protocol("bootstrap lock poisoned".into()))?;
        write_frame(&mut *c, &Msg::Finalize { code }.encode()).map_err(lost("launcher".into()))?;
        // Wait (briefly) for the launcher's acknowledgement: once it has
        // recorded the finalize, this rank's exit counts as orderly.
        let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = read_frame(&mut *c, MAX_HELLO);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_shape() {
        assert_eq!(tree_parent(0, 8), None);
        assert_eq!(tree_parent(8, 8), Some(0));
        assert_eq!(tree_parent(9, 8), Some(1));
        assert_eq!(tree_children(0, 4, 8), vec![1, 2, 3]);
        assert_eq!(tree_children(1, 20, 8), (9..17).collect::<Vec<_>>());
        assert!(tree_children(3, 20, 8).is_empty());
        // Every rank but 0 is the child of exactly its parent.
        for n in [1, 2, 7, 100, 10_000] {
            for k in [2, 8, 32] {
                let mut seen = vec![0; n];
                for r in 0..n {
                    for c in tree_children(r, n, k) {
                        assert_eq!(tree_parent(c, k), Some(r));
                        seen[c] += 1;
                    }
                }
                assert!(seen[0] == 0 && seen[1..].iter().all(|&x| x == 1));
            }
        }
    }
}
