//! The client over the in-memory network simulator: Active Messages,
//! barriers and exit under injected faults (-FI_EAGAIN on every kind of
//! post, delayed and reordered completions, error completions, the
//! multi-receive patterns that broke real providers).
//!
//! This file holds the exchange that the fault and multi-receive tests
//! run on every rank; the tests are in the modules below.

mod sim;

#[path = "sim_am/failures.rs"]
mod failures;
#[path = "sim_am/faults.rs"]
mod faults;
#[path = "sim_am/landing.rs"]
mod landing;
#[path = "sim_am/multi_receive.rs"]
mod multi_receive;
#[path = "sim_am/polling.rs"]
mod polling;
#[path = "sim_am/short_path.rs"]
mod short_path;
#[path = "sim_am/short_send.rs"]
mod short_send;

use conduit::client::Client;
use conduit::transport::sim::SimTransport;
use sim::Ended;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

type SimClient<S> = Client<S, SimTransport>;

/// Per-rank record of what arrived: (source, sequence) pairs and payload
/// checks.
#[derive(Default)]
struct Seen {
    shorts: Mutex<Vec<Vec<u32>>>,
    mediums: Mutex<Vec<Vec<u32>>>,
    longs: AtomicU64,
    replies: AtomicU64,
    bad: AtomicU64,
}

fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(31) as u8 ^ seed as u8)
        .collect()
}

const H_SHORT: u8 = 200;
const H_MED: u8 = 201;
const H_LONG: u8 = 202;
const H_REPLY: u8 = 203;

fn register(c: &SimClient<Seen>) {
    c.on_request_short(H_SHORT, 2, |tok, a| {
        {
            let st = tok.state();
            let mut v = st.shorts.lock().unwrap();
            if v.len() <= tok.source() {
                v.resize(tok.source() + 1, Vec::new());
            }
            v[tok.source()].push(a[0]);
            if a[1] != a[0] ^ 0xabcd {
                st.bad.fetch_add(1, Ordering::Relaxed);
            }
        }
        tok.reply_short(H_REPLY, &[a[0]]).unwrap();
    })
    .unwrap();
    c.on_request_medium(H_MED, 1, |tok, a, p| {
        let st = tok.state();
        if p != pattern(a[0], p.len()).as_slice() {
            st.bad.fetch_add(1, Ordering::Relaxed);
        }
        let mut v = st.mediums.lock().unwrap();
        if v.len() <= tok.source() {
            v.resize(tok.source() + 1, Vec::new());
        }
        v[tok.source()].push(a[0]);
    })
    .unwrap();
    c.on_request_long(H_LONG, 1, |tok, a, p| {
        let st = tok.state();
        if !p.equals(&pattern(a[0], p.len())) {
            st.bad.fetch_add(1, Ordering::Relaxed);
        }
        st.longs.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    c.on_reply_short(H_REPLY, 1, |tok, _| {
        tok.state().replies.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
}

/// Every rank sends `n` Shorts (each answered), `n / 4` Mediums of up to
/// `max_medium` bytes and a few Longs (inline and by RMA) to every other
/// rank and to itself; checks that everything arrived exactly once, intact.
fn exchange(c: &SimClient<Seen>, n: u32) -> String {
    register(c);
    c.attach_segment(4 << 20).unwrap();
    c.barrier().unwrap();
    let size = c.size();
    let me = c.rank();
    let maxm = c.max_medium();
    let mut sent_shorts = 0u64;
    for i in 0..n {
        for d in 0..size {
            c.request_short(d, H_SHORT, &[i, i ^ 0xabcd]).unwrap();
            sent_shorts += 1;
            if i % 4 == 0 {
                let len = (i as usize * 977) % (maxm + 1);
                c.request_medium(d, H_MED, &[i], &pattern(i, len)).unwrap();
            }
            if i % 16 == 0 {
                // Inline below the threshold, by RMA above it.
                let len = if i % 32 == 0 { 100 } else { 20_000 };
                // Each Long its own place (a later one must not overwrite
                // an earlier one before its handler ran).
                let at = (me * 32 + i as usize / 16) * 24_576 + (i as usize % 7);
                c.request_long(d, H_LONG, &[i], &pattern(i, len), at)
                    .unwrap();
            }
        }
    }
    let st = c.state();
    let longs_each = n.div_ceil(16) as u64;
    c.block_until(|| {
        let m = st.mediums.lock().unwrap();
        let s = st.shorts.lock().unwrap();
        st.replies.load(Ordering::Relaxed) == sent_shorts
            && s.iter().map(|v| v.len()).sum::<usize>() == size * n as usize
            && m.iter().map(|v| v.len()).sum::<usize>() == size * n.div_ceil(4) as usize
            && st.longs.load(Ordering::Relaxed) == longs_each * size as u64
    })
    .unwrap();
    let shorts = st.shorts.lock().unwrap();
    for (src, v) in shorts.iter().enumerate() {
        let mut v = v.clone();
        v.sort();
        assert_eq!(
            v,
            (0..n).collect::<Vec<_>>(),
            "shorts from rank {src} at rank {me}"
        );
    }
    assert_eq!(
        st.bad.load(Ordering::Relaxed),
        0,
        "corrupt messages at rank {me}"
    );
    let s = c.stats();
    format!(
        "eagain {} reposts {} early {} rescues {}",
        s.eagain_retries, s.reposts, s.early_releases, s.rescue_posts
    )
}

fn all_returned(ended: Vec<Ended<String>>) -> Vec<String> {
    ended.into_iter().map(|e| e.value()).collect()
}
