//! Per-packet delay records spilled to a temporary file while a run makes them, and
//! read back link by link by the writers that need every packet (`delay.csv`, the
//! link-sharing quality, the reproductions): a run's memory does not grow with its
//! packets.
//!
//! [`Spill`] is the engine's [`RecordSink`]: it packs each record into 28 bytes (class,
//! flow and length as `u32`, arrival and departure as `u64` ns, little-endian) in a
//! buffer per link, and writes a link's buffer to the file as one block when it is full.
//! The file is unnamed (`tempfile`): it lives in the output directory, takes no name
//! there, and disappears when the last reader is dropped, or with the process. Reading
//! a link's records visits its blocks in order, so a link's records come back in order
//! of departure, at the cost of one sequential pass over that link's part of the file.
//!
//! Memory: one buffer per link, [`BUFFER_BYTES`] in all at most (at least
//! [`MIN_BLOCK_RECORDS`] records per link), and the list of blocks.

use std::fmt;
use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::Path;
use std::sync::{Arc, Mutex};

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::Instant;
use linkshare_sim::config::{FlowId, LinkId};
use linkshare_sim::records::{RecordSink, RecordStore};
use linkshare_sim::result::DelayRecord;

use crate::WriteError;

/// Bytes of one record in the file.
const RECORD: usize = 28;
/// The buffers of all links together hold at most this many bytes.
pub const BUFFER_BYTES: usize = 8 << 20;
/// Records per block at least, whatever the number of links.
pub const MIN_BLOCK_RECORDS: usize = 64;
/// Records per block at most.
const MAX_BLOCK_RECORDS: usize = 4096;

/// A block of one link's records in the file.
#[derive(Clone, Copy, Debug)]
struct Block {
    link: u32,
    offset: u64,
    records: u32,
}

/// The first failure to write or read the file, kept to report when the records are read.
#[derive(Clone, Debug)]
struct Failure {
    kind: io::ErrorKind,
    message: String,
}

impl Failure {
    fn of(e: &io::Error) -> Failure {
        Failure {
            kind: e.kind(),
            message: format!("cannot keep the per-packet delay records in a temporary file: {e}"),
        }
    }

    fn error(&self) -> io::Error {
        io::Error::new(self.kind, self.message.clone())
    }
}

/// The records of a run on their way to a temporary file (see the [module docs](self)).
pub struct Spill {
    file: File,
    buffers: Vec<Vec<u8>>,
    block_records: usize,
    blocks: Vec<Block>,
    offset: u64,
    failure: Option<Failure>,
}

impl fmt::Debug for Spill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spill")
            .field("blocks", &self.blocks.len())
            .field("bytes", &self.offset)
            .field("failure", &self.failure)
            .finish_non_exhaustive()
    }
}

/// A sink for the records of a run of `links` links, spilling them to an unnamed file
/// in `dir` (created if missing, as the run's output directory will be).
pub fn records_in(dir: &Path, links: usize) -> Result<Box<dyn RecordSink>, WriteError> {
    crate::create_dir(dir)?;
    Ok(Box::new(Spill::in_dir(dir, links)?))
}

impl Spill {
    /// A spill for the records of `links` links, in an unnamed file in `dir` (which must
    /// exist).
    pub fn in_dir(dir: &Path, links: usize) -> Result<Spill, WriteError> {
        let file = tempfile::tempfile_in(dir).map_err(|error| WriteError {
            what: format!(
                "cannot create a temporary file for the delay records in {}",
                dir.display()
            ),
            error,
        })?;
        let block_records =
            (BUFFER_BYTES / RECORD / links.max(1)).clamp(MIN_BLOCK_RECORDS, MAX_BLOCK_RECORDS);
        Ok(Spill {
            file,
            buffers: vec![Vec::new(); links],
            block_records,
            blocks: Vec::new(),
            offset: 0,
            failure: None,
        })
    }

    /// Writes link `l`'s buffer as a block.
    fn flush(&mut self, l: usize) {
        let buf = &mut self.buffers[l];
        if buf.is_empty() {
            return;
        }
        if self.failure.is_none() {
            match self.file.write_all(buf) {
                Ok(()) => {
                    self.blocks.push(Block {
                        link: l as u32,
                        offset: self.offset,
                        records: (buf.len() / RECORD) as u32,
                    });
                    self.offset += buf.len() as u64;
                }
                Err(e) => self.failure = Some(Failure::of(&e)),
            }
        }
        buf.clear();
    }
}

