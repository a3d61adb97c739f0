//! Helpers shared by the integration tests of the scenario loader (and, through
//! `#[path]`, by the command line's).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use linkshare_scenario::{Problem, Problems, Scenario, load_str};

/// The repository's `scenarios/` directory.
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// A fresh, empty directory under the system's temporary directory, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("linkshare-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to `name` inside the directory and returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write temp file");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The 1-based line and column of the first occurrence of `needle` in `text`.
pub fn position_of(text: &str, needle: &str) -> (u32, u32) {
    let at = text.find(needle).expect("needle in text");
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line as u32, col as u32)
}

/// Loads `text` as a scenario file named `t.toml` in the directory `base` (where its
/// relative paths start).
pub fn load_in(text: &str, base: &Path) -> Result<Scenario, Problems> {
    load_str(text, "t.toml", base)
}

/// The problems of loading `text` as [`load_in`] does; fails if it loads.
pub fn problems_in(text: &str, base: &Path) -> Vec<Problem> {
    match load_in(text, base) {
        Ok(_) => panic!("expected problems in:\n{text}"),
        Err(p) => p.0,
    }
}

/// The only problem about `field`; fails if there is none or several.
pub fn about<'p>(ps: &'p [Problem], field: &str) -> &'p Problem {
    let found: Vec<&Problem> = ps
        .iter()
        .filter(|p| p.field.as_deref() == Some(field))
        .collect();
    assert_eq!(found.len(), 1, "problems about `{field}` in {ps:#?}");
    found[0]
}

/// The 1-based line and column where `p` points.
pub fn at(p: &Problem) -> (u32, u32) {
    let o = p.origin.as_ref().expect("problem has a position");
    (o.line, o.column)
}

/// Two links: l1 (10 Mbit/s, 5 ms) then l2 (5 Mbit/s, no delay). A 1000-byte packet
/// takes 0.8 ms on l1, 5 ms to propagate, 1.6 ms on l2: 7.4 ms end to end when alone.
/// One leaf per link (`x` on l1, `y` on l2), one CBR flow `f` of 800 kbit/s across both.
pub const TWO_HOPS: &str = r#"[scenario]
name = "two-hops"
duration = "1s"
window = "250ms"

[[node]]
name = "a"
[[node]]
name = "b"
[[node]]
name = "c"

[[links]]
name = "l1"
from = "a"
to = "b"
rate = "10mbit"
delay = "5ms"
[[links.class]]
name = "x"

[[links]]
name = "l2"
from = "b"
to = "c"
rate = "5mbit"
[[links.class]]
name = "y"

[[flow]]
name = "f"
route = [{ link = "l1", class = "x" }, { link = "l2", class = "y" }]
source = { type = "cbr", rate = "800kbit", size = "1000b" }
"#;
