//! Line charts as standalone SVG, good enough to put in a paper.
//!
//! A [`LineChart`] has a title, axis labels (write the units in them), and [`Series`] of
//! `(x, y)` points drawn as straight segments or as steps, with or without a dot at each
//! point, or as dots alone (a scatter plot, [`Draw`]). [`LineChart::render`] returns
//! the SVG text: a 960 × 540 drawing with round-number ticks, light grid lines, a legend
//! to the right of the plot, colours from the Okabe–Ito palette (distinguishable with
//! the common forms of colour blindness) and dash patterns once the colours run out. It
//! uses the generic `sans-serif` font family and no scripts or external resources, so it
//! renders the same in browsers, `rsvg-convert` and LaTeX toolchains.
//!
//! A chart stays readable whatever it is given:
//!
//! * **No line hides another.** Where a series' line runs within [`COINCIDE_PX`] pixels
//!   of an earlier one's for at least [`COINCIDE_SHARE`] of its length (measured on the
//!   drawing, leaving out stretches where both lie on the bottom of the plot), a later
//!   solid line is drawn dashed (dotted if the earlier one is dashed) so the earlier one
//!   shows through its gaps, and the legend says so: `name (= other)` when the two
//!   paths are identical, `name (overlaps other)` otherwise. A later dashed or dotted
//!   line lets an earlier one of another pattern show; one with the earlier one's
//!   pattern hides it and is noted too. Coincidence is found numerically, never from
//!   the names.
//! * **Labels on the lines.** A series with [`Series::label`] also has its name written
//!   on the plot, beside its longest stretch off the bottom of the plot (the HLS paper's
//!   Fig. 7 labels its lines so); labels that would overlap are moved apart.
//! * A legend longer than the drawing ends with `…and N more`; an aggregate series
//!   ([`Series::aggregate`]: the sum of the classes a plot does not draw one by one, an
//!   interior class's total, the link's total) is drawn in grey, outside the palette.
//!
//! Which series to draw, and their colours, are the caller's choice ([`crate::plots`]
//! draws at most the palette's size and gives a class the same colour in every chart).
//!
//! Output is deterministic: the same chart gives the same bytes (coordinates are printed
//! with two decimals). Rendering is linear in the points drawn, times the number of
//! series for the coincidence test (each series is compared with every earlier one).
//!
//! # Why not a plotting crate
//!
//! `plotters` (the maintained Rust plotting crate) was measured against this module on
//! a chart like the ones linkshare writes (`BENCHMARKS.md`, "Plots: this module against
//! plotters"): both give the same bytes on every run, but plotters' file is 3.6 times
//! larger (every coordinate at full float precision) and takes about 1.4 times longer,
//! and it would add a dependency tree for what this module does in a few hundred lines,
//! with the legend notes (coinciding lines, classes left out) it would not give.

use std::fmt::Write as _;

/// Okabe–Ito colours, in the order series get them.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// The colour of aggregate series: a neutral grey, outside the palette.
pub const AGGREGATE_COLOUR: &str = "#8C8C8C";

/// Two lines closer than this (in pixels, vertically) coincide on the drawing.
pub const COINCIDE_PX: f64 = 1.5;

/// A later line that coincides with an earlier one over at least this share of its
/// length (off the bottom of the plot) would hide it: it is dashed and the legend says
/// so.
pub const COINCIDE_SHARE: f64 = 0.2;

/// A stretch of a line stays within this many pixels of its first point's height (where
/// a label can sit on it).
const FLAT_PX: f64 = 3.0;

/// The stretches of a line its label is tried on, at most (see `label_anchors`).
const LABEL_CANDIDATES: usize = 24;

/// The colour of a label's text for an aggregate series (darker than its line, to read).
const AGGREGATE_TEXT: &str = "#555555";

/// Width of the drawing, in SVG user units (pixels).
const WIDTH: f64 = 960.0;
/// Height of the drawing.
const HEIGHT: f64 = 540.0;
/// Space left of the plot area (tick labels, y label).
const LEFT: f64 = 86.0;
/// Space above the plot area (title).
const TOP: f64 = 52.0;
/// Space below the plot area (tick labels, x label).
const BOTTOM: f64 = 64.0;
/// The narrowest legend, in pixels (when there is one).
const MIN_LEGEND: f64 = 90.0;
/// Approximate width of a character of the legend font, for layout.
const CHAR_WIDTH: f64 = 7.6;
/// Approximate width of a character of a label on the plot (a smaller font).
const LABEL_CHAR_WIDTH: f64 = 7.0;

/// A chart of lines. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineChart {
    /// Title, drawn above the plot.
    pub title: String,
    /// Label of the x axis, with its unit (`"time (s)"`).
    pub x_label: String,
    /// Label of the y axis, with its unit (`"rate (Mbit/s)"`).
    pub y_label: String,
    /// The lines, drawn in order (later ones on top).
    pub series: Vec<Series>,
    /// The x axis: scale and range.
    pub x_axis: Axis,
    /// The y axis: scale and range.
    pub y_axis: Axis,
    /// A line of smaller text under the title (what the chart leaves out, how to see
    /// it); `None`: nothing.
    pub subtitle: Option<String>,
    /// A last line of the legend, after the series (`…and 99 992 more`); `None`:
    /// nothing.
    pub legend_note: Option<String>,
}

/// Scale and range of an axis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Axis {
    /// Linear or logarithmic.
    pub scale: Scale,
    /// The range shown; `None`: from the data, widened to round ticks.
    pub range: Option<(f64, f64)>,
    /// With an automatic range on a linear scale, start or end the range at zero so
    /// that it includes it (rates, backlogs).
    pub include_zero: bool,
}

