//! `linkshare report`: one self-contained HTML page of every reproduction.
//!
//! After [`crate::suite::run_all`] has run every reproduction into `DIR/<name>/`, the
//! page holds, per reproduction: what it reproduces, the command that regenerates it,
//! its reconstruction notes (the printed lines that start with `Reconstructed` or
//! `Chosen`), its table of results (result | paper | ours | tolerance | verdict), every
//! figure it wrote (the SVGs of `DIR/<name>/` and of its variants' directories, inline;
//! the per-run plots of `DIR/<name>/.../<scheduler>/` are left out, the comparisons
//! overlay them), and its whole printed report, folded. Nothing is fetched: no scripts,
//! styles or fonts from elsewhere.
//!
//! A few lines of inline script at the end count the figures that render (an `svg`
//! whose bounding box is not empty) and the tables with rows, and write the counts into
//! the element `#self-check` (`figures rendered: N of M; tables with rows: N of M`),
//! which the tests read from a headless browser's DOM.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::suite::Outcome;
use crate::verdict::Check;
use crate::{ALL, ReproError};

/// `text` with `&`, `<`, `>` and `"` escaped for HTML.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c => s.push(c),
        }
    }
    s
}

/// The SVG files of one reproduction's directory `dir` and of its subdirectories that
/// are not a single run's outputs (a run's directory holds `summary.json`), sorted by
/// path.
fn figures(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = dirs.pop() {
        if d.join("summary.json").is_file() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && depth < 2 {
                dirs.push((p, depth + 1));
            } else if p.extension().is_some_and(|x| x == "svg") {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// An SVG file's text without its XML prolog, ready to inline.
fn inline_svg(path: &Path) -> Result<String, ReproError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        ReproError::Write(linkshare_report::WriteError {
            what: format!("cannot read {}", path.display()),
            error,
        })
    })?;
    let start = text.find("<svg").unwrap_or(0);
    Ok(text[start..].to_owned())
}

/// The table of `checks` as HTML.
fn checks_table(checks: &[Check]) -> String {
    let mut s = String::from(
        "<table>\n<thead><tr><th>result</th><th>paper</th><th>ours</th><th>tolerance</th>\
         <th>verdict</th></tr></thead>\n<tbody>\n",
    );
    for c in checks {
        let class = match c.verdict() {
            "reproduced" => "ok",
            "DIFFERS" | "not measured" => "differs",
            _ => "sensitive",
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
            escape(&c.result),
            escape(&c.paper),
            escape(&c.ours),
            escape(&c.tolerance),
            escape(&c.verdict_label()),
        );
    }
    s.push_str("</tbody>\n</table>\n");
    let legend = crate::verdict::legend(checks.iter());
    if !legend.is_empty() {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(legend.trim_end()));
    }
    s
}

