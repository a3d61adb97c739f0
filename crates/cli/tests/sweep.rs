//! `linkshare sweep`: one tidy CSV, the same whatever the number of threads, with the
//! runs that could not be made as rows with their error.

mod common;

use common::{TempDir, linkshare, scenarios_dir, stderr, stdout};

fn sweep(dir: &TempDir, out: &str, jobs: &str) -> String {
    let scenario = scenarios_dir().join("two-classes-drr.toml");
    let o = linkshare(
        &[
            "sweep",
            scenario.to_str().expect("utf-8 path"),
            "--grid",
            "class.bulk.weight=1,4",
            "--grid",
            "link.rate=5mbit,0bit",
            "--schedulers",
            "drr,fifo",
            "--seeds",
            "2",
            "--jobs",
            jobs,
            "--out",
            out,
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("16 runs on"), "{}", stdout(&o));
    assert!(stdout(&o).contains("8 could not be made"), "{}", stdout(&o));
    std::fs::read_to_string(dir.path().join(out)).expect("the table")
}

#[test]
fn the_table_is_the_same_on_one_thread_or_two() {
    let dir = TempDir::new("sweep");
    let one = sweep(&dir, "one.csv", "1");
    let two = sweep(&dir, "two.csv", "2");
    assert_eq!(one, two);
    let header = one.lines().next().expect("header");
    assert!(header.starts_with("run,scheduler,seed,class.bulk.weight,link.rate,link,class,"));
    assert!(header.ends_with(",error"));
    let rows = &parse_csv(&one)[1..];
    // 8 runs × 3 classes (root, bulk, interactive) + 8 runs that could not be made.
    assert_eq!(rows.len(), 8 * 3 + 8);
    let first = &rows[0];
    assert_eq!(&first[..7], ["0", "drr", "0", "1", "5mbit", "link", "link"]);
    let failed: Vec<&Vec<String>> = rows.iter().filter(|r| r[4] == "0bit").collect();
    assert_eq!(failed.len(), 8);
    assert!(
        failed
            .iter()
            .all(|r| r.last().is_some_and(|e| e.contains("zero")))
    );
}

/// Runs `linkshare sweep` on the two-class DRR scenario with `args` in `dir`, and checks
/// that it exits 2 with every one of `wants` on stderr.
fn refused(dir: &TempDir, args: &[&str], wants: &[&str]) {
    let scenario = scenarios_dir().join("two-classes-drr.toml");
    let mut all = vec!["sweep", scenario.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    let o = linkshare(&all, dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    for want in wants {
        assert!(stderr(&o).contains(want), "{want:?} not in: {}", stderr(&o));
    }
}

#[test]
fn a_bad_grid_is_a_usage_problem() {
    let dir = TempDir::new("sweep-bad");
    refused(
        &dir,
        &["--grid", "link.rate"],
        &["field `--grid`: `link.rate` has no `=`"],
    );
    refused(&dir, &["--schedulers", "dr"], &["did you mean `drr`?"]);
}

/// More runs than a sweep may list, by seeds or by the grid's product, are refused
/// before any is listed (the seeds once made the allocator abort); a sweep none of
/// whose runs could be made exits 2 with the first run's error.
#[test]
fn too_many_runs_or_none_made_are_usage_problems() {
    let dir = TempDir::new("sweep-size");
    refused(
        &dir,
        &["--seeds", "99999999999"],
        &["field `--seeds`: the sweep has more than 1000000 runs"],
    );
    // 1 001 × 1 001 runs, just over the limit.
    let values: Vec<String> = (1..=1001).map(|w| w.to_string()).collect();
    let grid = format!("class.bulk.weight={}", values.join(","));
    let other = grid.replace("bulk", "interactive");
    refused(
        &dir,
        &["--grid", &grid, "--grid", &other],
        &["field `--grid`: the sweep has more than 1000000 runs"],
    );
    refused(
        &dir,
        &["--grid", "x.y=3", "--out", "none.csv"],
        &[
            "none of the 1 runs could be made",
            "unknown table or field `x`",
        ],
    );
    assert!(dir.path().join("none.csv").exists(), "the table is written");
}

/// The rows of an RFC 4180 CSV text (quoted cells may hold commas, quotes, newlines).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell) = (Vec::new(), Vec::new(), String::new());
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    rows
}
