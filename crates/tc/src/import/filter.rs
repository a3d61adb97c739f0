//! Filters: u32, flower and matchall, read into the shaper's classifier's matches.

use linkshare_classify::frame::{ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, proto};
use linkshare_classify::{DscpSet, Match, PortRange};

use super::{Args, FilterAt, Head, Importer};
use crate::model::{Handle, TcFilter};
use crate::shell::{Command, Word};
use crate::show;

impl Importer {
    pub(super) fn filter(&mut self, cmd: &Command, args: &mut Args<'_>) {
        let mut head = Head {
            filter: true,
            ..Head::default()
        };
        if !self.head(cmd, args, &mut head) {
            return;
        }
        let kind = head.kind.expect("head returned a kind");
        if !self.on_dev(cmd, head.dev, kind) {
            return;
        }
        if head.dev.is_some_and(|d| d.text == show::SHOWN_DEV) {
            self.refuse(
                cmd,
                kind,
                "`tc filter show` prints u32 keys as raw offsets, which are not read; import \
                 the script's filter commands"
                    .to_owned(),
            );
            return;
        }
        let Some(root) = &self.root else {
            self.problem(
                kind,
                "parent",
                "a filter is added before the root qdisc".to_owned(),
                "add the root qdisc first",
            );
            return;
        };
        let major = root.major;
        match head.parent.map(|p| (p, Handle::parse(&p.text))) {
            Some((_, Some(h))) if h.major == major && h.minor == 0 => {}
            Some((p, Some(h))) => {
                let reason = if h.major == major {
                    format!(
                        "the filter is attached to class {h}; the shaper classifies once, at \
                         the root (attach it to `parent {major:x}:0` naming a leaf)"
                    )
                } else {
                    format!(
                        "the filter is attached to `{}`, not to the root qdisc {major:x}: \
                         (ingress filters police arriving traffic)",
                        p.text
                    )
                };
                self.refuse(cmd, p, reason);
                return;
            }
            Some((p, None)) => {
                self.handle(p, "parent");
                return;
            }
            None => {
                self.problem(
                    kind,
                    "parent",
                    "the filter names no parent".to_owned(),
                    &format!("add `parent {major:x}:0`"),
                );
                return;
            }
        }
        let ether_type = match head.protocol.map(|p| p.text.as_str()) {
            None | Some("all") => None,
            Some("ip") => Some(ETHERTYPE_IPV4),
            Some("ipv6") => Some(ETHERTYPE_IPV6),
            Some("arp") => Some(ETHERTYPE_ARP),
            Some(hex) if hex.starts_with("0x") && u16::from_str_radix(&hex[2..], 16).is_ok() => {
                u16::from_str_radix(&hex[2..], 16).ok()
            }
            Some(other) => {
                let p = head.protocol.expect("Some");
                self.refuse(
                    cmd,
                    p,
                    format!("filter protocol `{other}` is not translated (ip, ipv6, arp, all)"),
                );
                return;
            }
        };
        let prio = match head.prio {
            None => 0xC000,
            Some(w) => match w.text.parse::<u32>() {
                Ok(p) => p,
                Err(_) => {
                    self.problem(
                        w,
                        "prio",
                        format!("`{}` is not a filter priority", w.text),
                        "write a whole number such as `prio 1` (lower is tried first)",
                    );
                    return;
                }
            },
        };
        let mut m = Match {
            ether_type,
            ..Match::default()
        };
        let mut class = None;
        let parsed = match kind.text.as_str() {
            "u32" => self.u32_filter(cmd, args, &mut m, &mut class),
            "flower" => self.flower_filter(cmd, args, &mut m, &mut class),
            "matchall" => self.matchall_filter(cmd, args, &mut class),
            "fw" => {
                self.refuse(
                    cmd,
                    kind,
                    "`fw` matches the firewall mark set by iptables or nftables, which the \
                     shaper's classifier does not see; write a u32 or flower filter on the \
                     addresses and ports the firewall rule marks"
                        .to_owned(),
                );
                false
            }
            other => {
                self.refuse(
                    cmd,
                    kind,
                    format!("`{other}` filters are not translated (u32, flower and matchall are)"),
                );
                false
            }
        };
        if !parsed {
            return;
        }
        let Some(class_word) = class else {
            self.problem(
                args.end,
                "flowid",
                "the filter names no class".to_owned(),
                "end it with `flowid 1:10` (or `classid 1:10`)",
            );
            return;
        };
        let Some(h) = self.handle(class_word, "flowid") else {
            return;
        };
        self.filters.push(FilterAt {
            prio,
            filter: TcFilter {
                matches: m,
                class: h,
            },
            class_word: class_word.clone(),
        });
    }

