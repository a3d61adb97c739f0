//! What the loader takes from the simulator's application sources: the FSC paper's web
//! transfer lengths and the parser of video frame-size traces.

pub(crate) use linkshare_sim::source::video::parse_frames;
pub(crate) use linkshare_sim::source::www::FSC_PAPER_GROUPS;
