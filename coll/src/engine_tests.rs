//! Tests of [`super::TeamColl`]: sequence numbers, held messages,
//! failures and aborts.

use super::*;
use crate::msg::Kind;

fn bcast(root: usize, data: &[u8]) -> CollOp {
    CollOp::Broadcast {
        root,
        len: data.len(),
        src: Some(data.to_vec()),
    }
}

#[test]
fn early_message_is_held_until_start() {
    let cfg = Config::default();
    let mut root = TeamColl::new(2, 0, cfg).unwrap();
    let mut leaf = TeamColl::new(2, 1, cfg).unwrap();
    let (s0, out) = root.start(bcast(0, b"hi")).unwrap();
    assert_eq!((s0, out.len()), (0, 1));
    assert!(root.is_done(0));
    assert_eq!(root.take_result(0), Ok(Some(b"hi".to_vec())));
    // The leaf has not started sequence 0 yet.
    assert!(leaf.on_msg(0, 0, 0, 0, &out[0].data).unwrap().is_empty());
    assert!(!leaf.is_done(0));
    assert_eq!(leaf.take_result(0), Err(Error::NotDone { seq: 0 }));
    let op = CollOp::Broadcast {
        root: 0,
        len: 2,
        src: None,
    };
    let (s, sent) = leaf.start(op).unwrap();
    assert_eq!((s, sent.len()), (0, 0));
    assert_eq!(leaf.take_result(0), Ok(Some(b"hi".to_vec())));
    // Sequence 0 is retired.
    assert_eq!(
        leaf.on_msg(0, 0, 0, 0, b"hi"),
        Err(Error::StaleSequence { seq: 0 })
    );
    assert_eq!(leaf.next_seq(), 1);
}

#[test]
fn single_phase_rejects_phase_one() {
    let mut t = TeamColl::new(2, 1, Config::default()).unwrap();
    t.start(bcast(0, b"x")).unwrap();
    // The collective fails (its wait says why) and the root is told.
    assert_eq!(t.on_msg(0, 0, 1, 0, b"x"), Ok(Vec::new()));
    assert!(t.is_done(0) && t.has_failed(0));
    let aborts = t.take_aborts();
    assert_eq!(aborts.len(), 1);
    assert_eq!((aborts[0].0, aborts[0].1.to), (0, 0));
    assert_eq!(Kind::of_shape(aborts[0].1.shape), Some(Kind::Abort));
    assert_eq!(
        t.take_result(0),
        Err(Error::BadPhase {
            phase: 1,
            phases: 1
        })
    );
    // Later messages for it are dropped.
    assert_eq!(t.on_msg(0, 0, 0, 0, b"x"), Ok(Vec::new()));
    assert!(matches!(
        t.on_msg(0, 5, 0, 0, b"x"),
        Err(Error::RankOutsideTeam { rank: 5, size: 2 })
    ));
}

#[test]
fn a_collective_run_outside_takes_its_sequence_number() {
    let mut t = TeamColl::new(2, 1, Config::default()).unwrap();
    assert_eq!(t.start_outside(Kind::Flat, 8), Ok(0));
    assert_eq!((t.next_seq(), t.in_progress()), (1, 0));
    assert!(t.all_done());
    t.end_outside();
    // Its number is spent: a message for it is stale.
    assert_eq!(
        t.on_msg(0, 0, 0, 0, b"x"),
        Err(Error::StaleSequence { seq: 0 })
    );
    // A message held for the next one keeps it from running outside.
    assert!(t.on_msg(1, 0, 0, 0, b"x").unwrap().is_empty());
    assert!(t.holds(1));
    assert_eq!(
        t.start_outside(Kind::Flat, 8),
        Err(Error::HeldForOutside { seq: 1 })
    );
    assert_eq!(t.next_seq(), 1);
    let (s, _) = t.start(bcast(0, b"x")).unwrap();
    assert_eq!(s, 1);
    assert!(!t.holds(1));
    assert_eq!(t.take_result(1), Ok(Some(b"x".to_vec())));
}