/// How values map to positions on an axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    #[default]
    Linear,
    /// Evenly spaced powers of ten; values `<= 0` are not drawn.
    Log10,
}

/// How a line is dashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    /// A continuous line.
    Solid,
    /// Long dashes.
    Dashed,
    /// Dots.
    Dotted,
    /// Dash, dot, dash.
    DashDot,
}

impl Dash {
    /// Every pattern, in the order they are used when colours run out.
    pub const ALL: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::DashDot];

    fn dasharray(self) -> Option<&'static str> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some("9 5"),
            Dash::Dotted => Some("2 4"),
            Dash::DashDot => Some("9 4 2 4"),
        }
    }
}

/// How a series shows its points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Draw {
    /// A line through the points.
    #[default]
    Line,
    /// A line through the points and a dot at each (measured points joined).
    LineAndDots,
    /// A dot at each point and no line (a scatter plot).
    Dots,
}

impl Draw {
    fn line(self) -> bool {
        self != Draw::Dots
    }
    fn dots(self) -> bool {
        self != Draw::Line
    }
}

/// Radius of a dot, in pixels.
const DOT_RADIUS: f64 = 3.5;

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Name shown in the legend.
    pub name: String,
    /// Points in drawing order (normally increasing x). Non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// Draw as a step function: each point's y holds until the next point's x (for
    /// CDFs and per-window values), instead of straight segments between points.
    pub step: bool,
    /// Index into [`PALETTE`] (taken modulo its length); `None`: the series' position.
    pub colour: Option<usize>,
    /// Dash pattern; `None`: solid for the first 8 series, then the next pattern for
    /// each further round of colours.
    pub dash: Option<Dash>,
    /// An aggregate of several things (the sum of the classes not drawn one by one):
    /// drawn in [`AGGREGATE_COLOUR`] instead of a palette colour.
    pub aggregate: bool,
    /// Line, dots, or both.
    pub draw: Draw,
    /// Also write the name on the plot, beside the line (see the [module docs](self)).
    pub label: bool,
}

impl Series {
    /// A line through `points`, with automatic colour and dash.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            step: false,
            colour: None,
            dash: None,
            aggregate: false,
            draw: Draw::Line,
            label: false,
        }
    }

    /// Dots at `points`, no line (a scatter plot).
    pub fn dots(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            draw: Draw::Dots,
            ..Series::line(name, points)
        }
    }

    /// The same series with a dot at each point besides its line.
    pub fn with_dots(mut self) -> Series {
        self.draw = Draw::LineAndDots;
        self
    }

    /// The same series with its name written on the plot too ([`Series::label`]).
    pub fn labelled(mut self) -> Series {
        self.label = true;
        self
    }

    /// A step function through `points` (see [`Series::step`]).
    pub fn steps(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            step: true,
            ..Series::line(name, points)
        }
    }
}

/// A mapping from values to pixels along one axis.
#[derive(Clone, Copy, Debug)]
struct Mapping {
    scale: Scale,
    /// Range in transformed units (log10 of the values for a log scale).
    lo: f64,
    hi: f64,
    /// Pixel positions of `lo` and `hi`.
    from: f64,
    to: f64,
}

impl Mapping {
    fn transform(scale: Scale, v: f64) -> Option<f64> {
        match scale {
            Scale::Linear if v.is_finite() => Some(v),
            Scale::Log10 if v.is_finite() && v > 0.0 => Some(v.log10()),
            _ => None,
        }
    }

    fn pixel(&self, v: f64) -> Option<f64> {
        let t = Mapping::transform(self.scale, v)?;
        Some(self.from + (t - self.lo) / (self.hi - self.lo) * (self.to - self.from))
    }
}

/// A tick: its value and label.
type Tick = (f64, String);

