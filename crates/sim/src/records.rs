//! Per-packet delay records: kept in memory, or handed to a sink as the run makes them.
//!
//! Every packet whose transmission completes on a link makes one [`DelayRecord`]. The
//! exact delay distributions of [`crate::result`] never need them (they are counted as
//! the run goes); the records are for whoever wants every packet: `delay.csv`, the
//! link-sharing quality, the reproductions. A run keeps them
//!
//! * in memory ([`DelayLog::Packets`]) when no sink is given — tests and small runs;
//! * in a [`RecordSink`] given with [`crate::Simulator::record_to`], which receives each
//!   record as it is made and, at the end, turns into a [`RecordStore`] the result reads
//!   them back from ([`DelayLog::Stored`]): the output writers spill them to a file, so
//!   that a run's memory does not grow with its packets.
//!
//! Either way at most [`crate::config::MeasureConfig::max_delay_records`] are kept over
//! all links; past that every link's records are dropped ([`DelayLog::Histogram`]).
//!
//! The engine knows no file: a sink is any implementation of the trait.

use std::fmt;
use std::io;
use std::sync::Arc;

use crate::config::LinkId;
use crate::result::DelayRecord;

/// Where a run's per-packet records go as they are made (see the [module docs](self)).
pub trait RecordSink: Send + fmt::Debug {
    /// The next record of `link`; a link's records come in order of departure.
    fn record(&mut self, link: LinkId, record: &DelayRecord);
    /// The run made more records than it may keep: forget every one so far (no more
    /// come).
    fn discard(&mut self);
    /// The run is over: the records, to read back. A sink that failed to keep them (a
    /// full disk) reports the error when they are read.
    fn finish(self: Box<Self>) -> Arc<dyn RecordStore>;
}

/// The records a [`RecordSink`] kept, read back link by link.
pub trait RecordStore: Send + Sync + fmt::Debug {
    /// Calls `each` with every record of `link`, in order of departure.
    fn for_each(&self, link: LinkId, each: &mut dyn FnMut(&DelayRecord)) -> io::Result<()>;
}

/// The records of one link kept outside the result, in a [`RecordStore`].
#[derive(Clone, Debug)]
pub struct StoredRecords {
    /// The link.
    pub link: LinkId,
    /// How many records it has.
    pub packets: u64,
    /// Where they are.
    pub store: Arc<dyn RecordStore>,
}

impl PartialEq for StoredRecords {
    /// Equal when they hold the same records (read back to compare, unless they are the
    /// same store's).
    fn eq(&self, other: &StoredRecords) -> bool {
        if self.packets != other.packets {
            return false;
        }
        if Arc::ptr_eq(&self.store, &other.store) && self.link == other.link {
            return true;
        }
        let read = |s: &StoredRecords| {
            let mut v = Vec::new();
            s.store.for_each(s.link, &mut |r| v.push(*r)).map(|()| v)
        };
        matches!((read(self), read(other)), (Ok(a), Ok(b)) if a == b)
    }
}

/// The per-packet delay records of one port.
#[derive(Clone, Debug, PartialEq)]
pub enum DelayLog {
    /// Every packet that completed transmission on the link, in order of departure,
    /// kept in memory.
    Packets(Vec<DelayRecord>),
    /// The same, kept by the run's [`RecordSink`].
    Stored(StoredRecords),
    /// The run recorded more than `max_delay_records` packet delays over all links, so
    /// the records were dropped; the exact distributions are in
    /// [`crate::result::ClassResult::delays`].
    Histogram {
        /// Packets measured at this port (the sum of the leaves' histogram counts).
        packets: u64,
    },
}

impl DelayLog {
    /// Whether per-packet records were kept.
    pub fn is_per_packet(&self) -> bool {
        !matches!(self, DelayLog::Histogram { .. })
    }

    /// The number of records kept (0 when only histograms were).
    pub fn records(&self) -> u64 {
        match self {
            DelayLog::Packets(v) => v.len() as u64,
            DelayLog::Stored(s) => s.packets,
            DelayLog::Histogram { .. } => 0,
        }
    }

    /// Calls `each` with every record, in order of departure; `Ok(false)`, calling
    /// nothing, when the records were dropped. Fails if a store cannot read them back.
    pub fn for_each(&self, mut each: impl FnMut(&DelayRecord)) -> io::Result<bool> {
        match self {
            DelayLog::Packets(v) => {
                v.iter().for_each(each);
                Ok(true)
            }
            DelayLog::Stored(s) => s.store.for_each(s.link, &mut each).map(|()| true),
            DelayLog::Histogram { .. } => Ok(false),
        }
    }

    /// Every record, collected in memory (`None` when they were dropped): for the small
    /// runs of tests and reproductions that look at packets one by one.
    pub fn to_vec(&self) -> io::Result<Option<Vec<DelayRecord>>> {
        let mut v = Vec::with_capacity(self.records() as usize);
        Ok(self.for_each(|r| v.push(*r))?.then_some(v))
    }
}

/// Where the engine puts each record during a run, and how many it may still keep.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// Records the run may still keep.
    left: u64,
    /// Records kept per link.
    kept: Vec<u64>,
    into: Into,
}

#[derive(Debug)]
enum Into {
    Memory(Vec<Vec<DelayRecord>>),
    Sink(Box<dyn RecordSink>),
    /// Over the budget.
    Dropped,
}

impl Recorder {
    /// Records of `links` links kept in memory, at most `max` of them.
    pub(crate) fn new(links: usize, max: u64) -> Recorder {
        Recorder {
            left: max,
            kept: vec![0; links],
            into: Into::Memory(vec![Vec::new(); links]),
        }
    }

    /// Hands the records to `sink` instead of keeping them in memory (before the run).
    pub(crate) fn set_sink(&mut self, sink: Box<dyn RecordSink>) {
        self.into = Into::Sink(sink);
    }

    /// Records kept in memory now (0 with a sink).
    pub(crate) fn in_memory(&self) -> u64 {
        match self.into {
            Into::Memory(_) => self.kept.iter().sum(),
            _ => 0,
        }
    }

    /// One record of link `link`.
    #[inline]
    pub(crate) fn record(&mut self, link: usize, r: &DelayRecord) {
        if self.left == 0 {
            self.drop_all();
            return;
        }
        self.left -= 1;
        self.kept[link] += 1;
        match &mut self.into {
            Into::Memory(v) => v[link].push(*r),
            Into::Sink(s) => s.record(LinkId(link as u32), r),
            Into::Dropped => {}
        }
    }

    /// The budget is spent: every record so far goes.
    #[cold]
    fn drop_all(&mut self) {
        match std::mem::replace(&mut self.into, Into::Dropped) {
            Into::Sink(mut s) => {
                s.discard();
                drop(s.finish());
            }
            Into::Memory(_) | Into::Dropped => {}
        }
    }

    /// Each link's log; `measured[l]` is the number of packets link `l` measured (for
    /// the note that records were dropped).
    pub(crate) fn finish(self, measured: &[u64]) -> Vec<DelayLog> {
        match self.into {
            Into::Memory(v) => v.into_iter().map(DelayLog::Packets).collect(),
            Into::Sink(s) => {
                let store = s.finish();
                self.kept
                    .iter()
                    .enumerate()
                    .map(|(l, &packets)| {
                        DelayLog::Stored(StoredRecords {
                            link: LinkId(l as u32),
                            packets,
                            store: Arc::clone(&store),
                        })
                    })
                    .collect()
            }
            Into::Dropped => measured
                .iter()
                .map(|&packets| DelayLog::Histogram { packets })
                .collect(),
        }
    }
}
