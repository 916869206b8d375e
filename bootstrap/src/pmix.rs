//! The bootstrap of ranks started by a PMIx launcher: Open MPI's `mpirun`
//! (which hosts a PMIx server), Slurm's `srun --mpi=pmix`, PRRTE's `prun`,
//! or `gasnetrun-ofi -spawner=pmi` / `-spawner=mpi`, which run one of these.
//!
//! The collectives map onto PMIx's key-value store:
//! * allgather: put my blob under `gex.ag.<seq>`, commit, fence with data
//!   collection, get every rank's blob;
//! * barrier: fence without data;
//! * broadcast: the root puts `gex.bc.<seq>`, commit, fence with data
//!   collection, everybody gets the root's value;
//! * host map: an allgather of `PMIX_HOSTNAME` (this machine's host name
//!   when the server does not give it), host indices in order of each
//!   host's lowest rank;
//! * abort: `PMIx_Abort` (the server ends every rank); finalize:
//!   `PMIx_Finalize`.
//!
//! The PMIx client library is bound by hand (a dozen functions): the
//! `pmix-sys` crate needs `PMIX_LIB_DIR`/`PMIX_INCLUDE_DIR` set at build
//! time and a second bindgen. `build.rs` links `libpmix` through
//! `pkg-config pmix` and checks the struct layouts used here against the
//! installed `pmix.h` (`pmix_layout.c`).

use crate::hostmap::HostMap;
use crate::{Bootstrap, BootstrapError};
use gex_env::EnvReader;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

/// Set by a PMIx server in the environment of the processes it starts: the
/// job's namespace.
pub const ENV_PMIX_NAMESPACE: &str = "PMIX_NAMESPACE";
/// Set by a PMIx server: the process's rank.
pub const ENV_PMIX_RANK: &str = "PMIX_RANK";
/// Prefix of the variables (`PMIX_SERVER_URI2`, `..._URI41`, ...) through
/// which a PMIx client finds its server.
pub const ENV_PMIX_SERVER_URI_PREFIX: &str = "PMIX_SERVER_URI";

mod ffi;

/// Tag byte in front of every blob this module puts, so that no value is
/// empty (PMIx servers differ in how they store empty byte objects).
const BLOB_TAG: u8 = 0x47;

/// True when this process was started by a PMIx server (`PMIX_RANK`,
/// `PMIX_NAMESPACE` or a `PMIX_SERVER_URI*` variable is set).
pub fn pmix_present(env: &EnvReader<'_>) -> bool {
    let ns = env.opt_string(ENV_PMIX_NAMESPACE);
    let rank = env.opt_string(ENV_PMIX_RANK);
    ns.is_some()
        || rank.is_some()
        || !env
            .source()
            .vars_with_prefix(ENV_PMIX_SERVER_URI_PREFIX)
            .is_empty()
}

fn status_text(rc: ffi::pmix_status_t) -> String {
    // SAFETY: PMIx_Error_string returns a pointer to a static string (or
    // NULL) for any status value.
    let p = unsafe { ffi::PMIx_Error_string(rc) };
    if p.is_null() {
        return format!("status {rc}");
    }
    // SAFETY: non-NULL results are NUL-terminated static strings.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    format!("{s} ({rc})")
}

fn check(what: &str, rc: ffi::pmix_status_t) -> Result<(), BootstrapError> {
    if rc == ffi::PMIX_SUCCESS {
        Ok(())
    } else {
        Err(BootstrapError::Pmix(format!(
            "{what} failed: {}",
            status_text(rc)
        )))
    }
}

/// A value read with `PMIx_Get`, copied out of the library's memory.
#[derive(Debug, PartialEq, Eq)]
enum Value {
    U32(u32),
    Str(String),
    Bytes(Vec<u8>),
    Other(u16),
}

struct State {
    seq: u64,
    finalized: bool,
}

/// [`Bootstrap`] over a PMIx server.
pub struct PmixBootstrap {
    me: ffi::pmix_proc_t,
    rank: usize,
    size: usize,
    hosts: HostMap,
    state: Mutex<State>,
}

impl std::fmt::Debug for PmixBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmixBootstrap")
            .field("namespace", &self.namespace())
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