impl LineChart {
    /// Every series' points in pixels under the mappings `xm` and `ym`, and its SVG path.
    fn drawn(&self, xm: &Mapping, ym: &Mapping) -> (Vec<Vec<(f64, f64)>>, Vec<String>) {
        let pixels: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|x| pixel_points(x, xm, ym))
            .collect();
        let paths = self
            .series
            .iter()
            .zip(&pixels)
            .map(|(x, p)| path(x.step, p))
            .collect();
        (pixels, paths)
    }

    /// An empty chart with linear axes.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..LineChart::default()
        }
    }

    /// The chart as a standalone SVG document.
    pub fn render(&self) -> String {
        let bottom = HEIGHT - BOTTOM;
        let xs = self.values(|p| p.0, self.x_axis.scale);
        let ys = self.values(|p| p.1, self.y_axis.scale);
        let (x_lo, x_hi, x_ticks) = axis_ticks(self.x_axis, &xs);
        let (y_lo, y_hi, y_ticks) = axis_ticks(self.y_axis, &ys);
        let x_mapping = |right: f64| Mapping {
            scale: self.x_axis.scale,
            lo: x_lo,
            hi: x_hi,
            from: LEFT,
            to: right,
        };
        let ym = Mapping {
            scale: self.y_axis.scale,
            lo: y_lo,
            hi: y_hi,
            from: bottom,
            to: TOP,
        };
        // Which lines coincide does not depend on the plot's width (the shares are
        // ratios along x, the heights do not change), which depends on the legend's
        // names, which say which lines coincide: found on the narrowest legend first.
        let overlaps = {
            let xm = x_mapping(WIDTH - MIN_LEGEND - 24.0);
            let (pixels, paths) = self.drawn(&xm, &ym);
            overlaps(&self.series, &pixels, &paths, bottom)
        };
        let names = self.legend_names(&overlaps);
        let right = WIDTH - legend_width(&names) - 24.0;
        let xm = x_mapping(right);

        let mut s = String::with_capacity(16 * 1024);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
        );
        let _ = writeln!(s, r#"<title>{}</title>"#, escape(&self.title));
        let _ = writeln!(
            s,
            r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
        );
        let _ = writeln!(
            s,
            r#"<defs><clipPath id="plot-area"><rect x="{LEFT}" y="{TOP}" width="{:.2}" height="{:.2}"/></clipPath></defs>"#,
            right - LEFT,
            bottom - TOP
        );
        // Grid and tick labels.
        let _ = writeln!(s, r##"<g stroke="#dddddd" stroke-width="1">"##);
        for (v, _) in &x_ticks {
            if let Some(x) = xm.pixel(*v) {
                let _ = writeln!(
                    s,
                    r#"<line x1="{x:.2}" y1="{TOP}" x2="{x:.2}" y2="{bottom}"/>"#
                );
            }
        }
        for (v, _) in &y_ticks {
            if let Some(y) = ym.pixel(*v) {
                let _ = writeln!(
                    s,
                    r#"<line x1="{LEFT}" y1="{y:.2}" x2="{right:.2}" y2="{y:.2}"/>"#
                );
            }
        }
        let _ = writeln!(s, "</g>");
        let _ = writeln!(s, r##"<g font-size="13" fill="#222222">"##);
        for (v, label) in &x_ticks {
            if let Some(x) = xm.pixel(*v) {
                let _ = writeln!(
                    s,
                    r#"<text x="{x:.2}" y="{:.2}" text-anchor="middle">{}</text>"#,
                    bottom + 20.0,
                    escape(label)
                );
            }
        }
        for (v, label) in &y_ticks {
            if let Some(y) = ym.pixel(*v) {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{:.2}" text-anchor="end">{}</text>"#,
                    LEFT - 8.0,
                    y + 4.5,
                    escape(label)
                );
            }
        }
        let _ = writeln!(s, "</g>");
        // Frame, title and axis labels.
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{:.2}" height="{:.2}" fill="none" stroke="#444444" stroke-width="1"/>"##,
            right - LEFT,
            bottom - TOP
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.2}" y="30" font-size="18" font-weight="bold" text-anchor="middle" fill="#111111">{}</text>"##,
            (LEFT + right) / 2.0,
            escape(&self.title)
        );
        if let Some(sub) = &self.subtitle {
            let _ = writeln!(
                s,
                r##"<text x="{:.2}" y="46" font-size="12" text-anchor="middle" fill="#555555">{}</text>"##,
                (LEFT + right) / 2.0,
                escape(sub)
            );
        }
        let _ = writeln!(
            s,
            r##"<text x="{:.2}" y="{:.2}" font-size="15" text-anchor="middle" fill="#111111">{}</text>"##,
            (LEFT + right) / 2.0,
            HEIGHT - 16.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            r##"<text transform="translate(24 {:.2}) rotate(-90)" font-size="15" text-anchor="middle" fill="#111111">{}</text>"##,
            (TOP + bottom) / 2.0,
            escape(&self.y_label)
        );
        // Lines.
        let mut drawn = 0;
        let _ = writeln!(
            s,
            r#"<g clip-path="url(#plot-area)" fill="none" stroke-width="2" stroke-linejoin="round">"#
        );
        let (pixels, paths) = self.drawn(&xm, &ym);
        for (i, (series, d)) in self.series.iter().zip(&paths).enumerate() {
            if d.is_empty() {
                continue;
            }
            drawn += 1;
            let (colour, dash) = drawn_style(series, i, overlaps[i]);
            if series.draw.line() {
                let dash_attr = dash
                    .dasharray()
                    .map_or(String::new(), |a| format!(r#" stroke-dasharray="{a}""#));
                let _ = writeln!(s, r#"<path d="{d}" stroke="{colour}"{dash_attr}/>"#);
            }
            if series.draw.dots() {
                for &(px, py) in &pixels[i] {
                    let _ = writeln!(
                        s,
                        r#"<circle cx="{px:.2}" cy="{py:.2}" r="{DOT_RADIUS}" fill="{colour}" stroke="none"/>"#
                    );
                }
            }
        }
        let _ = writeln!(s, "</g>");
        self.line_labels(&mut s, &pixels, (LEFT, right, TOP, bottom));
        if drawn == 0 {
            let _ = writeln!(
                s,
                r##"<text x="{:.2}" y="{:.2}" font-size="16" text-anchor="middle" fill="#777777">no data</text>"##,
                (LEFT + right) / 2.0,
                (TOP + bottom) / 2.0
            );
        }
        self.legend(&mut s, right + 16.0, &overlaps, &names);
        s.push_str("</svg>\n");
        s
    }

    /// The legend's name of each series: its name, and `(= other)` or `(overlaps
    /// other)` when its line coincides with an earlier one's (see [`Overlap`]).
    fn legend_names(&self, overlaps: &[Option<Overlap>]) -> Vec<String> {
        self.series
            .iter()
            .zip(overlaps)
            .map(|(series, o)| match o {
                Some(o) if o.identical => {
                    format!("{} (= {})", series.name, self.series[o.with].name)
                }
                Some(o) if o.noted => {
                    format!("{} (overlaps {})", series.name, self.series[o.with].name)
                }
                _ => series.name.clone(),
            })
            .collect()
    }

    /// The legend at `x`: one row per series (its [`LineChart::legend_names`]), then the
    /// legend note. Rows that do not fit end with `…and N more`.
    fn legend(&self, s: &mut String, x: f64, overlaps: &[Option<Overlap>], names: &[String]) {
        if self.series.is_empty() {
            return;
        }
        let rows = self.series.len() + usize::from(self.legend_note.is_some());
        let row = if rows > 20 { 16.0 } else { 22.0 };
        let fit = (((HEIGHT - 10.0 - TOP - 10.0) / row) as usize + 1).max(1);
        let (shown, note) = if rows <= fit {
            (self.series.len(), self.legend_note.clone())
        } else {
            let shown = fit - 1;
            let hidden = self.series.len() - shown;
            let more = match &self.legend_note {
                Some(n) => format!("…and {hidden} more series; {n}"),
                None => format!("…and {hidden} more series"),
            };
            (shown, Some(more))
        };
        let _ = writeln!(s, r##"<g font-size="13" fill="#222222">"##);
        for (i, series) in self.series.iter().enumerate().take(shown) {
            let y = TOP + 10.0 + row * i as f64;
            let (colour, dash) = drawn_style(series, i, overlaps[i]);
            let dash_attr = dash
                .dasharray()
                .map_or(String::new(), |a| format!(r#" stroke-dasharray="{a}""#));
            if series.draw.line() {
                let _ = writeln!(
                    s,
                    r#"<line x1="{x:.2}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="{colour}" stroke-width="2.5"{dash_attr}/>"#,
                    x + 28.0
                );
            }
            if series.draw.dots() {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.2}" cy="{y:.2}" r="{DOT_RADIUS}" fill="{colour}"/>"#,
                    x + 14.0
                );
            }
            let name = &names[i];
            let _ = writeln!(
                s,
                r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
                x + 36.0,
                y + 4.5,
                escape(name)
            );
        }
        if let Some(note) = note {
            let y = TOP + 10.0 + row * shown as f64;
            let _ = writeln!(
                s,
                r##"<text x="{x:.2}" y="{:.2}" font-style="italic" fill="#555555">{}</text>"##,
                y + 4.5,
                escape(&note)
            );
        }
        let _ = writeln!(s, "</g>");
    }

    /// The names of the series with [`Series::label`], on the plot area `(left, right,
    /// top, bottom)` beside their lines, in their line's colour on a white halo. A label
    /// goes to the first of its line's places off the bottom of the plot
    /// ([`label_anchors`]) where it overlaps no label placed before; failing all, above
    /// or below the first, a row at a time; failing that, on the bottom.
    fn line_labels(&self, s: &mut String, pixels: &[Vec<(f64, f64)>], area: (f64, f64, f64, f64)) {
        const ROW: f64 = 14.0;
        let (left, right, top, bottom) = area;
        let mut placed: Vec<(f64, f64, f64, f64)> = Vec::new();
        let mut text = String::new();
        for (i, series) in self.series.iter().enumerate() {
            if !series.label {
                continue;
            }
            let width = series.name.chars().count() as f64 * LABEL_CHAR_WIDTH;
            // Centre x and baseline (4 px above the line) of a place, kept in the plot.
            let place = |(x, y): (f64, f64)| {
                let x = x.clamp(
                    left + 4.0 + width / 2.0,
                    (right - 4.0 - width / 2.0).max(left + 4.0 + width / 2.0),
                );
                (x, (y - 4.0).clamp(top + ROW, bottom - 3.0))
            };
            let free = |(x, b): (f64, f64), placed: &[(f64, f64, f64, f64)]| {
                !placed.iter().any(|&(l, r, t, bt)| {
                    x - width / 2.0 < r && x + width / 2.0 > l && b - ROW + 2.0 < bt && b > t
                })
            };
            let (off, on) = label_anchors(series.step, &pixels[i], bottom);
            let Some(&first) = off.first().or(on.first()) else {
                continue;
            };
            let (x, start) = place(first);
            let rows = ((bottom - top) / ROW) as usize;
            let up = (1..rows).map(|k| start - ROW * k as f64);
            let down = (1..rows).map(|k| start + ROW * k as f64);
            let (x, baseline) = off
                .iter()
                .map(|&a| place(a))
                .chain(up.take_while(|&b| b >= top + ROW).map(|b| (x, b)))
                .chain(down.take_while(|&b| b <= bottom - 3.0).map(|b| (x, b)))
                .chain(on.iter().map(|&a| place(a)))
                .find(|&p| free(p, &placed))
                .unwrap_or((x, start));
            placed.push((
                x - width / 2.0,
                x + width / 2.0,
                baseline - ROW + 2.0,
                baseline,
            ));
            let (colour, _) = style(series, i);
            let fill = if series.aggregate {
                AGGREGATE_TEXT
            } else {
                colour
            };
            let _ = writeln!(
                text,
                r#"<text x="{x:.2}" y="{baseline:.2}" text-anchor="middle" fill="{fill}">{}</text>"#,
                escape(&series.name)
            );
        }
        if !text.is_empty() {
            let _ = writeln!(
                s,
                r#"<g font-size="12" stroke="white" stroke-width="3" paint-order="stroke" stroke-linejoin="round">"#
            );
            s.push_str(&text);
            let _ = writeln!(s, "</g>");
        }
    }

    /// The transformed coordinates of every drawable point along one axis.
    fn values(&self, pick: impl Fn(&(f64, f64)) -> f64, scale: Scale) -> Vec<f64> {
        self.series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter_map(|p| Mapping::transform(scale, pick(p)))
            .collect()
    }
}

/// Width reserved for a legend of `names`: enough for the longest (0 without any).
fn legend_width(names: &[String]) -> f64 {
    match names.iter().map(|n| n.chars().count()).max() {
        None => 0.0,
        Some(longest) => (longest as f64 * CHAR_WIDTH + 48.0).clamp(MIN_LEGEND, 300.0),
    }
}

/// How a series' line coincides with an earlier one's on the drawing.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Overlap {
    /// The earlier series it coincides with most.
    with: usize,
    /// The two paths are identical.
    identical: bool,
    /// The pattern it is drawn with instead of its own solid line, which would hide
    /// the earlier one where they coincide: one the earlier line is not drawn with.
    restyled: Option<Dash>,
    /// The legend says so.
    noted: bool,
}

/// For each series drawn as a line, the earlier line it coincides with most, when that
/// is the whole path or at least [`COINCIDE_SHARE`] of its length off the bottom of the
/// plot (`bottom`: the pixel row of the plot's bottom edge). Identical paths are found
/// by their text; partial coincidence by [`coinciding_share`]. A solid line over an
/// earlier one is restyled with a pattern the earlier one is not drawn with; a line
/// drawn with the earlier one's pattern hides it (the dashes fall on each other) and is
/// noted in the legend, as is every restyled or identical one.
fn overlaps(
    series: &[Series],
    pixels: &[Vec<(f64, f64)>],
    paths: &[String],
    bottom: f64,
) -> Vec<Option<Overlap>> {
    let lines: Vec<bool> = series
        .iter()
        .zip(paths)
        .map(|(x, d)| x.draw.line() && !d.is_empty())
        .collect();
    // The pattern each line is drawn with, restyled ones included.
    let mut drawn: Vec<Dash> = Vec::with_capacity(series.len());
    let mut found = Vec::with_capacity(series.len());
    for i in 0..series.len() {
        let (_, dash) = style(&series[i], i);
        let overlap = lines[i]
            .then(|| {
                let mut best: Option<(usize, f64)> = None;
                for j in (0..i).filter(|&j| lines[j]) {
                    let share = if paths[j] == paths[i] {
                        f64::INFINITY
                    } else {
                        coinciding_share(
                            (&pixels[i], series[i].step),
                            (&pixels[j], series[j].step),
                            bottom,
                        )
                    };
                    if share >= COINCIDE_SHARE && best.is_none_or(|(_, b)| share > b) {
                        best = Some((j, share));
                    }
                }
                let (with, share) = best?;
                let identical = share == f64::INFINITY;
                let restyled = (dash == Dash::Solid).then(|| {
                    [Dash::Dashed, Dash::Dotted, Dash::DashDot]
                        .into_iter()
                        .find(|&d| d != drawn[with])
                        .unwrap_or(Dash::Dashed)
                });
                Some(Overlap {
                    with,
                    identical,
                    restyled,
                    noted: identical || restyled.is_some() || dash == drawn[with],
                })
            })
            .flatten();
        drawn.push(overlap.and_then(|o| o.restyled).unwrap_or(dash));
        found.push(overlap);
    }
    found
}

/// The share of line `a`'s length (in pixels along x, leaving out where it lies on the
/// bottom edge `bottom`) over which line `b` runs within [`COINCIDE_PX`] of it, not both
/// on the bottom edge. Each line is `(pixel points, step)`; both must have increasing
/// x (0 otherwise). Linear in their points: the lines are compared between consecutive
/// x positions of either.
fn coinciding_share(a: (&[(f64, f64)], bool), b: (&[(f64, f64)], bool), bottom: f64) -> f64 {
    let increasing = |p: &[(f64, f64)]| p.windows(2).all(|w| w[1].0 >= w[0].0);
    let (Some(a_first), Some(a_last)) = (a.0.first(), a.0.last()) else {
        return 0.0;
    };
    if !increasing(a.0) || !increasing(b.0) || b.0.is_empty() {
        return 0.0;
    }
    let on_bottom = |y: f64| y >= bottom - 0.5;
    let mut xs: Vec<f64> = a.0.iter().chain(b.0).map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (mut ta, mut tb) = (Track::new(a), Track::new(b));
    let (mut own, mut shared) = (0.0, 0.0);
    for w in xs.windows(2) {
        let (x0, x1) = (w[0], w[1]);
        if x0 < a_first.0 || x1 > a_last.0 {
            continue;
        }
        let mid = (x0 + x1) / 2.0;
        let Some(ya) = ta.at(mid) else { continue };
        if on_bottom(ya) {
            continue;
        }
        own += x1 - x0;
        if tb.at(mid).is_some_and(|yb| (ya - yb).abs() <= COINCIDE_PX) {
            shared += x1 - x0;
        }
    }
    if own > 0.0 { shared / own } else { 0.0 }
}

/// A line's height at increasing x positions, read in one pass.
struct Track<'a> {
    points: &'a [(f64, f64)],
    step: bool,
    /// The last point at or before the x last asked for.
    i: usize,
}

