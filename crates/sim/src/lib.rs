//! linkshare-sim: a deterministic discrete-event network simulator.
//!
//! A [`SimConfig`](config::SimConfig) describes nodes, unidirectional links, flows and
//! what to measure; [`Simulator::new`] checks it and builds the network;
//! [`Simulator::run`] runs it and returns a [`RunResult`].
//!
//! # Time and events
//!
//! Time is an integer number of nanoseconds ([`linkshare_core::units::Instant`]). The
//! engine keeps one [`event::EventQueue`] ordered by `(time, sequence number)`: events
//! due at the same instant run in the order they were scheduled (FIFO ties, by
//! contract). Time jumps from one event to the next; there are no ticks. The run covers
//! `[0, duration)`: no event at or after `duration` is processed.
//!
//! # Links and ports
//!
//! Every link has an egress port at its sending end: a
//! [`linkshare_core::port::EgressPort`] (discipline from the registry, buffer policy and
//! counters of [`linkshare_core::Qdisc`], line rate, per-packet overhead) — the same state
//! machine the userspace shaper paces with. The engine calls `transmit` after every
//! enqueue while the port's wire is free, when a transmission ends, and when a shaping
//! wake-up is due. A transmitted packet propagates for the link's constant delay, then
//! reaches the port of its route's next link, or its flow's sink. Routes are static, one
//! per flow, with one leaf class per hop ([`config::Hop`]). See [`sim`] for the
//! packet path in detail.
//!
//! # Sources and agents
//!
//! Each flow is driven by an [`agent::Agent`]: a state machine called when the flow's
//! schedule turns on or off, when its timers fire, and when its packets leave the first
//! port, reach the sink or are dropped; it reacts by emitting packets and setting timers.
//! The traffic generators of [`source`] (CBR, Poisson, ON-OFF families, Markov-modulated
//! Poisson, greedy, trace replay, FTP, Telnet, web transfers, video) are agents. A TCP
//! flow's agent ([`tcp`]) wraps its source: what the source emits becomes application
//! data in a connection whose segments travel the flow's route and whose
//! acknowledgements travel its reverse route, through the ports of the links they
//! cross (see [`agent`]).
//!
//! # Results
//!
//! [`RunResult`] reports per link (counters, throughput and backlog per window, exact
//! delay distributions per class, per-packet delay records up to a budget — in memory or
//! handed to a [`records::RecordSink`] as they are made) and per flow
//! (sent, delivered, dropped by reason, still queued or in flight at the end, exact
//! end-to-end delay distribution; the same counters for its reverse packets; goodput,
//! completion, retransmissions and per-burst delays), so that every packet is
//! accounted for. See [`result`].
//!
//! # Memory
//!
//! Nothing the engine keeps grows with the packets but the packets themselves (queued,
//! on wires, propagating), the distinct delays of the exact distributions, and the
//! records kept in memory when no sink takes them. [`memory`] counts what a run's data
//! takes; with [`Simulator::memory_budget`] a run that grows past it stops cleanly
//! ([`result::RunResult::stopped`]); [`memory::estimate`] says before a run what it must
//! take at least.
//!
//! # Determinism
//!
//! A run is a pure function of its configuration. Randomness comes from one seed split
//! into independent streams ([`rng`]), one per flow, named by a hash of the flow's name:
//! adding, removing or reordering flows changes no other flow's own random draws.
//! Nothing depends on hash iteration order, wall-clock time or threads, so the same
//! configuration and seed give an identical `RunResult`.

#![warn(missing_docs)]

pub mod agent;
pub mod config;
pub mod error;
pub mod event;
mod measure;
pub mod memory;
pub mod packet;
pub mod records;
pub mod result;
pub mod rng;
pub mod sim;
pub mod source;
pub mod tcp;
mod validate;
pub mod workload;

pub use error::SimError;
pub use result::RunResult;
pub use sim::Simulator;
