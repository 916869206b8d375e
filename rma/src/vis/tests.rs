//! Unit tests of the Vector and Indexed planners, and of packing.

use super::reference::{apply_get, apply_put, bytes};
use super::*;

#[test]
fn vector_pieces_of_different_sizes() {
    let local = [(0, 3), (10, 5)];
    let remote = [(100, 2), (50, 0), (200, 6)];
    let plan = plan_vector(&local, 16, &remote, 256).unwrap();
    assert_eq!(
        plan.pieces(),
        &[
            Piece {
                local: 0,
                remote: 100,
                len: 2
            },
            Piece {
                local: 2,
                remote: 200,
                len: 1
            },
            Piece {
                local: 10,
                remote: 201,
                len: 5
            },
        ]
    );
    assert_eq!(plan.total_bytes(), 8);
    assert_eq!(plan.piece_count(), 3);
}

#[test]
fn vector_adjacent_pieces_merge() {
    let plan = plan_vector(&[(0, 4), (4, 4)], 8, &[(8, 2), (10, 6)], 16).unwrap();
    assert_eq!(
        plan.pieces(),
        &[Piece {
            local: 0,
            remote: 8,
            len: 8
        }]
    );
}

#[test]
fn vector_totals_must_agree() {
    let e = plan_vector(&[(0, 4)], 8, &[(0, 5)], 8).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS vector sizes disagree: the local list totals 4 bytes, the remote list 5 bytes"
    );
}

#[test]
fn vector_bounds_name_the_piece() {
    let remote = [(0, 1024), (1024, 1024), (2048, 2048), (4096, 4096)];
    let e = plan_vector(&[(0, 8192)], 8192, &remote, 4096).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS piece 3: remote bytes 4096..8192 lie outside the target's 4096-byte segment"
    );
    let e = plan_vector(&[(usize::MAX, 2)], 8, &[(0, 2)], 8).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "VIS piece 0: local offset {} + length 2 overflows",
            usize::MAX
        )
    );
    let e = plan_vector(&[(6, 4)], 8, &[(0, 4)], 8).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS piece 0: local bytes 6..10 lie outside the 8-byte local buffer"
    );
}

#[test]
fn vector_zero_length_entries_are_ignored() {
    let plan = plan_vector(&[(usize::MAX, 0)], 0, &[(12345, 0)], 0).unwrap();
    assert!(plan.is_empty());
    assert_eq!(plan.total_bytes(), 0);
    let plan = plan_vector(&[], 0, &[], 0).unwrap();
    assert!(plan.is_empty());
}

#[test]
fn vector_total_overflow_is_an_error() {
    let big = usize::MAX / 2 + 1;
    let e = plan_vector(&[(0, big), (0, big)], usize::MAX, &[], 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Overflow {
                item: Item::Piece(1),
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn indexed_plans_and_checks() {
    let l = Indexed {
        offsets: &[0, 8, 16],
        len: 4,
    };
    let r = Indexed {
        offsets: &[100, 106],
        len: 6,
    };
    let plan = plan_indexed(l, 20, r, 128).unwrap();
    assert_eq!(
        plan.pieces(),
        &[
            Piece {
                local: 0,
                remote: 100,
                len: 4
            },
            Piece {
                local: 8,
                remote: 104,
                len: 4
            },
            Piece {
                local: 16,
                remote: 108,
                len: 4
            },
        ]
    );
    let r = Indexed {
        offsets: &[100],
        len: 6,
    };
    let e = plan_indexed(l, 20, r, 128).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS indexed sizes disagree: local 3 x 4 bytes = 12, remote 1 x 6 bytes = 6"
    );
    let r = Indexed {
        offsets: &[100, 124],
        len: 6,
    };
    let e = plan_indexed(l, 20, r, 128).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS index 1: remote bytes 124..130 lie outside the target's 128-byte segment"
    );
    // Zero-length pieces: offsets ignored.
    let z = Indexed {
        offsets: &[usize::MAX, 7],
        len: 0,
    };
    assert!(plan_indexed(
        z,
        0,
        Indexed {
            offsets: &[],
            len: 9
        },
        0
    )
    .unwrap()
    .is_empty());
    // count x len overflow.
    let huge = Indexed {
        offsets: &[0, 0],
        len: usize::MAX,
    };
    let e = plan_indexed(huge, usize::MAX, huge, usize::MAX).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
}

#[test]
fn pack_unpack_and_wire_form() {
    let plan = plan_vector(&[(1, 3), (9, 4)], 16, &[(40, 5), (20, 2)], 64).unwrap();
    let local = bytes(16, 9);
    let packed = pack(&local, plan.pieces(), Side::Local).unwrap();
    assert_eq!(packed.len(), 7);
    let wire = encode(plan.pieces());
    let pieces = decode(&wire).unwrap();
    assert_eq!(pieces, plan.pieces());
    let mut seg = vec![0; 64];
    unpack(&packed, &pieces, Side::Remote, &mut seg).unwrap();
    let mut want = vec![0; 64];
    apply_put(&plan, &local, &mut want);
    assert_eq!(seg, want);
    // A get packs at the target and unpacks locally.
    let packed = pack(&seg, &pieces, Side::Remote).unwrap();
    let mut back = vec![0; 16];
    unpack(&packed, &pieces, Side::Local, &mut back).unwrap();
    let mut want = vec![0; 16];
    apply_get(&plan, &mut want, &seg);
    assert_eq!(back, want);
    // Out of bounds or short payloads write nothing.
    let mut small = vec![0xAA; 30];
    let e = unpack(&packed, &pieces, Side::Remote, &mut small).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS piece 0: remote bytes 40..43 lie outside the target's 30-byte segment"
    );
    assert!(small.iter().all(|&b| b == 0xAA));
    let e = unpack(&packed[1..], &pieces, Side::Local, &mut back).unwrap_err();
    assert_eq!(
        e,
        Error::PackedLength {
            got: 6,
            expected: 7
        }
    );
    // Malformed wire forms.
    assert!(decode(&[]).is_err());
    assert!(decode(&[5, 0, 0, 1]).is_err());
    assert!(decode(&[0, 0]).is_err());
    assert!(
        decode(&[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 1])
            .is_err()
    );
    assert_eq!(decode(&[0]).unwrap(), vec![]);
}
