//! Provider-device selection: `GASNET_OFI_DEVICE`, the topology-aware family
//! `GASNET_OFI_DEVICE_<ids>` keyed by `GASNET_OFI_DEVICE_TYPE`, and the
//! device listing switches `GASNET_OFI_LIST_DEVICES{,_NODES}`.

use super::node_list::{NodeList, NODE_LIST_ACCEPTED};
use super::ConfigError;
use gex_env::{EnvError, EnvReader};
use std::collections::BTreeMap;
use std::fmt;

/// `GASNET_OFI_DEVICE`.
pub const DEVICE: &str = "GASNET_OFI_DEVICE";
/// `GASNET_OFI_DEVICE_TYPE`.
pub const DEVICE_TYPE: &str = "GASNET_OFI_DEVICE_TYPE";
/// Prefix of the `GASNET_OFI_DEVICE_<ids>` family.
pub const DEVICE_FAMILY_PREFIX: &str = "GASNET_OFI_DEVICE_";
/// `GASNET_OFI_LIST_DEVICES`.
pub const LIST_DEVICES: &str = "GASNET_OFI_LIST_DEVICES";
/// `GASNET_OFI_LIST_DEVICES_NODES`.
pub const LIST_DEVICES_NODES: &str = "GASNET_OFI_LIST_DEVICES_NODES";

/// Default of `GASNET_OFI_DEVICE_TYPE`.
pub const DEVICE_TYPE_DEFAULT: &str = "Socket";

/// What `GASNET_OFI_DEVICE_TYPE` accepts, for error messages.
pub const DEVICE_TYPE_ACCEPTED: &str = "an hwloc object type (Machine, Package or Socket, \
NUMANode or Node, Group, L3Cache, L2Cache, Core or PU; any case), or None";

/// The hwloc object types by which per-process device variables may be keyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HwlocType {
    /// The whole machine.
    Machine,
    /// A processor package (hwloc's old name: Socket).
    Package,
    /// A NUMA node (also spelled Node).
    NumaNode,
    /// An hwloc Group object.
    Group,
    /// A level-3 cache.
    L3Cache,
    /// A level-2 cache.
    L2Cache,
    /// A core.
    Core,
    /// A processing unit (hardware thread).
    Pu,
}

impl HwlocType {
    /// Every type, in hwloc's order from the largest to the smallest.
    pub const ALL: [HwlocType; 8] = [
        HwlocType::Machine,
        HwlocType::Package,
        HwlocType::NumaNode,
        HwlocType::Group,
        HwlocType::L3Cache,
        HwlocType::L2Cache,
        HwlocType::Core,
        HwlocType::Pu,
    ];

    /// hwloc's canonical name of the type (`hwloc_obj_type_string`).
    pub fn hwloc_name(self) -> &'static str {
        match self {
            HwlocType::Machine => "Machine",
            HwlocType::Package => "Package",
            HwlocType::NumaNode => "NUMANode",
            HwlocType::Group => "Group",
            HwlocType::L3Cache => "L3Cache",
            HwlocType::L2Cache => "L2Cache",
            HwlocType::Core => "Core",
            HwlocType::Pu => "PU",
        }
    }

    /// Parse a type name, case-insensitively; `Socket` and `Node` are accepted
    /// as the older names of `Package` and `NUMANode`.
    pub fn parse(name: &str) -> Option<HwlocType> {
        let n = name.trim().to_ascii_lowercase();
        match n.as_str() {
            "socket" => return Some(HwlocType::Package),
            "node" => return Some(HwlocType::NumaNode),
            _ => {}
        }
        HwlocType::ALL
            .into_iter()
            .find(|t| t.hwloc_name().eq_ignore_ascii_case(&n))
    }
}

impl fmt::Display for HwlocType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hwloc_name())
    }
}

/// The value of `GASNET_OFI_DEVICE_TYPE` when it is not `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceType {
    /// The hwloc type.
    pub kind: HwlocType,
    /// The name as given (or the default `Socket`), trimmed.
    pub name: String,
}

impl DeviceType {
    /// Parse a `GASNET_OFI_DEVICE_TYPE` value: `Ok(None)` for `None` (any
    /// case), `Ok(Some(_))` for a valid hwloc type name, `Err(())` otherwise.
    #[allow(clippy::result_unit_err)]
    pub fn parse(text: &str) -> Result<Option<DeviceType>, ()> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        match HwlocType::parse(t) {
            Some(kind) => Ok(Some(DeviceType {
                kind,
                name: t.to_string(),
            })),
            None => Err(()),
        }
    }
}

