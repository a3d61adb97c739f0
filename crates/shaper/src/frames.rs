//! From a received frame to the frames to send: the VLAN tag the kernel took out put
//! back, partial checksums completed, super-frames segmented ([`crate::offload`]).

use linkshare_classify::IpHeaders;

use crate::offload::{self, Plan};
use crate::snapshot::DatapathStats;
use crate::sys::rx::RxInfo;

/// One frame to send, made from (part of) a received one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece<'a> {
    data: &'a [u8],
    ip: Option<IpHeaders>,
    /// `Some((mss, k))`: segment `k`.
    segment: Option<(usize, usize)>,
    csum: bool,
    tag: Option<(u16, u16)>,
}

impl Piece<'_> {
    /// Its length.
    pub(crate) fn len(&self) -> usize {
        let tag = if self.tag.is_some() { 4 } else { 0 };
        tag + match (self.segment, &self.ip) {
            (Some((mss, k)), Some(ip)) => offload::segment_len(self.data, ip, mss, k),
            _ => self.data.len(),
        }
    }

    /// Writes it into `out` (at least [`Piece::len`] bytes) and returns its length.
    pub(crate) fn write(&self, out: &mut [u8]) -> usize {
        let at = if self.tag.is_some() { 4 } else { 0 };
        let body = &mut out[at..];
        let n = match (self.segment, &self.ip) {
            (Some((mss, k)), Some(ip)) => offload::write_segment(self.data, ip, mss, k, body),
            _ => {
                body[..self.data.len()].copy_from_slice(self.data);
                if let (true, Some(ip)) = (self.csum, &self.ip) {
                    offload::complete_checksum(&mut body[..self.data.len()], ip);
                }
                self.data.len()
            }
        };
        if let Some((tpid, tci)) = self.tag
            && n >= 12
        {
            out.copy_within(4..16, 0);
            out[12..14].copy_from_slice(&tpid.to_be_bytes());
            out[14..16].copy_from_slice(&tci.to_be_bytes());
        }
        n + at
    }
}

/// What to send for a received frame `data` (with `info` from the ring and `ip` its
/// parsed IP headers), on an interface taking untagged frames of at most `max_frame`
/// bytes (its MTU + 14) and tagged ones of 4 more:
/// the pieces, passed to `each`, or `Err(len)` when it is too large and cannot be
/// segmented. Counts segmentation and checksum completion in `stats`.
pub(crate) fn pieces(
    data: &[u8],
    info: RxInfo,
    ip: Option<IpHeaders>,
    max_frame: usize,
    stats: &mut DatapathStats,
    mut each: impl FnMut(Piece<'_>),
) -> Result<(), usize> {
    let tag = info.vlan;
    let tagged_in_data = matches!(
        data.get(12..14),
        Some([0x81, 0x00] | [0x88, 0xa8] | [0x91, 0x00])
    );
    // The kernel allows one tag's 4 bytes above the MTU; a tag put back takes them.
    let room = if tag.is_none() && tagged_in_data {
        max_frame + 4
    } else {
        max_frame
    };
    let whole = Piece {
        data,
        ip,
        segment: None,
        csum: info.csum_partial && ip.is_some(),
        tag,
    };
    match offload::plan(data, ip.as_ref(), room) {
        Plan::Whole => {
            if whole.csum {
                stats.checksums_completed += 1;
            }
            each(whole);
        }
        Plan::Segment { mss, count } => {
            stats.segmented += 1;
            stats.segments += count as u64;
            for k in 0..count {
                each(Piece {
                    segment: Some((mss, k)),
                    ..whole
                });
            }
        }
        Plan::TooLarge => return Err(whole.len()),
    }
    Ok(())
}
