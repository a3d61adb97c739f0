//! linkshare-classify: which class a frame belongs to, as tc filters decide it.
//!
//! Sans-IO and without unsafe code, so that the shaper (`linkshare-shaper`), the
//! scenario loader (its `[[filter]]` rules) and tc import share it:
//!
//! * [`frame`]: the frame parser — Ethernet, stacked VLANs, IPv4, IPv6 and its
//!   extension headers, ports — which never trusts a length field;
//! * [`rule`]: rules with the expressiveness people use in tc filters (EtherType, VLAN
//!   id, IPv4/IPv6 source and destination prefixes, protocol, port ranges, DSCP);
//! * [`build`]: frames built from their fields, for tests and traffic generators;
//! * [`Classifier`]: rules in order, first match wins, a default class; frames that do
//!   not parse go to the default class and are reported as unparsed.
//!
//! # Cost
//!
//! Parsing reads each header once: O(VLAN tags + IPv6 extensions), both bounded. The
//! rules are tried in order, O(rules) per frame, as tc's `u32` and `flower` chains are;
//! with more than [`Classifier::CACHE_FROM_RULES`] rules a direct-mapped flow cache
//! ([`cache`]) remembers the class of the last frame with the same header fields, so a
//! frame of a known flow costs one hash and one comparison. The cache is a pure
//! memoisation: its key holds every field a rule can test, so it never changes a
//! result (checked against the plain rule walk in `tests/classifier.rs`).

#![warn(missing_docs)]

pub mod build;
mod cache;
pub mod frame;
pub mod rule;

use linkshare_core::hierarchy::ClassId;

pub use cache::FlowKey;
pub use frame::{Headers, IpHeaders, Malformed, parse};
pub use rule::{BadValue, DscpSet, Match, PortRange, Prefix, Rule};

use cache::FlowCache;

/// The class of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The leaf class.
    pub class: ClassId,
    /// Why the frame did not parse, if it did not (it then went to the default class).
    pub malformed: Option<Malformed>,
}

/// Rules in order, first match wins, and a default class. See the [crate docs](crate).
#[derive(Clone, Debug)]
pub struct Classifier {
    rules: Vec<Rule>,
    default: ClassId,
    cache: Option<FlowCache>,
}

impl Classifier {
    /// With more rules than this, frames are looked up in the flow cache first.
    pub const CACHE_FROM_RULES: usize = 8;

    /// A classifier trying `rules` in order, sending frames no rule matches (and frames
    /// that do not parse) to `default`.
    pub fn new(rules: Vec<Rule>, default: ClassId) -> Classifier {
        let cache = (rules.len() > Self::CACHE_FROM_RULES).then(FlowCache::new);
        Classifier {
            rules,
            default,
            cache,
        }
    }

    /// A classifier that tries `rules` in order for every frame, however many there
    /// are: no flow cache. For cost studies (`linkshare repro hls-fig12` compares the
    /// two) and wherever frames rarely repeat their flow.
    pub fn without_cache(rules: Vec<Rule>, default: ClassId) -> Classifier {
        Classifier {
            rules,
            default,
            cache: None,
        }
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The default class.
    pub fn default_class(&self) -> ClassId {
        self.default
    }

    /// The class of `frame` (starting with its Ethernet header). Never panics, whatever
    /// the bytes; allocates nothing.
    pub fn classify(&mut self, frame: &[u8]) -> Verdict {
        match frame::parse(frame) {
            Ok(h) => Verdict {
                class: self.classify_headers(&h),
                malformed: None,
            },
            Err(m) => Verdict {
                class: self.default,
                malformed: Some(m),
            },
        }
    }

    /// The class of a frame whose headers are `h`.
    pub fn classify_headers(&mut self, h: &Headers) -> ClassId {
        let Some(cache) = &mut self.cache else {
            return first_match(&self.rules, self.default, h);
        };
        let key = FlowKey::of(h);
        if let Some(class) = cache.get(&key) {
            return class;
        }
        let class = first_match(&self.rules, self.default, h);
        cache.insert(key, class);
        class
    }
}

/// The class of the first rule that matches `h`, or `default`.
fn first_match(rules: &[Rule], default: ClassId, h: &Headers) -> ClassId {
    rules
        .iter()
        .find(|r| r.matches.matches(h))
        .map_or(default, |r| r.class)
}