/// Device-selection settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceConfig {
    /// `GASNET_OFI_DEVICE`: the device (domain) name to use, e.g. `cxi0`;
    /// `None` means the first device the provider lists.
    pub device: Option<String>,
    /// `GASNET_OFI_DEVICE_TYPE`: the hwloc object type keying the
    /// `GASNET_OFI_DEVICE_<ids>` family; `None` when set to `None`.
    pub device_type: Option<DeviceType>,
    /// The `GASNET_OFI_DEVICE_<ids>` variables that are set, keyed by their
    /// `<ids>` suffix (logical indices joined by `_`, e.g. `0` or `0_1`).
    /// Read only when `device_type` is not `None`.
    pub device_family: BTreeMap<String, String>,
    /// `GASNET_OFI_LIST_DEVICES`: print the supportable provider/device pairs.
    pub list_devices: bool,
    /// `GASNET_OFI_LIST_DEVICES_NODES`: which nodes print them.
    pub list_devices_nodes: NodeList,
}

impl DeviceConfig {
    /// Read the device variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let device = r.opt_string(DEVICE);
        let type_text = r.string(DEVICE_TYPE, DEVICE_TYPE_DEFAULT);
        let device_type = DeviceType::parse(&type_text)
            .map_err(|()| EnvError::new(DEVICE_TYPE, &type_text, DEVICE_TYPE_ACCEPTED))?;
        let mut device_family = BTreeMap::new();
        if device_type.is_some() {
            for (name, value) in r.source().vars_with_prefix(DEVICE_FAMILY_PREFIX) {
                let Some(ids) = name.strip_prefix(DEVICE_FAMILY_PREFIX) else {
                    continue;
                };
                if is_ids_suffix(ids) && !value.is_empty() {
                    r.record(&name, &value, false);
                    device_family.insert(ids.to_string(), value);
                }
            }
        }
        let list_devices = r.bool(LIST_DEVICES, false)?;
        let list_devices_nodes = match r.peek(LIST_DEVICES_NODES) {
            None => {
                r.record(LIST_DEVICES_NODES, "*", true);
                NodeList::All
            }
            Some(v) => {
                r.record(LIST_DEVICES_NODES, &v, false);
                NodeList::parse(&v)
                    .ok_or_else(|| EnvError::new(LIST_DEVICES_NODES, &v, NODE_LIST_ACCEPTED))?
            }
        };
        Ok(DeviceConfig {
            device,
            device_type,
            device_family,
            list_devices,
            list_devices_nodes,
        })
    }

    /// The device for a process whose cpuset intersects the objects of type
    /// `device_type` with these logical indices: `GASNET_OFI_DEVICE_<ids>`
    /// (indices joined by `_`) when set, otherwise `GASNET_OFI_DEVICE`.
    pub fn device_for(&self, ids: &[usize]) -> Option<&str> {
        if self.device_type.is_some() && !ids.is_empty() {
            let key = ids
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join("_");
            if let Some(d) = self.device_family.get(&key) {
                return Some(d);
            }
        }
        self.device.as_deref()
    }

    /// Like [`DeviceConfig::device_for`], also naming the variable that
    /// supplied the device (for error messages).
    pub fn requested(&self, ids: &[usize]) -> Option<(String, String)> {
        let value = self.device_for(ids)?.to_string();
        let key = ids
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("_");
        let var = if self.device_type.is_some() && self.device_family.contains_key(&key) {
            format!("{DEVICE_FAMILY_PREFIX}{key}")
        } else {
            DEVICE.to_string()
        };
        Some((var, value))
    }

    /// Whether node `rank` prints the device list.
    pub fn lists_devices_on(&self, rank: usize) -> bool {
        self.list_devices && self.list_devices_nodes.contains(rank)
    }
}

