use super::*;
use proptest::prelude::*;

fn facts(directed: bool, cq: usize, fmt: u64) -> ProviderTagFacts {
    ProviderTagFacts {
        directed_recv: directed,
        cq_data_size: cq,
        mem_tag_format: fmt,
    }
}

const AAAA: u64 = 0xaaaa_aaaa_aaaa_aaaa;

#[test]
fn auto_picks_full_only_with_cq_data_and_directed_receive() {
    let full = Layout::choose(TagMode::Auto, &facts(true, 8, AAAA), "shm").unwrap();
    assert_eq!(
        (full.mode, full.cid_bits, full.src_bits, full.tag_bits),
        (TagMode::Full, 28, 0, 32)
    );
    let one = Layout::choose(TagMode::Auto, &facts(false, 8, AAAA), "x").unwrap();
    assert_eq!(
        (one.mode, one.cid_bits, one.src_bits, one.tag_bits),
        (TagMode::Tag1, 12, 18, 32)
    );
    let one = Layout::choose(TagMode::Auto, &facts(true, 0, AAAA), "x").unwrap();
    assert_eq!(one.mode, TagMode::Tag1);
    let two = Layout::choose(TagMode::Tag2, &facts(true, 8, AAAA), "x").unwrap();
    assert_eq!((two.cid_bits, two.src_bits, two.tag_bits), (24, 18, 20));
}

#[test]
fn seed_limits() {
    let f = facts(true, 8, AAAA);
    let one = Layout::choose(TagMode::Tag1, &f, "p").unwrap();
    assert_eq!(
        (one.max_cid(), one.max_source(), one.max_tag()),
        (4095, 262_143, i32::MAX as u32)
    );
    let two = Layout::choose(TagMode::Tag2, &f, "p").unwrap();
    assert_eq!(
        (two.max_cid(), two.max_source(), two.max_tag()),
        (16_777_215, 262_143, 524_287)
    );
    let full = Layout::choose(TagMode::Full, &f, "p").unwrap();
    assert_eq!(
        (full.max_cid(), full.max_source(), full.max_tag()),
        (268_435_455, u32::MAX, i32::MAX as u32)
    );
}

#[test]
fn full_refused_with_the_reason() {
    let e = Layout::choose(TagMode::Full, &facts(false, 8, AAAA), "tcp;ofi_rxm").unwrap_err();
    assert_eq!(
        e.to_string(),
        "GASNET_OFI_TAG_MODE=ofi_tag_full is not possible with provider tcp;ofi_rxm: it lacks FI_DIRECTED_RECV. \
         ofi_tag_full sends the source rank in the remote CQ data (FI_REMOTE_CQ_DATA) and needs FI_DIRECTED_RECV \
         so that a receive can select its source; use GASNET_OFI_TAG_MODE=ofi_tag_1 or ofi_tag_2 (or auto, which \
         picks ofi_tag_1 here)"
    );
    let e = Layout::choose(TagMode::Full, &facts(false, 0, AAAA), "p").unwrap_err();
    assert!(
        e.to_string().contains(
            "it lacks FI_REMOTE_CQ_DATA (cq_data_size 0 bytes, 4 needed) and FI_DIRECTED_RECV"
        ),
        "{e}"
    );
}

#[test]
fn reserved_high_bits_reduce_the_cid_field() {
    let l = Layout::choose(TagMode::Tag1, &facts(true, 8, 0x5555_5555_5555_5555), "p").unwrap();
    assert_eq!(l.cid_bits, 11);
    assert_eq!(l.max_cid(), 2047);
    let l = Layout::choose(TagMode::Tag1, &facts(true, 8, 0x0fff_ffff_ffff_ffff), "p").unwrap();
    assert_eq!(l.cid_bits, 8);
    let e = Layout::choose(
        TagMode::Tag1,
        &facts(true, 8, 0x07ff_ffff_ffff_ffff),
        "prov",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "provider prov reserves the 5 high-order tag bits (mem_tag_format 0x07ffffffffffffff): ofi_tag_1 would \
         keep 7 communicator-id bits, fewer than the 8 needed"
    );
    // No format: nothing reserved.
    assert_eq!(
        Layout::choose(TagMode::Tag1, &facts(true, 8, 0), "p")
            .unwrap()
            .cid_bits,
        12
    );
}