fn proc_of(me: &ffi::pmix_proc_t, rank: ffi::pmix_rank_t) -> ffi::pmix_proc_t {
    ffi::pmix_proc_t {
        nspace: me.nspace,
        rank,
    }
}

fn cstring(s: &str) -> Result<CString, BootstrapError> {
    CString::new(s).map_err(|_| BootstrapError::InvalidArgument(format!("NUL in PMIx key {s:?}")))
}

/// `PMIx_Get(proc, key)`; `None` when the server has no such key.
fn get(proc_: &ffi::pmix_proc_t, key: &CStr) -> Result<Option<Value>, BootstrapError> {
    let mut val: *mut ffi::pmix_value_t = std::ptr::null_mut();
    // SAFETY: proc_ and key are valid for the call; no info array; `val`
    // receives a value allocated by the library (or stays NULL).
    let rc = unsafe { ffi::PMIx_Get(proc_, key.as_ptr(), std::ptr::null(), 0, &mut val) };
    if rc == ffi::PMIX_ERR_NOT_FOUND {
        return Ok(None);
    }
    check(&format!("PMIx_Get({})", key.to_string_lossy()), rc)?;
    if val.is_null() {
        return Ok(None);
    }
    // SAFETY: on success `val` points to a pmix_value_t whose layout is
    // checked at build time; the union member read matches the type tag.
    let out = unsafe {
        let v = &*val;
        let base = v.data.as_ptr().cast::<u8>();
        match v.type_ {
            ffi::PMIX_UINT32 | ffi::PMIX_PROC_RANK => Value::U32(base.cast::<u32>().read()),
            ffi::PMIX_STRING => {
                let p = base.cast::<*const c_char>().read();
                Value::Str(if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                })
            }
            ffi::PMIX_BYTE_OBJECT => {
                let p = base.cast::<*const u8>().read();
                let n = base.add(8).cast::<usize>().read();
                Value::Bytes(if p.is_null() || n == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(p, n).to_vec()
                })
            }
            t => Value::Other(t),
        }
    };
    // SAFETY: PMIX_VALUE_RELEASE: destruct the contents, then free the
    // malloc'ed struct the library handed us; not used afterwards.
    unsafe {
        ffi::PMIx_Value_destruct(val);
        libc::free(val.cast::<c_void>());
    }
    Ok(Some(out))
}

/// `PMIx_Put(PMIX_GLOBAL, key, bytes)`; the library copies the value.
fn put_bytes(key: &CStr, data: &[u8]) -> Result<(), BootstrapError> {
    let mut blob = Vec::with_capacity(data.len() + 1);
    blob.push(BLOB_TAG);
    blob.extend_from_slice(data);
    let mut v = ffi::pmix_value_t {
        type_: ffi::PMIX_BYTE_OBJECT,
        _pad: [0; 6],
        data: [blob.as_ptr() as u64, blob.len() as u64, 0],
    };
    // SAFETY: `v` is a byte-object value pointing at `blob`, both alive for
    // the call; PMIx_Put copies the data before returning.
    let rc = unsafe { ffi::PMIx_Put(ffi::PMIX_GLOBAL, key.as_ptr(), &mut v) };
    check("PMIx_Put", rc)
}

fn commit() -> Result<(), BootstrapError> {
    // SAFETY: no arguments; valid between PMIx_Init and PMIx_Finalize.
    check("PMIx_Commit", unsafe { ffi::PMIx_Commit() })
}

/// `PMIx_Fence` over the whole namespace, with or without data collection.
fn fence(collect: bool) -> Result<(), BootstrapError> {
    if !collect {
        // SAFETY: NULL/0 procs means every process of our namespace; no info.
        let rc = unsafe { ffi::PMIx_Fence(std::ptr::null(), 0, std::ptr::null(), 0) };
        return check("PMIx_Fence", rc);
    }
    let mut info = ffi::pmix_info_t {
        key: [0; 512],
        flags: 0,
        _pad: 0,
        value: ffi::pmix_value_t {
            type_: ffi::PMIX_BOOL,
            _pad: [0; 6],
            data: [0; 3],
        },
    };
    for (d, s) in info.key.iter_mut().zip(ffi::PMIX_COLLECT_DATA.to_bytes()) {
        *d = *s as c_char;
    }
    // The union member `flag` (a C bool) is the union's first byte.
    // SAFETY: the union is 24 bytes at `data`; byte 0 is in bounds.
    unsafe { info.value.data.as_mut_ptr().cast::<u8>().write(1) };
    // SAFETY: `info` lives across the call; NULL/0 procs: whole namespace.
    let rc = unsafe { ffi::PMIx_Fence(std::ptr::null(), 0, &info, 1) };
    check("PMIx_Fence(collect)", rc)
}

