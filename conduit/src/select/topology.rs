//! Which `GASNET_OFI_DEVICE_<ids>` applies to this process.
//!
//! The objects of the `GASNET_OFI_DEVICE_TYPE` type whose CPUs intersect the
//! process's CPU binding give the ids, in logical-index order: a process
//! bound inside NUMA node 1 with `GASNET_OFI_DEVICE_TYPE=Node` reads
//! `GASNET_OFI_DEVICE_1`; one spanning packages 0 and 1 reads
//! `GASNET_OFI_DEVICE_0_1` ([`crate::config::DeviceConfig::requested`] then
//! falls back to `GASNET_OFI_DEVICE`). The topology comes from hwloc through
//! the `hwlocality` crate.

use crate::config::HwlocType;
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

fn object_type(t: HwlocType) -> ObjectType {
    match t {
        HwlocType::Machine => ObjectType::Machine,
        HwlocType::Package => ObjectType::Package,
        HwlocType::NumaNode => ObjectType::NUMANode,
        HwlocType::Group => ObjectType::Group,
        HwlocType::L3Cache => ObjectType::L3Cache,
        HwlocType::L2Cache => ObjectType::L2Cache,
        HwlocType::Core => ObjectType::Core,
        HwlocType::Pu => ObjectType::PU,
    }
}

/// Logical indices of the `kind` objects this process's CPU binding
/// touches; empty when hwloc cannot tell (then only `GASNET_OFI_DEVICE`
/// applies).
pub fn binding_ids(kind: HwlocType) -> Vec<usize> {
    let Ok(topo) = Topology::new() else {
        tracing::debug!("hwloc could not read the topology");
        return Vec::new();
    };
    let Ok(bound) = topo.cpu_binding(CpuBindingFlags::PROCESS) else {
        tracing::debug!("hwloc could not read the process's CPU binding");
        return Vec::new();
    };
    let mut ids: Vec<usize> = topo
        .objects_with_type(object_type(kind))
        .filter(|o| o.cpuset().is_some_and(|c| c.intersects(&bound)))
        .map(|o| o.logical_index())
        .collect();
    ids.sort_unstable();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_bound_somewhere() {
        // Every process runs on the one machine and on at least one PU.
        assert_eq!(binding_ids(HwlocType::Machine), vec![0]);
        assert!(!binding_ids(HwlocType::Pu).is_empty());
        assert!(!binding_ids(HwlocType::Package).is_empty());
    }

    #[test]
    fn family_variable_for_the_binding() {
        use crate::config::Config;
        use gex_env::{EnvReader, MapEnv};
        let ids = binding_ids(HwlocType::Machine);
        let env = MapEnv::from([
            ("GASNET_OFI_DEVICE_TYPE", "Machine"),
            ("GASNET_OFI_DEVICE_0", "lo"),
            ("GASNET_OFI_DEVICE", "eth0"),
        ]);
        let cfg = Config::from_env(&EnvReader::quiet(&env)).unwrap();
        assert_eq!(
            cfg.device.requested(&ids),
            Some(("GASNET_OFI_DEVICE_0".into(), "lo".into()))
        );
        assert_eq!(
            cfg.device.requested(&[7]),
            Some(("GASNET_OFI_DEVICE".into(), "eth0".into()))
        );
    }
}
