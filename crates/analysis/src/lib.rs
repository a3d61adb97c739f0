//! linkshare-analysis: what classes *should* get, and what schedulers can promise.
//!
//! Nothing here is on the packet path, so floats are allowed.
//!
//! * [`admission`]: admission control for service curves (sums of `rt` curves below the
//!   link, `ls` children within their parent, `ul` between `rt` and the link) and
//!   H-FSC delay bounds (Thm. 2).
//! * [`gps`]: the exact fluid GPS (bit-by-bit weighted round robin) of an arrival
//!   trace: finish times, round number, active sets — the reference of the
//!   fair-queueing schedulers.
//! * [`bounds`]: fairness (alpha) and transmission-gap (gamma) bounds of HLS and HDRR
//!   (Theorems 3–6).
//! * [`maxmin`]: weighted max-min fair shares (HLS paper, Alg. 1) and hierarchical
//!   max-min fair (HMM-fair) allocations (Alg. 2, Thm. 1).
//! * [`quality`]: link-sharing quality measured from a packet log (empirical HMM(alpha),
//!   transmission gaps).

pub mod admission;
pub mod bounds;
pub mod gps;
pub mod maxmin;
pub mod quality;
