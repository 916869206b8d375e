//! Unit tests of the Strided planner.

use super::reference::{apply_get, apply_put, bytes, naive_strided};
use super::*;

/// A 4x5x6 sub-block of u32s between a 10x10x10 array and a 7x11x13 one
/// (x fastest), against the element-by-element reference.
#[test]
fn strided_3d_sub_block() {
    const E: usize = 4;
    let (ld, rd) = ([10usize, 10, 10], [13usize, 11, 7]); // x, y, z extents
    let lstr = [
        E as isize,
        (E * ld[0]) as isize,
        (E * ld[0] * ld[1]) as isize,
    ];
    let rstr = [
        E as isize,
        (E * rd[0]) as isize,
        (E * rd[0] * rd[1]) as isize,
    ];
    let at = |d: [usize; 3], x: usize, y: usize, z: usize| E * (x + d[0] * (y + d[1] * z));
    let (loff, roff) = (at(ld, 2, 3, 1), at(rd, 5, 4, 0));
    let (llen, rlen) = (E * 1000, E * 13 * 11 * 7);
    let count = [4, 5, 6];
    let local: Vec<u8> = (0..1000u32).flat_map(|v| v.to_le_bytes()).collect();
    let lstrided = Strided {
        offset: loff,
        strides: &lstr,
    };
    let rstrided = Strided {
        offset: roff,
        strides: &rstr,
    };
    let plan = plan_strided(lstrided, llen, rstrided, rlen, E, &count).unwrap();
    assert_eq!(plan.piece_count(), 30); // one piece per 16-byte row
    assert_eq!(plan.total_bytes(), 4 * 5 * 6 * E);

    let mut seg = bytes(rlen, 7);
    let mut want = seg.clone();
    apply_put(&plan, &local, &mut seg);
    naive_strided(&mut want, roff, &rstr, &local, loff, &lstr, E, &count);
    assert_eq!(seg, want);
    // By hand: element (x, y, z) of the block.
    for z in 0..6 {
        for y in 0..5 {
            for x in 0..4 {
                let r = at(rd, 5 + x, 4 + y, z);
                let v = u32::from_le_bytes(seg[r..r + 4].try_into().unwrap());
                assert_eq!(v as usize, (2 + x) + 10 * ((3 + y) + 10 * (1 + z)));
            }
        }
    }

    // The same block as a get, and with whole rows as the element.
    let mut back = vec![0u8; llen];
    let mut want = back.clone();
    apply_get(&plan, &mut back, &seg);
    naive_strided(&mut want, loff, &lstr, &seg, roff, &rstr, E, &count);
    assert_eq!(back, want);
    let rows = plan_strided(
        Strided {
            offset: loff,
            strides: &lstr[1..],
        },
        llen,
        Strided {
            offset: roff,
            strides: &rstr[1..],
        },
        rlen,
        4 * E,
        &count[1..],
    )
    .unwrap();
    assert_eq!(rows, plan);
}

#[test]
fn strided_contiguous_is_one_piece() {
    let s = [8isize, 24, 96];
    let d = Strided {
        offset: 0,
        strides: &s,
    };
    let plan = plan_strided(
        d,
        96 * 5,
        Strided {
            offset: 16,
            strides: &s,
        },
        1000,
        8,
        &[3, 4, 5],
    )
    .unwrap();
    assert_eq!(
        plan.pieces(),
        &[Piece {
            local: 0,
            remote: 16,
            len: 480
        }]
    );
}

#[test]
fn strided_reflection_and_transpose() {
    // Reverse 5 elements of 2 bytes: remote stride -2 from the last one.
    let src = bytes(10, 1);
    let plan = plan_strided(
        Strided {
            offset: 0,
            strides: &[2],
        },
        10,
        Strided {
            offset: 8,
            strides: &[-2],
        },
        10,
        2,
        &[5],
    )
    .unwrap();
    let mut seg = vec![0; 10];
    apply_put(&plan, &src, &mut seg);
    assert_eq!(seg, [8, 9, 6, 7, 4, 5, 2, 3, 0, 1].map(|i| src[i]));
    // Transpose a 3x4 byte matrix.
    let src = bytes(12, 3);
    let plan = plan_strided(
        Strided {
            offset: 0,
            strides: &[1, 3],
        },
        12,
        Strided {
            offset: 0,
            strides: &[4, 1],
        },
        12,
        1,
        &[3, 4],
    )
    .unwrap();
    let mut seg = vec![0; 12];
    apply_put(&plan, &src, &mut seg);
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(seg[i * 4 + j], src[j * 3 + i]);
        }
    }
}

#[test]
fn strided_degenerate_cases() {
    let none = Strided {
        offset: usize::MAX,
        strides: &[],
    };
    // elemsz == 0: everything else ignored.
    assert!(plan_strided(none, 0, none, 0, 0, &[7, 0, usize::MAX])
        .unwrap()
        .is_empty());
    // stridelevels == 0: one contiguous copy, strides ignored.
    let a = Strided {
        offset: 4,
        strides: &[],
    };
    let plan = plan_strided(
        a,
        8,
        Strided {
            offset: 0,
            strides: &[],
        },
        4,
        4,
        &[],
    )
    .unwrap();
    assert_eq!(
        plan.pieces(),
        &[Piece {
            local: 4,
            remote: 0,
            len: 4
        }]
    );
    // A zero count: offsets ignored, but the strides must be there.
    let s = Strided {
        offset: usize::MAX,
        strides: &[isize::MAX, isize::MIN],
    };
    assert!(plan_strided(s, 0, s, 0, 8, &[usize::MAX, 0])
        .unwrap()
        .is_empty());
    let e = plan_strided(s, 0, none, 0, 8, &[3, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS strided: the remote strides array has 0 entries, stridelevels is 2"
    );
}

#[test]
fn strided_errors() {
    let s = Strided {
        offset: 0,
        strides: &[-4],
    };
    let e = plan_strided(
        s,
        64,
        Strided {
            offset: 0,
            strides: &[4],
        },
        64,
        4,
        &[3],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "VIS strided region: local bytes -8..4 lie outside the 64-byte local buffer"
    );
    let big = Strided {
        offset: 0,
        strides: &[isize::MAX, isize::MAX, isize::MAX],
    };
    let e = plan_strided(big, 64, big, 64, 1, &[usize::MAX, 2, 2]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    let e = plan_strided(big, 64, big, 64, 1, &[2, 2, 2]).unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e}");
    // Broadcasting one source element is fine; a destination that must
    // overlap itself is refused.
    let zero = Strided {
        offset: 0,
        strides: &[0],
    };
    let wide = Strided {
        offset: 0,
        strides: &[4],
    };
    let plan = plan_strided(zero, 4, wide, 64, 4, &[16]).unwrap();
    assert_eq!(plan.piece_count(), 16);
    let e = plan_strided(zero, 4, zero, 4, 4, &[1 << 40]).unwrap_err();
    assert!(matches!(e, Error::DestinationOverlaps { .. }), "{e}");
}
