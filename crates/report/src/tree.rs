//! A class tree drawn as standalone SVG: one box per class (its name and its guarantee),
//! the link at the top, each class below its parent, the active classes shaded — the
//! drawings of the HLS paper's Figs. 1 and 10.
//!
//! Layout: the leaves take equal slots from left to right in the tree's order (a
//! depth-first walk, children in declaration order), an interior class sits centred
//! over its children, and each level of depth is one row. Linear in the classes. The
//! same conventions as [`crate::svg`]: `sans-serif`, no scripts or external resources,
//! coordinates with two decimals, the same tree gives the same bytes.

use std::fmt::Write as _;

use linkshare_core::hierarchy::{ClassId, ClassTree};

use crate::svg::{PALETTE, escape};

/// Height of a class's box, and the vertical distance between rows.
const BOX_HEIGHT: f64 = 40.0;
const ROW: f64 = 80.0;
/// Horizontal space between boxes.
const GAP: f64 = 16.0;
/// Approximate width of a character of the box font, for layout.
const CHAR_WIDTH: f64 = 7.2;
/// Margins, and the space above the first row (title).
const MARGIN: f64 = 20.0;
const TOP: f64 = 56.0;

/// What a class's box says under its name: its guarantee (`rate`), else its `weight`,
/// else nothing; for the root, the link's rate.
fn guarantee(tree: &ClassTree, id: ClassId) -> String {
    let c = &tree.classes()[id.index()];
    if c.parent.is_none() {
        return tree.link_rate().to_string();
    }
    match (c.spec.rate, c.spec.weight) {
        (Some(r), _) => r.to_string(),
        (None, Some(w)) => format!("weight {w}"),
        (None, None) => String::new(),
    }
}

/// The drawing of `tree` titled `title`, the classes of `active` shaded.
pub fn class_tree(title: &str, tree: &ClassTree, active: &[ClassId]) -> String {
    let classes = tree.classes();
    let labels: Vec<(String, String)> = classes
        .iter()
        .map(|c| (c.name().to_owned(), guarantee(tree, c.id)))
        .collect();
    let widest = labels
        .iter()
        .map(|(n, g)| n.chars().count().max(g.chars().count()))
        .max()
        .unwrap_or(1);
    let box_width = widest as f64 * CHAR_WIDTH + 16.0;
    let slot = box_width + GAP;
    // x of each class's centre: leaves by slot, interior classes over their children
    // (children before parents: a post-order walk).
    let mut x = vec![0.0; classes.len()];
    let mut next_slot = 0.0;
    let mut stack = vec![(ClassId(0), false)];
    while let Some((id, expanded)) = stack.pop() {
        let c = &classes[id.index()];
        if c.children.is_empty() {
            x[id.index()] = MARGIN + (next_slot + 0.5) * slot;
            next_slot += 1.0;
        } else if expanded {
            let first = x[c.children[0].index()];
            let last = x[c.children[c.children.len() - 1].index()];
            x[id.index()] = (first + last) / 2.0;
        } else {
            stack.push((id, true));
            stack.extend(c.children.iter().rev().map(|&ch| (ch, false)));
        }
    }
    let depth = classes.iter().map(|c| c.depth).max().unwrap_or(0);
    // The drawing is as wide as the tree or the title; the tree centred in it.
    let tree_width = 2.0 * MARGIN + next_slot.max(1.0) * slot;
    let width = tree_width.max(title.chars().count() as f64 * 8.5 + 2.0 * MARGIN);
    for cx in &mut x {
        *cx += (width - tree_width) / 2.0;
    }
    let height = TOP + f64::from(depth) * ROW + BOX_HEIGHT + 40.0;
    let top = |id: ClassId| TOP + f64::from(classes[id.index()].depth) * ROW;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.2}" height="{height:.2}" viewBox="0 0 {width:.2} {height:.2}" font-family="sans-serif">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{:.2}" y="28" font-size="16" text-anchor="middle">{}</text>"#,
        width / 2.0,
        escape(title)
    );
    for c in classes {
        if let Some(p) = c.parent {
            let _ = writeln!(
                s,
                r##"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="#555555"/>"##,
                x[p.index()],
                top(p) + BOX_HEIGHT,
                x[c.id.index()],
                top(c.id)
            );
        }
    }
    for c in classes {
        let (name, guarantee) = &labels[c.id.index()];
        let shaded = active.contains(&c.id);
        let fill = if shaded { PALETTE[5] } else { "white" };
        let (cx, y) = (x[c.id.index()], top(c.id));
        let _ = writeln!(
            s,
            r##"<g class="{}"><rect x="{:.2}" y="{y:.2}" width="{box_width:.2}" height="{BOX_HEIGHT}" rx="4" fill="{fill}" stroke="#333333"/><text x="{cx:.2}" y="{:.2}" font-size="13" text-anchor="middle">{}</text><text x="{cx:.2}" y="{:.2}" font-size="11" text-anchor="middle" fill="#333333">{}</text></g>"##,
            if shaded { "class active" } else { "class" },
            cx - box_width / 2.0,
            y + 17.0,
            escape(name),
            y + 32.0,
            escape(guarantee),
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{MARGIN}" y="{:.2}" font-size="12" fill="#333333">shaded: the active classes (with traffic); under each name its guarantee (rate, else weight)</text>"##,
        height - 12.0
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::testing::hls_fig1;

    /// Every class of Fig. 1 is named once, with its weight; the active ones, and only
    /// they, are shaded; the same tree gives the same bytes.
    #[test]
    fn the_drawing_names_every_class_and_shades_the_active_ones() {
        let tree = hls_fig1();
        let active: Vec<ClassId> = ["A1", "B1", "C"]
            .iter()
            .map(|n| tree.id_of(n).expect("a class of Fig. 1"))
            .collect();
        let svg = class_tree("Fig. 1", &tree, &active);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        for c in tree.classes() {
            let name = format!(">{}</text>", c.name());
            assert_eq!(svg.matches(&name).count(), 1, "{}", c.name());
        }
        for w in [300, 400, 100, 200] {
            assert!(svg.contains(&format!(">weight {w}</text>")), "weight {w}");
        }
        assert!(svg.contains(">1gbit</text>"), "the link's rate");
        assert_eq!(svg.matches(r#"<g class="class active">"#).count(), 3);
        assert_eq!(svg.matches("<line ").count(), tree.len() - 1);
        assert_eq!(svg, class_tree("Fig. 1", &tree, &active));
    }

    /// A parent is centred over its children, and a child is a row below its parent.
    #[test]
    fn parents_sit_over_their_children() {
        let tree = hls_fig1();
        let svg = class_tree("t", &tree, &[]);
        let centre = |name: &str| -> f64 {
            let tag = format!(">{name}</text>");
            let at = svg.find(&tag).expect(name);
            let text = &svg[..at];
            let x = text.rfind("<text x=\"").expect("a text element") + 9;
            svg[x..].split('"').next().unwrap().parse().unwrap()
        };
        assert!((centre("A") - (centre("A1") + centre("A2")) / 2.0).abs() < 0.01);
        assert!(centre("A1") < centre("A2") && centre("A2") < centre("B1"));
    }
}
