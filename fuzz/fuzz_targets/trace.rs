//! The trace readers: a packet trace (`time_s,flow,size_bytes`) or a video frame-size
//! trace gives its rows or problems with messages. Never a panic.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use linkshare_scenario::trace;
use linkshare_sim::source::video::parse_frames;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file: Arc<str> = "fuzz.csv".into();
    match trace::parse(text, &file, "flow[0].source.file") {
        Ok(rows) => {
            for r in &rows {
                assert!(r.size > 0 && !r.flow.is_empty(), "{r:?}");
            }
        }
        Err(problems) => {
            assert!(!problems.is_empty());
            for p in &problems {
                assert!(!p.problem.is_empty(), "a problem without a message: {p:?}");
            }
        }
    }
    if let Err(e) = parse_frames(text) {
        assert!(!e.is_empty());
    }
});
