//! linkshare-analysis: reference allocations, admission control and bounds (not on the packet path; may use floats).
