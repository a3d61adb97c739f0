//! The frame-trace file format: a small CSV of frame sizes.
//!
//! ```text
//! # Lines starting with `#` (after optional spaces) and blank lines are ignored.
//! frame,type,size_bytes
//! 0,I,6021
//! 1,B,1187
//! 2,B,964
//! ```
//!
//! * The first line that is neither blank nor a comment is the header, exactly
//!   `frame,type,size_bytes`.
//! * Every following row is one frame, in sending order: `frame` is its index, counting
//!   from 0 without gaps (row `k` says `k`: a missing or repeated row is an error, not
//!   a silent shift); `type` is the MPEG frame type, `I`, `P`, `B` or `D` — written for
//!   people and plots, the source does not use it; `size_bytes` is the frame's size in
//!   bytes, a positive integer below 2³².
//! * Fields are separated by commas; spaces around a field are ignored; lines end with
//!   `\n` or `\r\n`. At least one row.
//!
//! The time between frames is not in the file: it is the video source's `interval`
//! (33 333 333 ns for 30 frames/s).

use std::fmt::Write as _;

/// The header line of a frame-trace file.
pub const HEADER: &str = "frame,type,size_bytes";

/// An MPEG frame type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    /// Intra-coded.
    I,
    /// Predicted from the previous I or P frame.
    P,
    /// Bidirectionally predicted.
    B,
    /// DC-coded (MPEG-1 only, rare).
    D,
}

impl FrameType {
    /// The letter written in the `type` column.
    pub fn letter(self) -> char {
        match self {
            FrameType::I => 'I',
            FrameType::P => 'P',
            FrameType::B => 'B',
            FrameType::D => 'D',
        }
    }

    /// The type written as `label` in the `type` column, if it is one.
    pub fn from_label(label: &str) -> Option<FrameType> {
        match label {
            "I" => Some(FrameType::I),
            "P" => Some(FrameType::P),
            "B" => Some(FrameType::B),
            "D" => Some(FrameType::D),
            _ => None,
        }
    }
}

/// The frame sizes in bytes of a frame-trace file's `text`, in order. The error names
/// the first problem's line (from 1), what is wrong and how to fix it.
pub fn parse_frames(text: &str) -> Result<Vec<u32>, String> {
    let mut header_seen = false;
    let mut frames = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header_seen {
            if fields != ["frame", "type", "size_bytes"] {
                return Err(format!(
                    "line {line_no}: expected the header `{HEADER}`, found `{line}`; start \
                     the file (after any `#` comments) with that header"
                ));
            }
            header_seen = true;
            continue;
        }
        frames.push(parse_row(line_no, &fields, frames.len())?);
    }
    if !header_seen {
        return Err(format!(
            "the frame trace is empty; give the header `{HEADER}` and one row per frame"
        ));
    }
    if frames.is_empty() {
        return Err("the frame trace has a header but no frames; add one row per frame".into());
    }
    Ok(frames)
}

/// Row `fields` on line `line_no`, which must describe frame `index`: its size.
fn parse_row(line_no: usize, fields: &[&str], index: usize) -> Result<u32, String> {
    let [frame, kind, size] = fields else {
        return Err(format!(
            "line {line_no}: {} fields where 3 are expected ({HEADER}); write \
             `index,type,bytes` with no other commas",
            fields.len()
        ));
    };
    if frame.parse::<usize>().ok() != Some(index) {
        return Err(format!(
            "line {line_no}: the frame number is `{frame}` but this row is frame {index}; \
             number the rows 0, 1, 2, ... in order without gaps"
        ));
    }
    if FrameType::from_label(kind).is_none() {
        return Err(format!(
            "line {line_no}: frame type `{kind}` is not one of I, P, B, D; write the MPEG \
             frame type's letter"
        ));
    }
    match size.parse::<u32>() {
        Ok(0) => Err(format!(
            "line {line_no}: frame {index} has 0 bytes; every frame needs a positive size"
        )),
        Ok(bytes) => Ok(bytes),
        Err(_) => Err(format!(
            "line {line_no}: size_bytes `{size}` is not a whole number of bytes between 1 \
             and 4294967295"
        )),
    }
}

/// The frame-trace file for `frames` (type and size, in order), with each line of
/// `comment` written first as a `#` comment line. [`parse_frames`] reads it back.
pub fn write_frames(comment: &str, frames: &[(FrameType, u32)]) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        out.push_str(if line.is_empty() { "#" } else { "# " });
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(HEADER);
    out.push('\n');
    for (k, (kind, size)) in frames.iter().enumerate() {
        // Writing into a String cannot fail.
        let _ = writeln!(out, "{k},{},{size}", kind.letter());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows_comments_and_crlf() {
        let text =
            "# a trace\r\n\r\n  frame , type , size_bytes\r\n0,I,6021\r\n# mid\n1, B ,1187\n";
        assert_eq!(parse_frames(text), Ok(vec![6021, 1187]));
    }

    #[test]
    fn round_trips_what_it_writes() {
        let frames = [
            (FrameType::I, 5000),
            (FrameType::B, 1),
            (FrameType::P, 4000),
        ];
        let text = write_frames("two lines\n\nof comment", &frames);
        assert!(text.starts_with("# two lines\n#\n# of comment\nframe,type,size_bytes\n"));
        assert!(text.ends_with("0,I,5000\n1,B,1\n2,P,4000\n"));
        assert_eq!(parse_frames(&text), Ok(vec![5000, 1, 4000]));
    }

    #[test]
    fn errors_name_the_line_and_the_fix() {
        let cases = [
            ("", "is empty"),
            ("# only\nframe,type,size_bytes\n", "no frames"),
            ("time,size\n0,1\n", "line 1: expected the header"),
            (
                "frame,type,size_bytes\n0,I,10\n2,B,10\n",
                "line 3: the frame number is `2`",
            ),
            ("frame,type,size_bytes\n0,X,10\n", "line 2: frame type `X`"),
            (
                "frame,type,size_bytes\n0,I,0\n",
                "line 2: frame 0 has 0 bytes",
            ),
            ("frame,type,size_bytes\n0,I,-5\n", "line 2: size_bytes `-5`"),
            (
                "frame,type,size_bytes\n0,I,4294967296\n",
                "not a whole number",
            ),
            ("frame,type,size_bytes\n\n0,I\n", "line 3: 2 fields where 3"),
        ];
        for (text, want) in cases {
            let err = parse_frames(text).expect_err(text);
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