fn unwrap_blob(v: Option<Value>, what: &str) -> Result<Vec<u8>, BootstrapError> {
    match v {
        Some(Value::Bytes(b)) if b.first() == Some(&BLOB_TAG) => Ok(b[1..].to_vec()),
        other => Err(BootstrapError::Protocol(format!(
            "PMIx value {what} is {other:?}, expected a tagged byte object"
        ))),
    }
}

impl PmixBootstrap {
    /// Connect to the PMIx server named in the environment (`PMIx_Init`),
    /// read rank and job size, and build the host map (one allgather).
    pub fn init() -> Result<PmixBootstrap, BootstrapError> {
        let mut me = ffi::pmix_proc_t {
            nspace: [0; 256],
            rank: 0,
        };
        // SAFETY: `me` is written by the call; no info array.
        let rc = unsafe { ffi::PMIx_Init(&mut me, std::ptr::null_mut(), 0) };
        check(
            "PMIx_Init (is this process started by a PMIx launcher such as \
             Open MPI's mpirun or srun --mpi=pmix?)",
            rc,
        )?;
        match Self::after_init(me) {
            Ok(b) => Ok(b),
            Err(e) => {
                // SAFETY: balanced with the successful PMIx_Init above.
                unsafe { ffi::PMIx_Finalize(std::ptr::null(), 0) };
                Err(e)
            }
        }
    }

    fn after_init(me: ffi::pmix_proc_t) -> Result<PmixBootstrap, BootstrapError> {
        let job = proc_of(&me, ffi::PMIX_RANK_WILDCARD);
        let size = match get(&job, ffi::PMIX_JOB_SIZE)? {
            Some(Value::U32(n)) if n > 0 => n as usize,
            other => {
                return Err(BootstrapError::Pmix(format!(
                    "the PMIx server gave no usable job size (PMIX_JOB_SIZE = {other:?})"
                )))
            }
        };
        let rank = me.rank as usize;
        if rank >= size {
            return Err(BootstrapError::Pmix(format!(
                "PMIx rank {rank} outside a job of {size}"
            )));
        }
        let host = match get(&me, ffi::PMIX_HOSTNAME) {
            Ok(Some(Value::Str(h))) if !h.is_empty() => h,
            _ => crate::this_host(),
        };
        let mut b = PmixBootstrap {
            me,
            rank,
            size,
            hosts: HostMap::single(&host),
            state: Mutex::new(State {
                seq: 0,
                finalized: false,
            }),
        };
        let names = b.allgather(host.as_bytes())?;
        let names: Vec<String> = names
            .into_iter()
            .map(|n| String::from_utf8_lossy(&n).into_owned())
            .collect();
        b.hosts = HostMap::new(rank, &host_entries(&names))?;
        Ok(b)
    }

    /// The PMIx namespace of the job.
    pub fn namespace(&self) -> String {
        let bytes: Vec<u8> = self
            .me
            .nspace
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Run `f` with the next sequence number, serialized with every other
    /// collective of this process.
    fn collective<T>(
        &self,
        f: impl FnOnce(u64) -> Result<T, BootstrapError>,
    ) -> Result<T, BootstrapError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.finalized {
            return Err(BootstrapError::InvalidArgument(
                "bootstrap collective after finalize".into(),
            ));
        }
        st.seq += 1;
        f(st.seq)
    }
}

