//! Broadcast over N in 1..=9 ranks, every root, fan-outs 1, 2, 3 and 7, in
//! shuffled delivery orders.

mod common;

use coll::{CollOp, Config};
use common::{run, seed, Rng, FANOUTS};

fn ops_for(n: usize, root: usize, data: &[u8]) -> Vec<Vec<CollOp>> {
    (0..n)
        .map(|r| {
            vec![CollOp::Broadcast {
                root,
                len: data.len(),
                src: (r == root).then(|| data.to_vec()),
            }]
        })
        .collect()
}

#[test]
fn every_shape_and_size() {
    const MAX_CHUNK: usize = 4;
    // 0 B, 1 B, under one chunk, exact chunks, not a multiple, many chunks.
    let sizes = [0, 1, 3, 4, 8, 13, 4 * 7 + 1];
    for n in 1..=9 {
        for &fanout in &FANOUTS {
            for root in 0..n {
                for &len in &sizes {
                    let s = seed(&[n, fanout, root, len]);
                    let mut rng = Rng::new(s);
                    let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    let cfg = Config {
                        fanout,
                        max_chunk: MAX_CHUNK,
                    };
                    let o = run(cfg, ops_for(n, root, &data), s);
                    for (r, res) in o.results.iter().enumerate() {
                        assert_eq!(
                            res[0].as_deref(),
                            Some(&data[..]),
                            "n={n} fanout={fanout} root={root} len={len} rank={r}"
                        );
                    }
                    let chunks = len.div_ceil(MAX_CHUNK).max(1);
                    assert_eq!(
                        o.delivered,
                        (n - 1) * chunks,
                        "one copy per non-root per chunk"
                    );
                }
            }
        }
    }
}

#[test]
fn several_seeds_for_one_shape() {
    let data: Vec<u8> = (0..100).map(|i| i as u8).collect();
    for s in 0..50 {
        let cfg = Config {
            fanout: 2,
            max_chunk: 7,
        };
        let o = run(cfg, ops_for(9, 4, &data), s);
        assert!(o.results.iter().all(|r| r[0].as_deref() == Some(&data[..])));
    }
}
