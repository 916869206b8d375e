//! The exchange without faults, with -FI_EAGAIN on every kind of post, and
//! with delayed and reordered completions.

use super::sim::Job;
use super::{all_returned, exchange, Seen};
use conduit::client::Seq;
use conduit::transport::sim::Faults;

#[test]
fn exchange_without_faults() {
    let (_f, ended) = Job::new(3).run::<Seq, _, _, _>(|_| Seen::default(), |c| exchange(c, 64));
    all_returned(ended);
}

#[test]
fn eagain_on_every_kind_of_post() {
    let (fabric, ended) = Job::new(3)
        .faults(Faults {
            eagain_one_in: 3,
            ..Faults::default()
        })
        .vars(&[
            ("GASNET_OFI_NUM_RECEIVE_BUFFS", "4"),
            ("GASNET_OFI_RECEIVE_BUFF_SIZE", "64K"),
        ])
        .run::<Seq, _, _, _>(|_| Seen::default(), |c| exchange(c, 64));
    let lines = all_returned(ended);
    let c = fabric.counts();
    assert!(
        c.eagain > 100,
        "only {} posts were refused: {lines:?}",
        c.eagain
    );
}

/// Also with sends reported where a paired-endpoint profile reports them
/// (requests' on the reply queue, replies' on the TX queue).
#[test]
fn delayed_and_reordered_completions() {
    for paired in [false, true] {
        let (fabric, ended) = Job::new(4)
            .faults(Faults {
                max_delay: 5,
                reorder: true,
                tx_on_reply: paired,
                am_paired: paired,
                ..Faults::default()
            })
            .vars(&[
                ("GASNET_OFI_NUM_RECEIVE_BUFFS", "4"),
                ("GASNET_OFI_RECEIVE_BUFF_SIZE", "32K"),
            ])
            .max_msg(4096)
            .run::<Seq, _, _, _>(|_| Seen::default(), |c| exchange(c, 48));
        all_returned(ended);
        assert!(fabric.counts().delivered > 0);
    }
}
