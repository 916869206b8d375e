//! The shm provider's shared-memory objects (`/dev/shm/<pid>:<uid>:<n>`):
//! an object left by a dead process whose pid this process now has must
//! not stop an endpoint from being enabled (libfabric fails `fi_enable`
//! with -FI_EBUSY for it), and closing an endpoint removes its object.
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
    assert_eq!(
        object(&b),
        stale,
        "the endpoint did not take the planted name"
    );
    assert!(Path::new(&stale_path).exists());

    // Closing removes each endpoint's object.
    drop(b);
    assert!(
        !Path::new(&stale_path).exists(),
        "closing left {stale_path}"
    );
    drop(a);
    assert!(!Path::new(&a_path).exists(), "closing left {a_path}");
}