#[test]
fn sequences_wrap() {
    let mut t = TeamColl::new(1, 0, Config::default()).unwrap();
    t.next_seq = u32::MAX;
    let (s, _) = t.start(bcast(0, b"a")).unwrap();
    assert_eq!(s, u32::MAX);
    assert_eq!(t.next_seq(), 0);
    assert!(t.is_future(0) && !t.is_future(u32::MAX));
}

#[test]
fn whole_chunks_of_another_count_fail_both_members() {
    use crate::op::{DType, Op};
    let cfg = Config {
        fanout: 2,
        max_chunk: 8,
    };
    let red = Reduction::Builtin(Op::Sum, DType::U64);
    let all = |src: Vec<u8>| CollOp::ReduceToAll {
        src,
        reduction: red.clone(),
    };
    let mut root = TeamColl::new(2, 0, cfg).unwrap();
    let mut leaf = TeamColl::new(2, 1, cfg).unwrap();
    root.start(all(vec![1; 24])).unwrap();
    let (_, out) = leaf.start(all(vec![1; 16])).unwrap();
    for m in out {
        root.on_msg_shaped(0, 1, m.phase, m.chunk, m.shape, &m.data)
            .unwrap();
    }
    let e = root.take_result(0).unwrap_err().to_string();
    assert!(e.contains("operands differ in length"), "{e}");
    for (seq, m) in root.take_aborts() {
        leaf.on_msg_shaped(seq, 0, m.phase, m.chunk, m.shape, &m.data)
            .unwrap();
    }
    let e = leaf.take_result(0).unwrap_err().to_string();
    assert!(
        e.starts_with("collective aborted by team rank 0: operands differ"),
        "{e}"
    );
    let mut t = TeamColl::new(2, 0, cfg).unwrap();
    t.set_chunk_limit(8);
    let e = t.start(all(vec![0; 16])).map(drop);
    assert!(e.is_ok());
    let wide = Reduction::User {
        op: crate::op::UserOp {
            f: std::sync::Arc::new(|_: &mut [u8], _: &[u8]| {}),
            commutative: true,
        },
        elem_size: 9,
    };
    let e = t.start(CollOp::ReduceToAll {
        src: vec![0; 9],
        reduction: wide,
    });
    assert_eq!(
        e.unwrap_err(),
        Error::ElemTooLarge {
            elem_size: 9,
            max: 8
        }
    );
    assert_eq!(t.next_seq(), 1);
}

#[test]
fn an_abort_for_a_collective_complete_here_is_dropped() {
    let mut root = TeamColl::new(2, 0, Config::default()).unwrap();
    let abort = |t: &mut TeamColl, seq| {
        t.on_msg_shaped(seq, 1, 0, 0, crate::msg::shape(Kind::Abort, true), b"why")
    };
    // Complete, not yet taken: its result stands.
    root.start(bcast(0, b"x")).unwrap();
    assert_eq!(abort(&mut root, 0), Ok(Vec::new()));
    assert_eq!(root.take_result(0), Ok(Some(b"x".to_vec())));
    // Retired: dropped too, and the next collective is unaffected.
    assert_eq!(abort(&mut root, 0), Ok(Vec::new()));
    assert_eq!(
        root.take_dropped_aborts(),
        vec![(0, 1, "why".to_string()), (0, 1, "why".to_string())]
    );
    root.start(bcast(0, b"y")).unwrap();
    assert_eq!(root.take_result(1), Ok(Some(b"y".to_vec())));
    // A data chunk for a retired collective is still an error.
    assert_eq!(
        root.on_msg(0, 1, 0, 0, b"x"),
        Err(Error::StaleSequence { seq: 0 })
    );
}