impl RecordSink for Spill {
    #[inline]
    fn record(&mut self, link: LinkId, r: &DelayRecord) {
        let l = link.0 as usize;
        if l >= self.buffers.len() {
            self.buffers.resize(l + 1, Vec::new());
        }
        let buf = &mut self.buffers[l];
        if buf.capacity() == 0 {
            buf.reserve_exact(self.block_records * RECORD);
        }
        buf.extend_from_slice(&r.class.0.to_le_bytes());
        buf.extend_from_slice(&r.flow.0.to_le_bytes());
        buf.extend_from_slice(&r.len.to_le_bytes());
        buf.extend_from_slice(&r.arrival.as_nanos().to_le_bytes());
        buf.extend_from_slice(&r.departure.as_nanos().to_le_bytes());
        if buf.len() >= self.block_records * RECORD {
            self.flush(l);
        }
    }

    fn discard(&mut self) {
        self.buffers = Vec::new();
        self.blocks = Vec::new();
        if let Err(e) = self.file.set_len(0) {
            self.failure.get_or_insert(Failure::of(&e));
        }
    }

    fn finish(mut self: Box<Self>) -> Arc<dyn RecordStore> {
        for l in 0..self.buffers.len() {
            self.flush(l);
        }
        self.buffers = Vec::new();
        Arc::new(SpillStore {
            file: Mutex::new(self.file),
            blocks: self.blocks,
            failure: self.failure,
        })
    }
}

/// The file a [`Spill`] wrote, read back.
struct SpillStore {
    file: Mutex<File>,
    blocks: Vec<Block>,
    failure: Option<Failure>,
}

impl fmt::Debug for SpillStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpillStore")
            .field("blocks", &self.blocks.len())
            .field("failure", &self.failure)
            .finish_non_exhaustive()
    }
}

impl RecordStore for SpillStore {
    fn for_each(&self, link: LinkId, each: &mut dyn FnMut(&DelayRecord)) -> io::Result<()> {
        if let Some(f) = &self.failure {
            return Err(f.error());
        }
        let mut file = self
            .file
            .lock()
            .map_err(|_| io::Error::other("the delay records' file was poisoned"))?;
        let mut buf = Vec::new();
        for b in self.blocks.iter().filter(|b| b.link == link.0) {
            buf.resize(b.records as usize * RECORD, 0);
            file.seek(SeekFrom::Start(b.offset))?;
            file.read_exact(&mut buf)?;
            for chunk in buf.chunks_exact(RECORD) {
                let u32_at =
                    |i: usize| u32::from_le_bytes(chunk[i..i + 4].try_into().unwrap_or_default());
                let u64_at =
                    |i: usize| u64::from_le_bytes(chunk[i..i + 8].try_into().unwrap_or_default());
                each(&DelayRecord {
                    class: ClassId(u32_at(0)),
                    flow: FlowId(u32_at(4)),
                    len: u32_at(8),
                    arrival: Instant(u64_at(12)),
                    departure: Instant(u64_at(20)),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u64) -> DelayRecord {
        DelayRecord {
            class: ClassId((i % 7) as u32),
            flow: FlowId((i % 3) as u32),
            len: 40 + i as u32,
            arrival: Instant(i * 1000),
            departure: Instant(i * 1000 + 5 + u64::MAX / 2),
        }
    }

    /// Records of two links interleaved come back per link, in order, exact; a discarded
    /// spill reads back nothing.
    #[test]
    fn records_come_back_per_link_in_order() {
        let dir = std::env::temp_dir();
        let mut spill = Box::new(Spill::in_dir(&dir, 2).unwrap());
        let n = 3 * MAX_BLOCK_RECORDS as u64 + 17;
        for i in 0..n {
            spill.record(LinkId((i % 2) as u32), &rec(i));
        }
        let store = spill.finish();
        for link in 0..2u64 {
            let mut got = Vec::new();
            store
                .for_each(LinkId(link as u32), &mut |r| got.push(*r))
                .unwrap();
            let want: Vec<DelayRecord> = (0..n).filter(|i| i % 2 == link).map(rec).collect();
            assert_eq!(got, want);
        }
        let mut spill = Box::new(Spill::in_dir(&dir, 1).unwrap());
        for i in 0..10 {
            spill.record(LinkId(0), &rec(i));
        }
        spill.discard();
        let store = spill.finish();
        let mut count = 0;
        store.for_each(LinkId(0), &mut |_| count += 1).unwrap();
        assert_eq!(count, 0);
    }
}