    /// `flowid`/`classid`, `action`, `police`: common endings of a filter; returns
    /// `Some(true)` when `key` was one of them and consumed, `Some(false)` when the
    /// filter cannot be translated.
    fn filter_ending<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        key: &'c Word,
        class: &mut Option<&'c Word>,
    ) -> Option<bool> {
        match key.text.as_str() {
            "flowid" | "classid" => {
                *class = args.take();
                Some(true)
            }
            "action" | "police" | "act" => {
                self.refuse(
                    cmd,
                    key,
                    format!(
                        "`{}` runs actions (policing, mirroring, marking) on matching packets; \
                         the shaper only classifies",
                        key.text
                    ),
                );
                Some(false)
            }
            "skip_hw" | "skip_sw" => Some(true),
            _ => None,
        }
    }

    fn u32_filter<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        m: &mut Match,
        class: &mut Option<&'c Word>,
    ) -> bool {
        while let Some(key) = args.take() {
            if let Some(ok) = self.filter_ending(cmd, args, key, class) {
                if !ok {
                    return false;
                }
                continue;
            }
            if key.text != "match" {
                self.refuse(
                    cmd,
                    key,
                    format!(
                        "u32 `{}` (hash tables, links, offsets) is not translated; the \
                         classifier takes plain matches",
                        key.text
                    ),
                );
                return false;
            }
            let (Some(sel), Some(field)) = (args.take(), args.take()) else {
                self.problem(
                    key,
                    "match",
                    "`match` needs a selector and a field".to_owned(),
                    "write for example `match ip dport 22 0xffff`",
                );
                return false;
            };
            let refuse = |this: &mut Self, what: String| {
                this.refuse(
                    cmd,
                    sel,
                    format!(
                        "u32 `match {what}` is not translated: the shaper's classifier matches \
                         ether type, VLAN, addresses, protocol, ports and DSCP"
                    ),
                );
                false
            };
            let value = args.take();
            let ok = match (sel.text.as_str(), field.text.as_str()) {
                ("ip" | "ip6", "src" | "dst") => {
                    let Some(v) = value else {
                        return self.missing(field);
                    };
                    let slot = if field.text == "src" {
                        &mut m.src
                    } else {
                        &mut m.dst
                    };
                    self.parse_into(field, v, slot)
                }
                ("ip" | "ip6" | "tcp" | "udp", "sport" | "dport" | "src" | "dst") => {
                    let Some((v, mask)) = self.value_mask(value, args.take(), field) else {
                        return false;
                    };
                    let Some(range) = port_range(v, mask) else {
                        return refuse(
                            self,
                            format!("{} {} {v:#x} {mask:#x}", sel.text, field.text),
                        );
                    };
                    if field.text.starts_with('s') {
                        m.sport = Some(range);
                    } else {
                        m.dport = Some(range);
                    }
                    if sel.text == "tcp" || sel.text == "udp" {
                        m.protocol = Some(if sel.text == "tcp" {
                            proto::TCP
                        } else {
                            proto::UDP
                        });
                    }
                    true
                }
                ("u32" | "u16" | "u8", _) => {
                    // `match u32 0 0 [at N]`: no condition, the customary catch-all.
                    let mask = value;
                    let zero = |w: Option<&Word>| {
                        w.is_some_and(|w| {
                            matches!(
                                w.text.as_str(),
                                "0" | "0x0" | "0x00" | "0x0000" | "0x00000000"
                            )
                        })
                    };
                    if zero(mask) {
                        if args.peek().is_some_and(|w| w.text == "at") {
                            args.take();
                            args.take();
                        }
                        true
                    } else {
                        return refuse(self, format!("{} {} (raw offsets)", sel.text, field.text));
                    }
                }
                ("ip" | "ip6", "protocol") => {
                    let Some((v, mask)) = self.value_mask(value, args.take(), field) else {
                        return false;
                    };
                    if mask != 0xff || v > 0xff {
                        return refuse(self, format!("ip protocol {v:#x} {mask:#x}"));
                    }
                    m.protocol = Some(v as u8);
                    true
                }
                ("ip", "tos" | "dsfield") | ("ip6", "priority") => {
                    let Some((v, mask)) = self.value_mask(value, args.take(), field) else {
                        return false;
                    };
                    if v > 0xff || mask > 0xff || mask & 0xfc == 0 {
                        return refuse(self, format!("ip tos {v:#x} {mask:#x}"));
                    }
                    m.dscp = Some(dscp_set(v as u8, mask as u8));
                    true
                }
                _ => refuse(self, format!("{} {}", sel.text, field.text)),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn missing(&mut self, key: &Word) -> bool {
        self.problem(
            key,
            &key.text,
            format!("`{}` needs a value", key.text),
            "write the value after it",
        );
        false
    }

    /// `VALUE MASK` of a u32 match (decimal or 0x-hexadecimal).
    fn value_mask(
        &mut self,
        value: Option<&Word>,
        mask: Option<&Word>,
        field: &Word,
    ) -> Option<(u32, u32)> {
        let (Some(v), Some(mw)) = (value, mask) else {
            self.problem(
                field,
                &field.text,
                format!("`{}` needs a value and a mask", field.text),
                "write for example `dport 22 0xffff`",
            );
            return None;
        };
        let n = |w: &Word| {
            let t = w.text.as_str();
            match t.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => t.parse::<u32>().ok(),
            }
        };
        match (n(v), n(mw)) {
            (Some(a), Some(b)) => Some((a, b)),
            (None, _) => {
                self.problem(v, &field.text, format!("`{}` is not a number", v.text), "");
                None
            }
            (_, None) => {
                self.problem(mw, &field.text, format!("`{}` is not a mask", mw.text), "");
                None
            }
        }
    }

    /// Parses `v` into `slot` (a flower match on `key`); a value that does not parse is
    /// a problem at `v` with the parser's message. Whether it parsed.
    fn parse_into<T>(&mut self, key: &Word, v: &Word, slot: &mut Option<T>) -> bool
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        match v.text.parse::<T>() {
            Ok(value) => {
                *slot = Some(value);
                true
            }
            Err(e) => {
                self.problem(v, &key.text, e.to_string(), "");
                false
            }
        }
    }

    fn flower_filter<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        m: &mut Match,
        class: &mut Option<&'c Word>,
    ) -> bool {
        while let Some(key) = args.take() {
            if let Some(ok) = self.filter_ending(cmd, args, key, class) {
                if !ok {
                    return false;
                }
                continue;
            }
            let Some(v) = args.take() else {
                return self.missing(key);
            };
            let ok = match key.text.as_str() {
                "ip_proto" => {
                    let p = match v.text.as_str() {
                        "tcp" => Some(proto::TCP),
                        "udp" => Some(proto::UDP),
                        "icmp" => Some(proto::ICMP),
                        "icmpv6" => Some(proto::ICMPV6),
                        "sctp" => Some(proto::SCTP),
                        // flower reads a number as hexadecimal (`get_u8(.., 16)`).
                        t => u8::from_str_radix(t.trim_start_matches("0x"), 16).ok(),
                    };
                    m.protocol = p;
                    p.is_some() || {
                        self.problem(
                            v,
                            "ip_proto",
                            format!("`{}` is not a protocol", v.text),
                            "write tcp, udp, icmp, icmpv6, sctp or a number",
                        );
                        false
                    }
                }
                "src_ip" => self.parse_into(key, v, &mut m.src),
                "dst_ip" => self.parse_into(key, v, &mut m.dst),
                "src_port" => self.parse_into(key, v, &mut m.sport),
                "dst_port" => self.parse_into(key, v, &mut m.dport),
                "vlan_id" => match v.text.parse::<u16>() {
                    Ok(id) if id < 4096 => {
                        m.vlan = Some(id);
                        true
                    }
                    _ => {
                        self.problem(
                            v,
                            "vlan_id",
                            format!("`{}` is not a VLAN id", v.text),
                            "write 0 to 4095",
                        );
                        false
                    }
                },
                "ip_tos" => {
                    let (val, mask) = v.text.split_once('/').unwrap_or((&v.text, "0xff"));
                    let n = |t: &str| match t.strip_prefix("0x") {
                        Some(h) => u8::from_str_radix(h, 16).ok(),
                        None => t.parse::<u8>().ok(),
                    };
                    match (n(val), n(mask)) {
                        (Some(val), Some(mask)) if mask & 0xfc != 0 => {
                            m.dscp = Some(dscp_set(val, mask));
                            true
                        }
                        _ => {
                            self.problem(
                                v,
                                "ip_tos",
                                format!("`{}` is not a TOS value/mask on the DSCP bits", v.text),
                                "write for example `ip_tos 0xb8/0xfc`",
                            );
                            false
                        }
                    }
                }
                other => {
                    self.refuse(
                        cmd,
                        key,
                        format!(
                            "flower key `{other}` is not translated: the shaper's classifier \
                             matches ip_proto, src_ip, dst_ip, src_port, dst_port, ip_tos and \
                             vlan_id"
                        ),
                    );
                    false
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn matchall_filter<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        class: &mut Option<&'c Word>,
    ) -> bool {
        while let Some(key) = args.take() {
            match self.filter_ending(cmd, args, key, class) {
                Some(true) => {}
                Some(false) => return false,
                None => {
                    self.problem(
                        key,
                        "matchall",
                        format!("`{}` is not an option of matchall", key.text),
                        "write `matchall classid 1:10`",
                    );
                    return false;
                }
            }
        }
        true
    }
}

/// A u32 port `value mask` as a range: the mask must be contiguous high bits.
fn port_range(value: u32, mask: u32) -> Option<PortRange> {
    if value > 0xffff || mask > 0xffff || mask == 0 {
        return None;
    }
    let low = !mask & 0xffff;
    if low & (low + 1) != 0 {
        return None;
    }
    let lo = (value & mask) as u16;
    Some(PortRange {
        lo,
        hi: lo | low as u16,
    })
}

/// The DSCPs whose TOS byte matches `value` under `mask` (the ECN bits ignored).
fn dscp_set(value: u8, mask: u8) -> DscpSet {
    let mut set = 0u64;
    for d in 0u8..64 {
        if (d << 2) & mask & 0xfc == value & mask & 0xfc {
            set |= 1 << d;
        }
    }
    DscpSet(set)
}