impl<'a> Track<'a> {
    fn new((points, step): (&'a [(f64, f64)], bool)) -> Track<'a> {
        Track { points, step, i: 0 }
    }

    /// The line's y at `x` (not smaller than the x last asked for); `None` outside it.
    fn at(&mut self, x: f64) -> Option<f64> {
        let p = self.points;
        if p.is_empty() || x < p[0].0 || x > p[p.len() - 1].0 {
            return None;
        }
        while self.i + 1 < p.len() && p[self.i + 1].0 <= x {
            self.i += 1;
        }
        let (x0, y0) = p[self.i];
        match p.get(self.i + 1) {
            Some(&(x1, y1)) if !self.step && x1 > x0 => Some(y0 + (y1 - y0) * (x - x0) / (x1 - x0)),
            _ => Some(y0),
        }
    }
}

/// Colour and dash of the `i`-th series.
fn style(series: &Series, i: usize) -> (&'static str, Dash) {
    let colour = if series.aggregate {
        AGGREGATE_COLOUR
    } else {
        PALETTE[series.colour.unwrap_or(i) % PALETTE.len()]
    };
    let dash = series
        .dash
        .unwrap_or(Dash::ALL[(i / PALETTE.len()) % Dash::ALL.len()]);
    (colour, dash)
}

/// Colour and dash the `i`-th series is drawn with: its [`style`], restyled where a
/// solid line would hide an earlier one ([`Overlap::restyled`]).
fn drawn_style(series: &Series, i: usize, overlap: Option<Overlap>) -> (&'static str, Dash) {
    let (colour, dash) = style(series, i);
    (colour, overlap.and_then(|o| o.restyled).unwrap_or(dash))
}

/// The drawable points of a series, in pixels.
fn pixel_points(series: &Series, xm: &Mapping, ym: &Mapping) -> Vec<(f64, f64)> {
    series
        .points
        .iter()
        .filter_map(|&(x, y)| Some((xm.pixel(x)?, ym.pixel(y)?)))
        .collect()
}

/// The SVG path through pixel `points`, as steps or straight segments (empty if there
/// are none).
fn path(step: bool, points: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (k, &(px, py)) in points.iter().enumerate() {
        if k == 0 {
            let _ = write!(d, "M{px:.2} {py:.2}");
        } else if step {
            let _ = write!(d, "H{px:.2}V{py:.2}");
        } else {
            let _ = write!(d, "L{px:.2} {py:.2}");
        }
    }
    d
}

/// Where a line's label may go, best first, in pixels: (places off the bottom of the
/// plot, places on it).
type Anchors = (Vec<(f64, f64)>, Vec<(f64, f64)>);

/// The places for a line's label ([`Anchors`]): the middle of each of its flat stretches
/// (consecutive points within [`FLAT_PX`] of the stretch's first), longer ones first,
/// then a quarter and three quarters along them (where the labels of lines sharing a
/// stretch spread out). At most [`LABEL_CANDIDATES`] stretches of each kind.
fn label_anchors(step: bool, points: &[(f64, f64)], bottom: f64) -> Anchors {
    // (length, start x, end x, y)
    let mut off: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut on: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut start = 0;
    for k in 1..=points.len() {
        let ends = k == points.len() || (points[k].1 - points[start].1).abs() > FLAT_PX;
        if !ends {
            continue;
        }
        // A step holds its y until the next point: the stretch reaches it.
        let last = if step { k.min(points.len() - 1) } else { k - 1 };
        let (x0, y) = points[start];
        let x1 = points[last].0;
        let stretch = (x1 - x0, x0, x1, y);
        if y < bottom - 0.5 {
            off.push(stretch);
        } else {
            on.push(stretch);
        }
        start = k;
    }
    let places = |mut stretches: Vec<(f64, f64, f64, f64)>| -> Vec<(f64, f64)> {
        stretches.sort_by(|a, b| b.0.total_cmp(&a.0));
        stretches.truncate(LABEL_CANDIDATES);
        [0.5, 0.25, 0.75]
            .iter()
            .flat_map(|&f| {
                stretches
                    .iter()
                    .map(move |&(_, x0, x1, y)| (x0 + f * (x1 - x0), y))
            })
            .collect()
    };
    (places(off), places(on))
}

/// The range (in transformed units) and ticks of an axis.
fn axis_ticks(axis: Axis, values: &[f64]) -> (f64, f64, Vec<Tick>) {
    let given = axis.range.and_then(|(a, b)| {
        let (a, b) = (
            Mapping::transform(axis.scale, a)?,
            Mapping::transform(axis.scale, b)?,
        );
        (b > a).then_some((a, b))
    });
    let (lo, hi) = given.unwrap_or_else(|| {
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !(lo.is_finite() && hi.is_finite()) {
            (0.0, 1.0)
        } else if axis.include_zero && axis.scale == Scale::Linear {
            (lo.min(0.0), hi.max(0.0))
        } else {
            (lo, hi)
        }
    });
    match axis.scale {
        Scale::Linear => linear_ticks(lo, hi, given.is_some()),
        Scale::Log10 => log_ticks(lo, hi, given.is_some()),
    }
}

/// Round-number ticks for a linear axis; widens `lo..hi` to whole steps unless `fixed`.
fn linear_ticks(lo: f64, hi: f64, fixed: bool) -> (f64, f64, Vec<Tick>) {
    let (mut lo, mut hi) = (lo, hi);
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        if lo == 0.0 {
            hi = 1.0;
        } else {
            let pad = lo.abs() * 0.1;
            lo -= pad;
            hi += pad;
        }
    }
    let step = nice_step((hi - lo) / 6.0);
    if !fixed {
        lo = (lo / step).floor() * step;
        hi = (hi / step).ceil() * step;
    }
    let decimals = decimals_for(step);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            (v, number(v, decimals))
        })
        .collect();
    (lo, hi, ticks)
}