#[test]
fn over_limit_values_are_errors_with_the_limit() {
    let one = Layout::choose(TagMode::Tag1, &facts(false, 8, AAAA), "p").unwrap();
    assert_eq!(
        one.check_tag(1 << 31).unwrap_err().to_string(),
        "tag 2147483648 is beyond what tag layout ofi_tag_1 holds: the largest tag is 2147483647"
    );
    assert_eq!(
        one.check_source(262_144).unwrap_err().to_string(),
        "source rank 262144 is beyond what tag layout ofi_tag_1 holds: the largest source rank is 262143 \
         (GASNET_OFI_TAG_MODE=ofi_tag_full carries any rank)"
    );
    assert_eq!(
        one.check_cid(4096).unwrap_err().to_string(),
        "communicator id 4096 is beyond what tag layout ofi_tag_1 holds: the largest communicator id is 4095 \
         (free communicators, or use GASNET_OFI_TAG_MODE=ofi_tag_2 or ofi_tag_full for more)"
    );
    assert!(one.check_tag(i32::MAX as u32).is_ok());
    let two = Layout::choose(TagMode::Tag2, &facts(false, 8, AAAA), "p").unwrap();
    assert!(two.check_tag(524_288).is_err());
    assert!(two.check_tag(524_287).is_ok());
}

#[test]
fn field_positions_follow_the_seed() {
    // ofi_tag_1: | cid 12 | source 18 | proto 2 | tag 32 |
    let one = Layout::choose(TagMode::Tag1, &facts(false, 8, AAAA), "p").unwrap();
    assert_eq!(one.send_bits(1, 0, 0, false), 1 << 52);
    assert_eq!(one.send_bits(0, 1, 0, false), 1 << 34);
    assert_eq!(one.sync_bit(), 0x0000_0001_0000_0000);
    assert_eq!(one.ack_bit(), 0x0000_0002_0000_0000);
    // ofi_tag_2: | cid 24 | source 18 | proto 2 | tag 20 |
    let two = Layout::choose(TagMode::Tag2, &facts(false, 8, AAAA), "p").unwrap();
    assert_eq!(two.sync_bit(), 0x0000_0000_0010_0000);
    assert_eq!(two.send_bits(0, 0x3ffff, 0, false), 0x0000_00ff_ffc0_0000);
    // ofi_tag_full: | 2 unused | cid 28 | proto 2 | tag 32 |
    let full = Layout::choose(TagMode::Full, &facts(true, 8, AAAA), "p").unwrap();
    assert_eq!(full.send_bits(1, 99, 0, false), 1 << 34);
}

fn layouts() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(TagMode::Tag1),
        Just(TagMode::Tag2),
        Just(TagMode::Full)
    ]
    .prop_map(|m| Layout::choose(m, &facts(true, 8, AAAA), "p").unwrap())
}

fn matches(bits: u64, (m, ignore): (u64, u64)) -> bool {
    (bits & !ignore) == (m & !ignore)
}

proptest! {
    #[test]
    fn round_trip_and_matching(l in layouts(), cid in 0u32..256, src in 0u32..1000, tag in 0u32..500_000,
                               other in 0u32..500_000, sync: bool) {
        let mut b = l.send_bits(cid, src, tag, false);
        if sync { b |= l.sync_bit(); }
        let d = l.decode(b, src as u64);
        prop_assert_eq!((d.source, d.tag, d.internal, d.sync, d.ack), (src, tag, false, sync, false));
        prop_assert_eq!(l.cid_of(b), cid);
        // Exact, wildcard source, wildcard tag, both.
        prop_assert!(matches(b, l.recv_bits(cid, Some(src), Some(tag), false)));
        prop_assert!(matches(b, l.recv_bits(cid, None, Some(tag), false)));
        prop_assert!(matches(b, l.recv_bits(cid, Some(src), None, false)));
        prop_assert!(matches(b, l.recv_bits(cid, None, None, false)));
        // Another tag or communicator never matches.
        prop_assert_eq!(matches(b, l.recv_bits(cid, None, Some(other), false)), other == tag);
        prop_assert!(!matches(b, l.recv_bits(cid + 1, None, None, false)));
        // Internal messages are never matched by a user receive, even a wildcard.
        let i = l.send_bits(cid, src, tag, true);
        prop_assert!(!matches(i, l.recv_bits(cid, None, None, false)));
        prop_assert!(matches(i, l.recv_bits(cid, None, Some(tag), true)));
        // An acknowledgement matches only its sender's wait, never a receive.
        let ack = l.ack_bits(cid, 7, b);
        prop_assert!(!matches(ack, l.recv_bits(cid, None, None, false)));
        prop_assert!(!matches(ack, l.recv_bits(cid, None, None, true)));
        prop_assert!(matches(ack, (l.ack_wait_bits(cid, 7, l.send_bits(cid, src, tag, false)), 0)));
        if !l.cq_data() {
            prop_assert_eq!(matches(b, l.recv_bits(cid, Some(src + 1), Some(tag), false)), false);
        }
    }
}