/// The page for `outcomes` (as [`crate::suite::run_all`] returned them, each
/// reproduction's files in `dir/<name>/`), run with `shorten` and `seeds`.
pub fn html(
    outcomes: &[Outcome],
    dir: &Path,
    shorten: u32,
    seeds: u32,
) -> Result<String, ReproError> {
    let options = {
        let mut o = String::new();
        if shorten != 1 {
            let _ = write!(o, " --shorten {shorten}");
        }
        if seeds != crate::runner::DEFAULT_SEEDS {
            let _ = write!(o, " --seeds {seeds}");
        }
        o
    };
    let (passed, total) = outcomes
        .iter()
        .flat_map(|o| o.checks.iter().flatten())
        .fold((0, 0), |(p, t), c| (p + usize::from(c.pass), t + 1));
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>linkshare: the papers' results beside ours</h1>\n<p>{passed} of {total} results \
         reproduced, in {} reproductions. Regenerate this page with \
         <code>linkshare report{}</code>; every verdict is computed from the measurement and \
         the tolerance beside it.</p>\n<ul>",
        outcomes.len(),
        escape(&options)
    );
    for o in outcomes {
        let _ = writeln!(body, "<li><a href=\"#{0}\">{0}</a></li>", o.name);
    }
    body.push_str("</ul>\n");
    for o in outcomes {
        let about = ALL
            .iter()
            .find(|r| r.name == o.name)
            .map_or("", |r| r.about);
        let rdir = dir.join(o.name);
        let printed = std::fs::read_to_string(rdir.join("report.txt")).unwrap_or_default();
        let _ = writeln!(
            body,
            "<section id=\"{0}\">\n<h2>{0}</h2>\n<p>{1}</p>\n<p>Regenerate: \
             <code>linkshare repro {0}{2}</code></p>",
            o.name,
            escape(about),
            escape(&options)
        );
        let notes: Vec<&str> = printed
            .lines()
            .filter(|l| l.starts_with("Reconstructed") || l.starts_with("Chosen"))
            .collect();
        if !notes.is_empty() {
            body.push_str("<h3>Reconstructions</h3>\n");
            for n in notes {
                let _ = writeln!(body, "<p class=\"note\">{}</p>", escape(n));
            }
        }
        match &o.checks {
            Ok(checks) => {
                body.push_str("<h3>Results</h3>\n");
                body.push_str(&checks_table(checks));
            }
            Err(e) => {
                let _ = writeln!(
                    body,
                    "<p class=\"differs\">could not run: {}</p>",
                    escape(e)
                );
            }
        }
        let figs = figures(&rdir);
        if !figs.is_empty() {
            body.push_str("<h3>Figures</h3>\n");
        }
        for f in figs {
            let name = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
            let _ = writeln!(
                body,
                "<figure>{}<figcaption>{}</figcaption></figure>",
                inline_svg(&f)?,
                escape(&name)
            );
        }
        let _ = writeln!(
            body,
            "<details><summary>printed report</summary><pre>{}</pre></details>\n</section>",
            escape(&printed)
        );
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>linkshare reproductions</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         {body}<p id=\"self-check\">figures not checked (scripts disabled)</p>\n\
         <script>{SELF_CHECK}</script>\n</body>\n</html>\n"
    ))
}

/// The page's style.
const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}\
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px;\
text-align:left;vertical-align:top}.ok{color:#117733}.differs{color:#cc3311;font-weight:bold}\
.sensitive{color:#ee7733}figure{margin:1em 0}figure svg{max-width:100%;height:auto}\
pre{font-size:75%;overflow-x:auto}.note{font-style:italic}";

/// Counts the figures that render and the tables with rows into `#self-check`.
const SELF_CHECK: &str = "(function(){var f=document.querySelectorAll('figure > svg'),\
r=0;f.forEach(function(s){var b=s.getBBox();if(b.width>0&&b.height>0)r++;});\
var t=document.querySelectorAll('table'),n=0;t.forEach(function(x){\
if(x.querySelectorAll('tbody tr').length>0)n++;});\
document.getElementById('self-check').textContent='figures rendered: '+r+' of '+f.length+\
'; tables with rows: '+n+' of '+t.length;})();";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("a < b & \"c\" > d"),
            "a &lt; b &amp; &quot;c&quot; &gt; d"
        );
    }

    #[test]
    fn a_page_holds_every_result_and_figure() {
        let dir = std::env::temp_dir().join(format!("linkshare-page-{}", std::process::id()));
        let rdir = dir.join("hls-bounds");
        std::fs::create_dir_all(rdir.join("hls")).unwrap();
        std::fs::write(rdir.join("report.txt"), "Reconstructed: nothing <here>\n").unwrap();
        std::fs::write(rdir.join("a.svg"), "<?xml version=\"1.0\"?>\n<svg></svg>").unwrap();
        // A run's own plots are left out.
        std::fs::write(rdir.join("hls/summary.json"), "{}").unwrap();
        std::fs::write(rdir.join("hls/b.svg"), "<svg></svg>").unwrap();
        let outcomes = [Outcome {
            name: "hls-bounds",
            checks: Ok(vec![Check::claim("x", "p", "o".to_owned(), &[], "t", true)]),
        }];
        let page = html(&outcomes, &dir, 20, 1).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(page.contains("<figure><svg></svg>"), "{page}");
        assert_eq!(page.matches("<figure>").count(), 1);
        assert!(page.contains("Reconstructed: nothing &lt;here&gt;"));
        assert!(page.contains("<code>linkshare repro hls-bounds --shorten 20 --seeds 1</code>"));
        assert!(page.contains("<td class=\"ok\">reproduced</td>"));
        assert!(page.contains("1 of 1 results reproduced"));
    }
}