/// Ticks at powers of ten (with 2 and 5 when the range spans fewer than three decades);
/// `lo` and `hi` are log10 of the values and are widened to whole decades unless `fixed`.
fn log_ticks(lo: f64, hi: f64, fixed: bool) -> (f64, f64, Vec<Tick>) {
    let (mut lo, mut hi) = (lo, hi);
    if !fixed {
        lo = lo.floor();
        hi = hi.ceil();
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let decades = hi - lo;
    let mantissas: &[f64] = if decades < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    for e in (lo.floor() as i64)..=(hi.ceil() as i64) {
        for &m in mantissas {
            let v = m * 10f64.powi(e as i32);
            let t = v.log10();
            if t >= lo - 1e-9 && t <= hi + 1e-9 {
                let decimals = usize::try_from(-e).unwrap_or(0);
                ticks.push((v, number(v, decimals)));
            }
        }
    }
    (lo, hi, ticks)
}

/// A step of 1, 2, 2.5 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let m = raw / magnitude;
    let nice = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|&n| n >= m - 1e-9)
        .unwrap_or(10.0);
    nice * magnitude
}

/// Decimals needed to print multiples of `step` exactly (up to 9).
fn decimals_for(step: f64) -> usize {
    (0..=9)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(9)
}

/// `v` with `decimals` decimals, without a negative zero.
fn number(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_owned()
    } else {
        s
    }
}

