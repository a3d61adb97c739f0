//! `linkshare report --shorten 50 --seeds 1`: one self-contained HTML page with every
//! reproduction's table and figures, loaded in headless Chromium (Debian's `chromium`;
//! the browser part is skipped, saying why, when it is not installed): every figure
//! renders (a non-empty bounding box) and every table has rows.

mod common;

use std::process::Command;

use common::{TempDir, linkshare, stderr};
use linkshare_repro::ALL;

/// The first of Debian's and other distributions' Chromium binaries on `PATH`.
fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_owned)
}

#[test]
fn the_report_page_holds_every_reproduction_and_renders_every_figure() {
    let dir = TempDir::new("report");
    let o = linkshare(
        &["report", "--shorten", "50", "--seeds", "1", "--out", "r"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let path = dir.path().join("r").join("report.html");
    let page = std::fs::read_to_string(&path).expect("report.html");
    // Self-contained: nothing fetched.
    for outside in ["src=\"http", "href=\"http", "<link ", "<img "] {
        assert!(!page.contains(outside), "{outside}");
    }
    for r in ALL {
        assert!(
            page.contains(&format!("<section id=\"{}\">", r.name)),
            "{}",
            r.name
        );
        assert!(
            page.contains(&format!(
                "<code>linkshare repro {} --shorten 50 --seeds 1</code>",
                r.name
            )),
            "{}",
            r.name
        );
    }
    let figures = page.matches("<figure><svg").count();
    let tables = page.matches("<table>").count();
    assert!(figures >= ALL.len(), "{figures} figures");
    assert_eq!(tables, ALL.len());
    let Some(browser) = chromium() else {
        eprintln!("skipped the browser check: no chromium on PATH (apt-get install chromium)");
        return;
    };
    let dom = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            &format!("file://{}", path.display()),
        ])
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let expected =
        format!("figures rendered: {figures} of {figures}; tables with rows: {tables} of {tables}");
    assert!(
        dom.contains(&expected),
        "expected `{expected}` in the rendered page's self-check: {}",
        dom.split("id=\"self-check\">")
            .nth(1)
            .and_then(|s| s.split('<').next())
            .unwrap_or("(no self-check element)")
    );
}