/// `(host index, name)` per rank from each rank's host name: hosts are
/// numbered in order of their lowest rank.
pub(crate) fn host_entries(names: &[String]) -> Vec<(usize, String)> {
    let mut seen: Vec<&str> = Vec::new();
    names
        .iter()
        .map(|n| {
            let h = match seen.iter().position(|s| *s == n.as_str()) {
                Some(h) => h,
                None => {
                    seen.push(n);
                    seen.len() - 1
                }
            };
            (h, n.clone())
        })
        .collect()
}

impl Bootstrap for PmixBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn hosts(&self) -> &HostMap {
        &self.hosts
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        self.collective(|seq| {
            let key = cstring(&format!("gex.ag.{seq}"))?;
            put_bytes(&key, mine)?;
            commit()?;
            fence(true)?;
            (0..self.size)
                .map(|r| {
                    if r == self.rank {
                        return Ok(mine.to_vec());
                    }
                    let p = proc_of(&self.me, r as u32);
                    unwrap_blob(get(&p, &key)?, &format!("gex.ag.{seq} of rank {r}"))
                })
                .collect()
        })
    }
    fn barrier(&self) -> Result<(), BootstrapError> {
        self.collective(|_| fence(false))
    }
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        if root >= self.size {
            return Err(BootstrapError::InvalidArgument(format!(
                "broadcast root {root} is not a rank of a job of {}",
                self.size
            )));
        }
        self.collective(|seq| {
            let key = cstring(&format!("gex.bc.{seq}"))?;
            if self.rank == root {
                put_bytes(&key, data)?;
                commit()?;
            }
            fence(true)?;
            if self.rank == root {
                return Ok(data.to_vec());
            }
            let p = proc_of(&self.me, root as u32);
            unwrap_blob(get(&p, &key)?, &format!("gex.bc.{seq} of rank {root}"))
        })
    }
    fn abort(&self, code: i32) -> ! {
        let msg = c"gasnet-ofi: a rank called abort";
        // SAFETY: NULL/0 procs: abort every process of our namespace; the
        // message is a static C string.
        unsafe { ffi::PMIx_Abort(code as c_int, msg.as_ptr(), std::ptr::null_mut(), 0) };
        std::process::exit(code)
    }
    fn name(&self) -> &'static str {
        "pmix"
    }
    fn finalize(&self, _code: i32) -> Result<(), BootstrapError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.finalized {
            return Ok(());
        }
        st.finalized = true;
        // SAFETY: balanced with PMIx_Init; no info array. The exit code
        // reaches the launcher through the process's exit status.
        check("PMIx_Finalize", unsafe {
            ffi::PMIx_Finalize(std::ptr::null(), 0)
        })
    }
}

impl Drop for PmixBootstrap {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if !st.finalized {
            st.finalized = true;
            // SAFETY: balanced with PMIx_Init.
            unsafe { ffi::PMIx_Finalize(std::ptr::null(), 0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    #[test]
    fn hosts_numbered_by_lowest_rank() {
        let names: Vec<String> = ["b", "b", "a", "a", "c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = host_entries(&names);
        let idx: Vec<usize> = e.iter().map(|x| x.0).collect();
        assert_eq!(idx, vec![0, 0, 1, 1, 2]);
        let m = HostMap::new(3, &e).unwrap();
        assert_eq!(m.nhosts(), 3);
        assert_eq!(m.local_ranks(), &[2, 3]);
    }

    #[test]
    fn detection() {
        let r = |e: &MapEnv| pmix_present(&EnvReader::quiet(e));
        assert!(!r(&MapEnv::new()));
        assert!(r(&MapEnv::from([(ENV_PMIX_RANK, "0")])));
        assert!(r(&MapEnv::from([(ENV_PMIX_NAMESPACE, "x")])));
        assert!(r(&MapEnv::from([("PMIX_SERVER_URI41", "x")])));
    }

    #[test]
    fn blobs_are_tagged() {
        assert_eq!(
            unwrap_blob(Some(Value::Bytes(vec![BLOB_TAG, 1])), "k").unwrap(),
            vec![1]
        );
        assert!(unwrap_blob(Some(Value::Bytes(vec![])), "k").is_err());
        assert!(unwrap_blob(None, "k").is_err());
        assert!(unwrap_blob(Some(Value::U32(1)), "k").is_err());
    }
}