#[test]
fn a_chunk_for_a_collective_run_outside_fails_it() {
    let mut t = TeamColl::new(2, 0, Config::default()).unwrap();
    let seq = t.start_outside(Kind::Flat, 8).unwrap();
    // A member whose operand took it off the board sends a chunk.
    let shape = crate::msg::shape(Kind::Doubling, true);
    assert_eq!(
        t.on_msg_shaped(seq, 1, 0, 0, shape, &[0; 16]),
        Ok(Vec::new())
    );
    assert!(t.has_failed(seq));
    assert_eq!(t.take_aborts().len(), 1);
    let e = t.take_result(seq).unwrap_err().to_string();
    assert!(
        e.contains("operands differ") && e.contains("16 bytes"),
        "{e}"
    );
    t.end_outside();
    // Later messages for it are dropped.
    assert_eq!(
        t.on_msg_shaped(seq, 1, 0, 0, shape, &[0; 16]),
        Ok(Vec::new())
    );
    // An abort ends one too, without telling anyone.
    let seq = t.start_outside(Kind::Broadcast, 8).unwrap();
    let abort = crate::msg::shape(Kind::Abort, true);
    assert_eq!(t.on_msg_shaped(seq, 1, 0, 0, abort, b"why"), Ok(Vec::new()));
    assert!(t.take_aborts().is_empty());
    assert_eq!(
        t.take_result(seq),
        Err(Error::Aborted {
            from: 1,
            reason: "why".into()
        })
    );
}

#[test]
fn early_message_for_a_reused_dead_sequence_is_held() {
    let mut t = TeamColl::new(2, 1, Config::default()).unwrap();
    // Sequence 0 failed here and was retired (a rank-local start error
    // leaves it so); 2^31 + 1 collectives later it is in the future again
    // (it comes round after 2^32): its early chunk is held, not dropped.
    t.dead.insert(0);
    t.next_seq = (1 << 31) + 1;
    assert_eq!(t.on_msg(0, 0, 0, 0, b"hi"), Ok(Vec::new()));
    assert!(t.holds(0));
}

/// A message this rank could not send: every other member is told, and a
/// collective still in progress here fails; one complete here keeps its
/// result; a second failure of the same collective tells nobody again.
#[test]
fn a_send_that_fails_aborts_the_collective_everywhere() {
    let abort_to = |t: &mut TeamColl| -> Vec<(u32, usize, String)> {
        t.take_aborts()
            .into_iter()
            .map(|(seq, m)| {
                assert_eq!(Kind::of_shape(m.shape), Some(Kind::Abort));
                (seq, m.to, String::from_utf8(m.data).unwrap())
            })
            .collect()
    };
    let why = "collective failed on this rank: a message could not be sent: no route";
    // The root of a broadcast on 3 ranks: complete once its messages are
    // made, so only the others are told.
    let mut root = TeamColl::new(3, 0, Config::default()).unwrap();
    root.start(bcast(0, b"x")).unwrap();
    root.fail_sending(0, "no route");
    assert_eq!(
        abort_to(&mut root),
        vec![(0, 1, why.to_string()), (0, 2, why.to_string())]
    );
    assert_eq!(root.take_result(0), Ok(Some(b"x".to_vec())));
    // A reduction still waiting here fails with the reason.
    let mut mid = TeamColl::new(3, 1, Config::default()).unwrap();
    let (seq, _) = mid
        .start(CollOp::ReduceToAll {
            src: vec![1; 8],
            reduction: Reduction::Builtin(crate::op::Op::Sum, crate::op::DType::U64),
        })
        .unwrap();
    mid.fail_sending(seq, "no route");
    assert!(mid.is_done(seq) && mid.has_failed(seq));
    assert_eq!(
        abort_to(&mut mid),
        vec![(seq, 0, why.to_string()), (seq, 2, why.to_string())]
    );
    mid.fail_sending(seq, "again");
    assert!(abort_to(&mut mid).is_empty());
    assert_eq!(
        mid.take_result(seq),
        Err(Error::SendFailed {
            reason: "no route".to_string()
        })
    );
    // Retired: nothing more.
    mid.fail_sending(seq, "late");
    assert!(abort_to(&mut mid).is_empty());
}
