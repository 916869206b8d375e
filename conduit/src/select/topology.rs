//! The `GASNET_OFI_DEVICE_<ids>` family: per-process device choice from the
//! process's CPU binding.
//!
//! `GASNET_OFI_DEVICE_TYPE` names an hwloc object type (default `Socket`,
//! i.e. Package; `None` turns the family off). The objects of that type whose
//! CPUs intersect the process's binding give the ids, joined by `_` in
//! logical-index order: a process bound inside NUMA node 1 with
//! `GASNET_OFI_DEVICE_TYPE=Node` reads `GASNET_OFI_DEVICE_1`; one spanning
//! packages 0 and 1 reads `GASNET_OFI_DEVICE_0_1`. When that variable is
//! unset, `GASNET_OFI_DEVICE` applies.

use gex_env::{EnvError, EnvReader};
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

/// Accepted values of `GASNET_OFI_DEVICE_TYPE`.
pub const DEVICE_TYPES: &str =
    "None, Machine, Package (or Socket), NUMANode (or Node), Group, L3Cache, L2Cache, L1Cache, Core or PU";

/// Map a `GASNET_OFI_DEVICE_TYPE` value to an hwloc type (`Ok(None)` for
/// `None`).
pub fn parse_device_type(value: &str) -> Result<Option<ObjectType>, EnvError> {
    let t = match value.trim().to_ascii_lowercase().as_str() {
        "none" => return Ok(None),
        "machine" => ObjectType::Machine,
        "package" | "socket" => ObjectType::Package,
        "numanode" | "node" | "numa" => ObjectType::NUMANode,
        "group" => ObjectType::Group,
        "l3cache" | "l3" => ObjectType::L3Cache,
        "l2cache" | "l2" => ObjectType::L2Cache,
        "l1cache" | "l1" => ObjectType::L1Cache,
        "core" => ObjectType::Core,
        "pu" => ObjectType::PU,
        _ => {
            return Err(EnvError::new(
                "GASNET_OFI_DEVICE_TYPE",
                value,
                format!("an hwloc object type: {DEVICE_TYPES}"),
            ))
        }
    };
    Ok(Some(t))
}

/// The `_<ids>` suffix for this process: logical indices of the `kind`
/// objects its CPU binding touches. `None` when hwloc cannot tell.
pub fn binding_ids(kind: ObjectType) -> Option<String> {
    let topo = Topology::new().ok()?;
    let bound = topo.cpu_binding(CpuBindingFlags::PROCESS).ok()?;
    let mut ids: Vec<usize> = topo
        .objects_with_type(kind)
        .filter(|o| o.cpuset().is_some_and(|c| c.intersects(&bound)))
        .map(|o| o.logical_index())
        .collect();
    ids.sort_unstable();
    if ids.is_empty() {
        return None;
    }
    Some(
        ids.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("_"),
    )
}

/// The device the user asked for, as `(variable, value)`: the family member
/// for this process's binding when set, else `GASNET_OFI_DEVICE`, else
/// `None`. `ids` is [`binding_ids`]' answer (a parameter so tests can fix it).
pub fn requested_device(
    env: &EnvReader<'_>,
    device_type: Option<ObjectType>,
    ids: Option<String>,
) -> Option<(String, String)> {
    if device_type.is_some() {
        if let Some(ids) = ids {
            let var = format!("GASNET_OFI_DEVICE_{ids}");
            if let Some(v) = env.peek(&var) {
                env.record(&var, &v, false);
                return Some((var, v));
            }
        }
    }
    env.opt_string("GASNET_OFI_DEVICE")
        .map(|v| ("GASNET_OFI_DEVICE".to_string(), v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    #[test]
    fn device_type_names() {
        assert_eq!(
            parse_device_type("Socket").unwrap(),
            Some(ObjectType::Package)
        );
        assert_eq!(
            parse_device_type("node").unwrap(),
            Some(ObjectType::NUMANode)
        );
        assert_eq!(parse_device_type("None").unwrap(), None);
        assert_eq!(
            parse_device_type("Rack").unwrap_err().to_string(),
            format!("GASNET_OFI_DEVICE_TYPE=\"Rack\" is not accepted: expected an hwloc object type: {DEVICE_TYPES}")
        );
    }

    #[test]
    fn family_member_wins_then_plain_variable() {
        let env = MapEnv::from([
            ("GASNET_OFI_DEVICE_1", "cxi1"),
            ("GASNET_OFI_DEVICE", "cxi0"),
        ]);
        let r = EnvReader::quiet(&env);
        let t = Some(ObjectType::NUMANode);
        assert_eq!(
            requested_device(&r, t, Some("1".into())),
            Some(("GASNET_OFI_DEVICE_1".into(), "cxi1".into()))
        );
        assert_eq!(
            requested_device(&r, t, Some("0_1".into())),
            Some(("GASNET_OFI_DEVICE".into(), "cxi0".into()))
        );
        assert_eq!(
            requested_device(&r, None, Some("1".into())),
            Some(("GASNET_OFI_DEVICE".into(), "cxi0".into()))
        );
        let empty = MapEnv::new();
        assert_eq!(requested_device(&EnvReader::quiet(&empty), t, None), None);
    }

    #[test]
    fn this_process_is_bound_somewhere() {
        // Every process is bound to at least one PU of the machine.
        let ids = binding_ids(ObjectType::Machine).expect("hwloc reads the topology");
        assert_eq!(ids, "0");
        assert!(binding_ids(ObjectType::PU).is_some());
    }
}
