//! The shm provider's shared-memory objects (`/dev/shm/<pid>:<uid>:<n>`):
//! an object left by a dead process whose pid this process now has must
//! not stop an endpoint from being enabled (libfabric before 2.3 fails
//! `fi_enable` with -FI_EBUSY for it; from 2.3 it takes another name), and
//! closing an endpoint removes its object.
//! Over the real shm provider, in one process.

use conduit::ofi::{AddressVector, AvType, CompletionQueue, Domain, Endpoint, Hints, InfoList};
use ofi_sys as sys;
use std::path::Path;

fn shm_domain() -> Domain {
    let hints = Hints::new()
        .rdm()
        .caps((sys::FI_MSG | sys::FI_RMA) as u64)
        .manual_progress()
        .provider("shm");
    let list = InfoList::query(Some(&hints)).expect("fi_getinfo");
    let entry = list
        .first()
        .expect("provider shm not found: install libfabric1 (apt-get install libfabric-bin)");
    Domain::open_entry(&entry).expect("open fabric+domain")
}

/// The object behind an endpoint (its address without `fi_shm://`).
fn object(ep: &Endpoint) -> String {
    let name = ep.name().expect("fi_getname");
    let s = String::from_utf8_lossy(&name);
    let s = s.trim_end_matches('\0');
    s.strip_prefix("fi_shm://")
        .unwrap_or_else(|| panic!("not a shm address: {s:?}"))
        .to_string()
}

#[test]
fn an_object_left_by_a_dead_process_with_our_pid_is_replaced() {
    let domain = shm_domain();
    let cq = CompletionQueue::open(&domain, 0).unwrap();
    let av = AddressVector::open(&domain, AvType::Table, 4).unwrap();
    let open = || {
        Endpoint::open(&domain)
            .unwrap()
            .bind_cq(&cq, (sys::FI_TRANSMIT | sys::FI_RECV) as u64)
            .unwrap()
            .bind_av(&av)
    };
    let a = open().unwrap().enable().expect("enable the first endpoint");
    let a_obj = object(&a);
    let parts: Vec<&str> = a_obj.split(':').collect();
    assert_eq!(parts.len(), 3, "unexpected shm object name {a_obj:?}");
    assert_eq!(parts[0], std::process::id().to_string());
    let a_path = format!("/dev/shm/{a_obj}");
    assert!(Path::new(&a_path).exists(), "{a_path} missing");

    // The next endpoint of this process gets index n+1. Leave there what a
    // dead process with our pid would have left: a copy of a live region
    // (right version, our pid recorded as its owner).
    let n: u32 = parts[2].parse().unwrap();
    let stale = format!("{}:{}:{}", parts[0], parts[1], n + 1);
    let stale_path = format!("/dev/shm/{stale}");
    std::fs::copy(&a_path, &stale_path).expect("plant the stale object");

    let b = open()
        .unwrap()
        .enable()
        .expect("fi_enable must succeed over an object left by a dead process with our pid");
    let b_obj = object(&b);
    let b_path = format!("/dev/shm/{b_obj}");
    if conduit::ofi::runtime_version() < (2, 3) {
        // The provider removed the planted object (-FI_EBUSY) and the
        // wrapper's second fi_enable took its name.
        assert_eq!(b_obj, stale, "the endpoint did not take the planted name");
    } else {
        // From 2.3 the provider fails over to `<name>:<random>` instead (it
        // still removes the planted object); the wrapper must record the
        // new name.
        let seed = b_obj.strip_prefix(&format!("{stale}:"));
        assert!(
            seed.is_some_and(|s| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())),
            "expected {stale}:<random>, got {b_obj}"
        );
        let _ = std::fs::remove_file(&stale_path);
    }
    assert!(Path::new(&b_path).exists(), "{b_path} missing");

    // What an exit without closing removes is each endpoint's object under
    // the name it has after fi_enable.
    let listing = || {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("{}:", parts[0])))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        conduit::ofi::shm_region::unlink_all(),
        2,
        "objects of this process before: {:?}, after: {:?}",
        [&a_obj, &b_obj],
        listing()
    );
    assert!(!Path::new(&a_path).exists(), "unlink_all left {a_path}");
    assert!(!Path::new(&b_path).exists(), "unlink_all left {b_path}");
    drop(b);
    drop(a);

    // Closing removes an endpoint's object.
    let c = open().unwrap().enable().expect("enable a third endpoint");
    let c_path = format!("/dev/shm/{}", object(&c));
    assert!(Path::new(&c_path).exists(), "{c_path} missing");
    drop(c);
    assert!(!Path::new(&c_path).exists(), "closing left {c_path}");
}
