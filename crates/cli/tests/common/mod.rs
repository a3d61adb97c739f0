//! Helpers shared by the command line's integration tests: those of the scenario
//! loader's tests, and running the binary.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

#[path = "../../../scenario/tests/common/mod.rs"]
mod loader;

pub use loader::*;

/// Runs the `linkshare` binary with `args` in `cwd`.
pub fn linkshare(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkshare"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run linkshare")
}

/// The standard output of a run, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The standard error of a run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