/// `0`, `12`, `0_1`: decimal indices joined by single underscores.
fn is_ids_suffix(s: &str) -> bool {
    !s.is_empty()
        && s.split('_')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<DeviceConfig, ConfigError> {
        DeviceConfig::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn defaults() {
        let d = read(&MapEnv::new()).unwrap();
        assert_eq!(d.device, None);
        let t = d.device_type.clone().unwrap();
        assert_eq!((t.kind, t.name.as_str()), (HwlocType::Package, "Socket"));
        assert!(!d.list_devices);
        assert!(d.list_devices_nodes.is_all());
        assert_eq!(d.device_for(&[0]), None);
    }

    #[test]
    fn device_type_names_any_case() {
        for (text, kind) in [
            ("machine", HwlocType::Machine),
            ("PACKAGE", HwlocType::Package),
            ("socket", HwlocType::Package),
            ("NUMANode", HwlocType::NumaNode),
            ("node", HwlocType::NumaNode),
            ("Group", HwlocType::Group),
            ("l3cache", HwlocType::L3Cache),
            ("L2Cache", HwlocType::L2Cache),
            ("core", HwlocType::Core),
            ("pu", HwlocType::Pu),
        ] {
            let env = MapEnv::from([("GASNET_OFI_DEVICE_TYPE", text)]);
            let d = read(&env).unwrap();
            assert_eq!(d.device_type.unwrap().kind, kind, "{text}");
        }
        let env = MapEnv::from([("GASNET_OFI_DEVICE_TYPE", "NONE")]);
        assert_eq!(read(&env).unwrap().device_type, None);
    }

    #[test]
    fn device_type_bad() {
        let env = MapEnv::from([("GASNET_OFI_DEVICE_TYPE", "L1Cache")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_DEVICE_TYPE=\"L1Cache\" is not accepted: expected an hwloc object type \
(Machine, Package or Socket, NUMANode or Node, Group, L3Cache, L2Cache, Core or PU; any case), or None"
        );
    }

    #[test]
    fn family_picks_per_process_device() {
        let env = MapEnv::from([
            ("GASNET_OFI_DEVICE", "cxi0"),
            ("GASNET_OFI_DEVICE_TYPE", "Node"),
            ("GASNET_OFI_DEVICE_0", "cxi2"),
            ("GASNET_OFI_DEVICE_1", "cxi1"),
            ("GASNET_OFI_DEVICE_0_1", "cxi3"),
            ("GASNET_OFI_DEVICE_0_", "ignored"),
        ]);
        let r = EnvReader::quiet(&env);
        let d = DeviceConfig::from_env(&r).unwrap();
        assert_eq!(d.device_family.len(), 3);
        assert_eq!(d.device_for(&[0]), Some("cxi2"));
        assert_eq!(d.device_for(&[1]), Some("cxi1"));
        assert_eq!(d.device_for(&[0, 1]), Some("cxi3"));
        assert_eq!(d.device_for(&[2]), Some("cxi0"));
        assert_eq!(d.device_for(&[]), Some("cxi0"));
        assert!(r.reads().iter().any(|x| x.name == "GASNET_OFI_DEVICE_0_1"));
    }

    #[test]
    fn family_off_with_type_none() {
        let env = MapEnv::from([
            ("GASNET_OFI_DEVICE_TYPE", "None"),
            ("GASNET_OFI_DEVICE_0", "cxi2"),
        ]);
        let d = read(&env).unwrap();
        assert!(d.device_family.is_empty());
        assert_eq!(d.device_for(&[0]), None);
    }

    #[test]
    fn list_devices_nodes_good_and_bad() {
        let env = MapEnv::from([
            ("GASNET_OFI_LIST_DEVICES", "1"),
            ("GASNET_OFI_LIST_DEVICES_NODES", "0,2-4,6"),
        ]);
        let d = read(&env).unwrap();
        assert!(d.lists_devices_on(3) && !d.lists_devices_on(5));
        let env = MapEnv::from([("GASNET_OFI_LIST_DEVICES_NODES", "*")]);
        assert!(read(&env).unwrap().list_devices_nodes.is_all());
        let env = MapEnv::from([("GASNET_OFI_LIST_DEVICES_NODES", "4-2")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_LIST_DEVICES_NODES=\"4-2\" is not accepted: expected a comma-separated \
list of node numbers and ranges such as 0,2-4,6, or * for all nodes"
        );
    }

    #[test]
    fn list_devices_bad_bool() {
        let env = MapEnv::from([("GASNET_OFI_LIST_DEVICES", "please")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_LIST_DEVICES=\"please\" is not accepted: expected a boolean: 1/0, yes/no, y/n, true/false or on/off"
        );
    }
}