/// Escapes text for SVG.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn linear_ticks_are_round() {
        let (lo, hi, t) = linear_ticks(0.0, 9.3, false);
        assert_eq!((lo, hi), (0.0, 10.0));
        assert_eq!(labels(&t), ["0", "2", "4", "6", "8", "10"]);
        let (_, _, t) = linear_ticks(0.0, 0.013, false);
        assert_eq!(
            labels(&t),
            [
                "0.0000", "0.0025", "0.0050", "0.0075", "0.0100", "0.0125", "0.0150"
            ]
        );
        let (lo, hi, t) = linear_ticks(-3.0, 3.0, false);
        assert_eq!((lo, hi), (-3.0, 3.0));
        assert_eq!(labels(&t), ["-3", "-2", "-1", "0", "1", "2", "3"]);
    }

    #[test]
    fn flat_data_gets_a_range() {
        let (lo, hi, t) = linear_ticks(5.0, 5.0, false);
        assert!(lo < 5.0 && hi > 5.0, "{lo} {hi}");
        assert!(!t.is_empty());
        let (lo, hi, _) = linear_ticks(0.0, 0.0, false);
        assert!(lo <= 0.0 && hi > 0.0);
    }

    #[test]
    fn log_ticks_at_decades() {
        let (lo, hi, t) = log_ticks(0.02f64.log10(), 300f64.log10(), false);
        assert_eq!((lo, hi), (-2.0, 3.0));
        assert_eq!(labels(&t), ["0.01", "0.1", "1", "10", "100", "1000"]);
        let (_, _, t) = log_ticks(0.0, 1.0, false);
        assert_eq!(labels(&t), ["1", "2", "5", "10"]);
    }

    #[test]
    fn renders_escaped_text_lines_and_steps() {
        let mut chart = LineChart::new("a < b & c", "time (s)", "rate (Mbit/s)");
        chart
            .series
            .push(Series::line("x", vec![(0.0, 0.0), (1.0, 2.0)]));
        chart
            .series
            .push(Series::steps("y", vec![(0.0, 1.0), (1.0, 0.5)]));
        let svg = chart.render();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("a &lt; b &amp; c"));
        assert!(!svg.contains("a < b"));
        assert!(svg.contains(r##"stroke="#0072B2""##) && svg.contains(r##"stroke="#D55E00""##));
        // The step series goes horizontally then vertically.
        assert!(svg.contains('H') && svg.contains('V'));
        assert_eq!(svg, chart.render(), "deterministic");
    }

    #[test]
    fn pixels_follow_the_axis() {
        let m = Mapping {
            scale: Scale::Linear,
            lo: 0.0,
            hi: 10.0,
            from: 100.0,
            to: 200.0,
        };
        assert_eq!(m.pixel(5.0), Some(150.0));
        assert_eq!(m.pixel(f64::NAN), None);
        let m = Mapping {
            scale: Scale::Log10,
            lo: 0.0,
            hi: 2.0,
            from: 0.0,
            to: 100.0,
        };
        assert_eq!(m.pixel(10.0), Some(50.0));
        assert_eq!(m.pixel(0.0), None);
    }

    /// A series drawn exactly over an earlier one says so in the legend; a legend taller
    /// than the drawing ends with how many series it leaves out.
    #[test]
    fn coinciding_series_and_long_legends_are_told() {
        let mut chart = LineChart::new("t", "x", "y");
        let line = vec![(0.0, 1.0), (1.0, 2.0)];
        chart.series.push(Series::line("hls", line.clone()));
        chart.series.push(Series::line("hdrr", line));
        let svg = chart.render();
        assert!(svg.contains(">hdrr (= hls)<"), "{svg}");
        assert!(svg.contains(">hls<"));
        for i in 0..40 {
            chart.series.push(Series::line(
                format!("s{i}"),
                vec![(0.0, i as f64), (1.0, 0.0)],
            ));
        }
        let svg = chart.render();
        assert!(svg.contains("…and 13 more series"), "{svg}");
    }

    #[test]
    fn dots_are_drawn_alone_or_on_lines() {
        let mut chart = LineChart::new("t", "x", "y");
        chart
            .series
            .push(Series::dots("scatter", vec![(0.0, 1.0), (2.0, 3.0)]));
        chart
            .series
            .push(Series::line("joined", vec![(0.0, 2.0), (1.0, 2.5)]).with_dots());
        let svg = chart.render();
        // Two dots of the scatter, two of the joined line, one legend dot each.
        assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
        // One path (the joined line) and one legend line (the scatter's legend is a dot).
        assert_eq!(svg.matches("<path d=").count(), 1, "{svg}");
        assert_eq!(svg.matches("stroke-width=\"2.5\"").count(), 1, "{svg}");
    }

    #[test]
    fn empty_chart_says_so() {
        let svg = LineChart::new("t", "x", "y").render();
        assert!(svg.contains("no data"));
    }

    /// Two lines that run together over part of the plot (B2 at A1's 50 % share for a
    /// while) are both visible: the later is dashed and the legend says so; a dashed
    /// line over a solid one of another colour needs neither; lines that meet only on
    /// the bottom of the plot (both idle) do not count.
    #[test]
    fn partly_coinciding_lines_stay_visible() {
        let mut chart = LineChart::new("t", "x", "y");
        chart.y_axis.include_zero = true;
        let a1 = vec![(0.0, 5.0), (1.0, 5.0), (2.0, 8.0), (3.0, 8.0)];
        let b2 = vec![(0.0, 5.0), (1.0, 5.0), (2.0, 2.0), (3.0, 2.0)];
        chart.series.push(Series::steps("A1", a1.clone()));
        chart.series.push(Series::steps("B2", b2));
        let mut grey = Series::steps("A", a1);
        grey.aggregate = true;
        grey.dash = Some(Dash::Dashed);
        chart.series.push(grey);
        chart.series.push(Series::steps(
            "idle1",
            vec![(0.0, 0.0), (3.0, 0.0), (3.0, 1.0)],
        ));
        chart.series.push(Series::steps(
            "idle2",
            vec![(0.0, 0.0), (3.0, 0.0), (3.0, 3.0)],
        ));
        let svg = chart.render();
        assert!(svg.contains(">B2 (overlaps A1)<"), "{svg}");
        // B2's path is dashed, A1's is not.
        let b2_path = svg
            .lines()
            .filter(|l| l.starts_with("<path"))
            .nth(1)
            .unwrap();
        assert!(b2_path.contains("stroke-dasharray"), "{b2_path}");
        assert!(svg.contains(">A (= A1)<"), "identical paths are still told");
        assert!(
            svg.contains(">idle2<"),
            "meeting on the bottom is not coinciding"
        );
        let exact = coinciding_share(
            (
                &[(0.0, 10.0), (10.0, 10.0), (20.0, 30.0), (30.0, 30.0)],
                true,
            ),
            (&[(0.0, 10.0), (15.0, 10.0), (30.0, 10.0)], false),
            100.0,
        );
        // A holds 10 over [0, 20) of its 30: two thirds on B.
        assert!((exact - 2.0 / 3.0).abs() < 1e-9, "{exact}");
    }

    /// A solid line over a dashed one is dotted, not dashed (which would hide it); a
    /// dashed line over a dashed one of another colour hides it and says so.
    #[test]
    fn a_restyled_line_does_not_take_the_pattern_it_covers() {
        let mut chart = LineChart::new("t", "x", "y");
        let line = vec![(0.0, 1.0), (1.0, 2.0), (2.0, 2.0)];
        let mut first = Series::line("C (htb)", line.clone());
        first.dash = Some(Dash::Dashed);
        chart.series.push(first);
        chart.series.push(Series::line("A1 (hls)", line.clone()));
        let mut third = Series::line("B1 (htb)", line);
        third.dash = Some(Dash::Dashed);
        third.colour = Some(3);
        chart.series.push(third);
        let svg = chart.render();
        let paths: Vec<&str> = svg.lines().filter(|l| l.starts_with("<path")).collect();
        assert!(
            paths[1].contains(r#"stroke-dasharray="2 4""#),
            "{}",
            paths[1]
        );
        assert!(svg.contains(">A1 (hls) (= C (htb))<"), "{svg}");
        assert!(svg.contains(">B1 (htb) (= C (htb))<"), "{svg}");
    }

    /// Labels on the plot sit beside their lines and do not overlap each other.
    #[test]
    fn labels_on_the_plot_do_not_overlap() {
        let mut chart = LineChart::new("t", "x", "y");
        for name in ["first", "second", "third"] {
            chart
                .series
                .push(Series::steps(name, vec![(0.0, 1.0), (1.0, 1.0)]).labelled());
        }
        let svg = chart.render();
        let labels: Vec<(f64, f64)> = svg
            .lines()
            .filter(|l| l.starts_with("<text x=") && l.contains("text-anchor=\"middle\" fill="))
            .filter(|l| {
                ["first", "second", "third"]
                    .iter()
                    .any(|n| l.contains(&format!(">{n}<")))
            })
            .map(|l| {
                let num = |key: &str| -> f64 {
                    let from = l.find(key).unwrap() + key.len();
                    l[from..].split('"').next().unwrap().parse().unwrap()
                };
                (num("x=\""), num("y=\""))
            })
            .collect();
        assert_eq!(labels.len(), 3, "{svg}");
        for i in 0..3 {
            for j in 0..i {
                let (a, b) = (labels[i], labels[j]);
                assert!(
                    (a.0 - b.0).abs() > 50.0 || (a.1 - b.1).abs() >= 12.0,
                    "{labels:?}"
                );
            }
        }
    }
}
