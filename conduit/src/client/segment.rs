//! The registered segment: one shared mapping of a file under `/dev/shm`
//! per rank (so later work can cross-map the segments of ranks on one
//! host). The file is unlinked as soon as it is mapped, so nothing is left
//! behind even when the job is killed.

use memmap2::MmapMut;
use std::fs::OpenOptions;

/// This rank's segment memory.
pub(crate) struct Segment {
    map: MmapMut,
}

/// What every rank publishes about its segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentInfo {
    /// Address of the segment in its owner's address space.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Remote key.
    pub key: u64,
}

impl SegmentInfo {
    pub(crate) fn to_bytes(self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.base.to_le_bytes());
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b[16..].copy_from_slice(&self.key.to_le_bytes());
        b
    }
    pub(crate) fn from_bytes(b: &[u8]) -> Option<SegmentInfo> {
        if b.len() != 24 {
            return None;
        }
        let w = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Some(SegmentInfo {
            base: w(0),
            size: w(8),
            key: w(16),
        })
    }
}

impl Segment {
    /// Map `size` bytes (a multiple of the page size, checked by the caller).
    pub fn create(size: usize, rank: usize) -> std::io::Result<Segment> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::path::Path::new("/dev/shm");
        let map = if dir.is_dir() {
            let path = dir.join(format!("gex-seg-{}-{rank}-{nanos:08x}", std::process::id()));
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)?;
            let mapped = file.set_len(size as u64).and_then(|_| {
                // SAFETY: the file was just created by this process with a
                // unique name and is unlinked below; nobody else truncates it.
                unsafe { MmapMut::map_mut(&file) }
            });
            let _ = std::fs::remove_file(&path);
            mapped?
        } else {
            MmapMut::map_anon(size)?
        };
        Ok(Segment { map })
    }

    pub fn ptr(&mut self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }
}
