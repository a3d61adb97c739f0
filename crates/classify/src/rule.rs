//! Filter rules: what a frame must carry to belong to a class.
//!
//! A [`Match`] lists optional conditions; a frame matches when it meets every condition
//! given (an empty match matches every frame). Conditions on IP fields never match a
//! frame that is not IP; a prefix of one IP version never matches a packet of the
//! other; port conditions never match a packet without ports (not TCP, UDP, UDP-Lite or
//! SCTP, or a fragment other than the first).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use linkshare_core::hierarchy::ClassId;

use crate::frame::Headers;

/// An IPv4 or IPv6 prefix such as `10.1.0.0/16` or `2001:db8::/32`; a bare address is
/// a prefix of full length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prefix {
    /// 4 or 6.
    pub version: u8,
    /// The address, IPv4 in the first four bytes; bits past `len` are zero.
    pub addr: [u8; 16],
    /// Prefix length in bits (at most 32 for IPv4, 128 for IPv6).
    pub len: u8,
}

impl Prefix {
    /// Whether `addr` (of IP version `version`, laid out as in
    /// [`crate::frame::IpHeaders`]) is inside the prefix.
    #[inline]
    pub fn contains(&self, version: u8, addr: &[u8; 16]) -> bool {
        if version != self.version {
            return false;
        }
        let a = u128::from_be_bytes(*addr);
        let p = u128::from_be_bytes(self.addr);
        let mask = u128::MAX
            .checked_shl(128 - u32::from(self.len))
            .unwrap_or(0);
        a & mask == p
    }
}

/// Why a prefix, port range or value could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadValue(pub String);

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadValue {}

impl FromStr for Prefix {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Prefix, BadValue> {
        let (addr, len) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| {
            BadValue(format!(
                "`{s}` is not an IP address or prefix (such as \"10.0.0.0/8\" or \"2001:db8::/32\")"
            ))
        })?;
        let (version, max, bytes) = match addr {
            IpAddr::V4(a) => {
                let mut b = [0; 16];
                b[..4].copy_from_slice(&a.octets());
                (4, 32, b)
            }
            IpAddr::V6(a) => (6, 128, a.octets()),
        };
        let len = match len {
            None => max,
            Some(l) => match l.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => {
                    return Err(BadValue(format!(
                        "`{s}` has a prefix length other than 0 to {max}"
                    )));
                }
            },
        };
        let v = u128::from_be_bytes(bytes);
        let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
        let host_bits = match version {
            4 => (v >> 96) as u32 & !((mask >> 96) as u32),
            _ => u32::from(v & !mask != 0),
        };
        if host_bits != 0 {
            let net = u128::to_be_bytes(v & mask);
            let shown = match version {
                4 => IpAddr::from([net[0], net[1], net[2], net[3]]),
                _ => IpAddr::from(net),
            };
            return Err(BadValue(format!(
                "`{s}` has bits set past its prefix length; write `{shown}/{len}`"
            )));
        }
        Ok(Prefix {
            version,
            addr: bytes,
            len,
        })
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.addr;
        match self.version {
            4 => write!(f, "{}/{}", IpAddr::from([a[0], a[1], a[2], a[3]]), self.len),
            _ => write!(f, "{}/{}", IpAddr::from(a), self.len),
        }
    }
}

/// An inclusive range of ports, `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRange {
    /// Lowest port.
    pub lo: u16,
    /// Highest port.
    pub hi: u16,
}

impl PortRange {
    /// Whether `port` is in the range.
    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        (self.lo..=self.hi).contains(&port)
    }
}

impl FromStr for PortRange {
    type Err = BadValue;
    /// `"80"` or `"1000-2000"`.
    fn from_str(s: &str) -> Result<PortRange, BadValue> {
        let bad = || {
            BadValue(format!(
                "`{s}` is not a port or port range (such as 80 or \"1000-2000\")"
            ))
        };
        let (lo, hi) = s.split_once('-').unwrap_or((s, s));
        let lo: u16 = lo.trim().parse().map_err(|_| bad())?;
        let hi: u16 = hi.trim().parse().map_err(|_| bad())?;
        if lo > hi {
            return Err(BadValue(format!(
                "the port range `{s}` is empty (its first port is above its last)"
            )));
        }
        Ok(PortRange { lo, hi })
    }
}

/// A set of DSCP values (0 to 63).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DscpSet(pub u64);

impl DscpSet {
    /// Whether `dscp` is in the set.
    #[inline]
    pub fn contains(&self, dscp: u8) -> bool {
        dscp < 64 && self.0 & (1 << dscp) != 0
    }
}

/// What a frame must carry; `None` fields are not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Match {
    /// The EtherType after any VLAN tags.
    pub ether_type: Option<u16>,
    /// The VLAN id of the outermost tag (an untagged frame never matches).
    pub vlan: Option<u16>,
    /// Source address prefix.
    pub src: Option<Prefix>,
    /// Destination address prefix.
    pub dst: Option<Prefix>,
    /// Transport protocol number (IPv6: after the extension headers).
    pub protocol: Option<u8>,
    /// Source port range.
    pub sport: Option<PortRange>,
    /// Destination port range.
    pub dport: Option<PortRange>,
    /// DSCP values.
    pub dscp: Option<DscpSet>,
}

impl Match {
    /// Whether `h` meets every condition.
    pub fn matches(&self, h: &Headers) -> bool {
        if self.ether_type.is_some_and(|t| t != h.ether_type) {
            return false;
        }
        if self.vlan.is_some_and(|v| Some(v) != h.vlan) {
            return false;
        }
        if !self.needs_ip() {
            return true;
        }
        let Some(ip) = &h.ip else {
            return false;
        };
        if self.src.is_some_and(|p| !p.contains(ip.version, &ip.src))
            || self.dst.is_some_and(|p| !p.contains(ip.version, &ip.dst))
            || self.protocol.is_some_and(|p| p != ip.protocol)
            || self.dscp.is_some_and(|d| !d.contains(ip.dscp))
        {
            return false;
        }
        if self.sport.is_none() && self.dport.is_none() {
            return true;
        }
        let Some((s, d)) = ip.ports else {
            return false;
        };
        self.sport.is_none_or(|r| r.contains(s)) && self.dport.is_none_or(|r| r.contains(d))
    }

    fn needs_ip(&self) -> bool {
        self.src.is_some()
            || self.dst.is_some()
            || self.protocol.is_some()
            || self.sport.is_some()
            || self.dport.is_some()
            || self.dscp.is_some()
    }
}

/// A rule: frames that match go to `class` (a leaf).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// What the frame must carry.
    pub matches: Match,
    /// The leaf class it goes to.
    pub class: ClassId,
}
