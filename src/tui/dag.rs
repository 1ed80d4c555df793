//! The plan DAG drawn as a layered graph with box-drawing characters.
//!
//! Layout: each step's layer is the length of the longest dependency path leading to it
//! (Kahn's algorithm; steps on a cycle or depending on one go to a last layer marked as
//! such, so a broken plan still draws). Layers are rows of boxed nodes; an edge that skips
//! layers runs down a lane of its own (a `│` beside the boxes) through each layer between,
//! and between two layers a connector row joins each edge's column above to its column
//! below, so every edge of every layer is drawn (tests/tui_dag.rs traces each one on the
//! drawing of random DAGs). The connector cells are built as sets of directions (up, down,
//! left, right) and only then turned into glyphs, so crossing and merging edges always get
//! the right junction.
//!
//! When a layer does not fit the width, [`layout`] returns `None` and the caller shows the
//! narrow fallback: one line per step with its status and dependencies.

use std::collections::HashMap;

use ratatui::text::Span;

fn text_width(s: &str) -> usize {
    Span::raw(s).width()
}

/// A step's status: its `step` events joined with its postcondition checks up to the
/// selected step (see [`crate::model::bdi::StepView::verdict`]).
pub use crate::model::bdi::Verdict as Status;

/// The glyph shown in a node: a verified success and a claim nobody checked must not look
/// alike, and a disputed claim must stand out from both.
pub fn status_glyph(s: Status) -> &'static str {
    match s {
        Status::Pending => "·",
        Status::Running => "▶",
        Status::Passed => "✓",
        Status::SelfReported => "?",
        Status::Disputed => "!",
        Status::Unchecked => "○",
        Status::Failed => "✗",
    }
}

/// One node: a plan step.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The step id (sanitized by the caller).
    pub id: String,
    /// Its kind (fetch, compute, ...), sanitized.
    pub kind: String,
    /// Ids of the steps it depends on.
    pub deps: Vec<String>,
    /// Its status.
    pub status: Status,
}

/// A drawn piece: text at a column of a row, with the node it belongs to (for styling).
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// Column.
    pub x: u16,
    /// The text.
    pub text: String,
    /// The node (index into the input) whose box this is, or `None` for edges.
    pub node: Option<usize>,
}

/// The drawn graph: rows of pieces.
pub type Drawing = Vec<Vec<Piece>>;

/// Layers of the nodes (index lists); the last layer holds nodes on or after a cycle.
pub fn layers(nodes: &[Node]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let idx: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut indeg = vec![0usize; nodes.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for d in &n.deps {
            if let Some(&j) = idx.get(d.as_str()) {
                indeg[i] += 1;
                children[j].push(i);
            }
        }
    }
    let mut layer = vec![0usize; nodes.len()];
    let mut queue: Vec<usize> = (0..nodes.len()).filter(|&i| indeg[i] == 0).collect();
    let mut done = vec![false; nodes.len()];
    let mut head = 0;
    while head < queue.len() {
        let i = queue[head];
        head += 1;
        done[i] = true;
        for &c in &children[i] {
            layer[c] = layer[c].max(layer[i] + 1);
            indeg[c] -= 1;
            if indeg[c] == 0 {
                queue.push(c);
            }
        }
    }
    let depth = queue.iter().map(|&i| layer[i] + 1).max().unwrap_or(0);
    let mut out = vec![Vec::new(); depth];
    for &i in &queue {
        out[layer[i]].push(i);
    }
    let stuck: Vec<usize> = (0..nodes.len()).filter(|&i| !done[i]).collect();
    (out, stuck)
}

/// The label inside a node's box.
pub fn label(n: &Node) -> String {
    if n.kind.is_empty() {
        format!("{} {}", status_glyph(n.status), n.id)
    } else {
        format!("{} {} {}", status_glyph(n.status), n.id, n.kind)
    }
}

const UP: u8 = 1;
const DOWN: u8 = 2;
const LEFT: u8 = 4;
const RIGHT: u8 = 8;

fn glyph(bits: u8) -> char {
    match bits {
        b if b == UP | DOWN => '│',
        b if b == LEFT | RIGHT => '─',
        b if b == UP | RIGHT => '└',
        b if b == UP | LEFT => '┘',
        b if b == DOWN | RIGHT => '┌',
        b if b == DOWN | LEFT => '┐',
        b if b == UP | LEFT | RIGHT => '┴',
        b if b == DOWN | LEFT | RIGHT => '┬',
        b if b == UP | DOWN | RIGHT => '├',
        b if b == UP | DOWN | LEFT => '┤',
        b if b == UP | DOWN | LEFT | RIGHT => '┼',
        b if b == UP => '╵',
        b if b == DOWN => '╷',
        _ => '─',
    }
}

/// Lays the graph out in `width` columns; `None` when a layer is wider.
///
/// Every edge is drawn, whatever the layers it spans: an edge from layer a to layer b > a + 1
/// runs down a lane of its own through each layer in between (a `│` beside that layer's
/// boxes, straight below where it came from when that column is free, else in the nearest
/// free column), and each connector row joins every edge's column above to its column below.
/// So from any node, the lines below it lead to each of its dependents. Edges among the
/// steps of a cycle (the last, marked layer) have no downward direction and are not drawn.
pub fn layout(nodes: &[Node], width: u16) -> Option<Drawing> {
    let (mut ls, stuck) = layers(nodes);
    if !stuck.is_empty() {
        ls.push(stuck);
    }
    let idx: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut layer_of = vec![0usize; nodes.len()];
    for (k, layer) in ls.iter().enumerate() {
        for &i in layer {
            layer_of[i] = k;
        }
    }
    // (dependency, dependent), downward only; a dependency listed twice is one edge.
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        for d in &n.deps {
            if let Some(&j) = idx.get(d.as_str())
                && layer_of[j] < layer_of[i]
                && !edges.contains(&(j, i))
            {
                edges.push((j, i));
            }
        }
    }
    let mut center = vec![0u16; nodes.len()];
    // Each edge's column at the bottom of the last layer drawn (valid once its dependency's
    // layer is drawn).
    let mut at = vec![0u16; edges.len()];
    let mut rows: Drawing = Vec::new();
    for (k, layer) in ls.iter().enumerate() {
        // Box positions for this layer.
        let mut x = 0u16;
        let mut boxes = Vec::new();
        for &i in layer {
            let l = label(&nodes[i]);
            let w = u16::try_from(text_width(&l)).ok()?.checked_add(4)?;
            if x.checked_add(w)? > width {
                return None;
            }
            boxes.push((i, x, w, l));
            center[i] = x + w / 2;
            x += w + 2;
        }
        // Lanes for the edges passing this layer, nearest to where each comes from.
        let mut passing: Vec<usize> = (0..edges.len())
            .filter(|&e| layer_of[edges[e].0] < k && k < layer_of[edges[e].1])
            .collect();
        passing.sort_by_key(|&e| (at[e], e));
        let mut taken: Vec<u16> = Vec::new();
        let mut lane = vec![None; edges.len()];
        for &e in &passing {
            // A column clear of every box and lane, by `gap` cells on each side.
            let free = |c: u16, gap: u16| {
                c < width
                    && !taken.iter().any(|&l| l.abs_diff(c) <= gap)
                    && !boxes
                        .iter()
                        .any(|&(_, bx, bw, _)| c + gap >= bx && c < bx + bw + gap)
            };
            let from = at[e];
            let nearest = |gap: u16| {
                (0..width).find_map(|d| {
                    [from.checked_add(d), from.checked_sub(d)]
                        .into_iter()
                        .flatten()
                        .find(|&c| free(c, gap))
                })
            };
            // With a blank cell beside it when there is room, so a lane is not read as a
            // box's border.
            let col = nearest(1).or_else(|| nearest(0))?;
            taken.push(col);
            lane[e] = Some(col);
        }
        if k > 0 {
            let mut cells: HashMap<u16, u8> = HashMap::new();
            for (e, &(j, i)) in edges.iter().enumerate() {
                if layer_of[j] >= k || layer_of[i] < k {
                    continue;
                }
                let px = at[e];
                let cx = lane[e].unwrap_or(center[i]);
                *cells.entry(px).or_default() |= UP;
                *cells.entry(cx).or_default() |= DOWN;
                let (a, b) = (px.min(cx), px.max(cx));
                if a != b {
                    *cells.entry(a).or_default() |= RIGHT;
                    *cells.entry(b).or_default() |= LEFT;
                    for m in a + 1..b {
                        *cells.entry(m).or_default() |= LEFT | RIGHT;
                    }
                }
            }
            let mut xs: Vec<_> = cells.into_iter().collect();
            xs.sort_unstable();
            rows.push(
                xs.into_iter()
                    .map(|(x, bits)| Piece {
                        x,
                        text: glyph(bits).to_string(),
                        node: None,
                    })
                    .collect(),
            );
        }
        for (e, &(j, _)) in edges.iter().enumerate() {
            if let Some(c) = lane[e] {
                at[e] = c;
            } else if layer_of[j] == k {
                at[e] = center[j];
            }
        }
        let mut top = Vec::new();
        let mut mid = Vec::new();
        let mut bot = Vec::new();
        for (i, x, w, l) in boxes {
            let inner = usize::from(w - 2);
            top.push(Piece {
                x,
                text: format!("┌{}┐", "─".repeat(inner)),
                node: Some(i),
            });
            mid.push(Piece {
                x,
                text: format!("│ {l} │"),
                node: Some(i),
            });
            bot.push(Piece {
                x,
                text: format!("└{}┘", "─".repeat(inner)),
                node: Some(i),
            });
        }
        for row in [&mut top, &mut mid, &mut bot] {
            row.extend(taken.iter().map(|&x| Piece {
                x,
                text: "│".into(),
                node: None,
            }));
            row.sort_by_key(|p| p.x);
        }
        rows.push(top);
        rows.push(mid);
        rows.push(bot);
    }
    Some(rows)
}

/// Renders a drawing to plain strings (tests, text captures).
pub fn to_strings(d: &Drawing) -> Vec<String> {
    d.iter()
        .map(|row| {
            let mut s = String::new();
            let mut col = 0usize;
            for p in row {
                let x = usize::from(p.x);
                if x > col {
                    s.push_str(&" ".repeat(x - col));
                    col = x;
                }
                s.push_str(&p.text);
                col += text_width(&p.text);
            }
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: &str, deps: &[&str], status: Status) -> Node {
        Node {
            id: id.into(),
            kind: String::new(),
            deps: deps.iter().map(|s| s.to_string()).collect(),
            status,
        }
    }

    #[test]
    fn diamond_is_three_layers_with_junctions() {
        let g = vec![
            n("a", &[], Status::Passed),
            n("b", &["a"], Status::Running),
            n("c", &["a"], Status::Pending),
            n("d", &["b", "c"], Status::Pending),
        ];
        let (ls, stuck) = layers(&g);
        assert_eq!(ls, vec![vec![0], vec![1, 2], vec![3]]);
        assert!(stuck.is_empty());
        let s = to_strings(&layout(&g, 40).unwrap());
        // 3 layers of 3 rows plus 2 connector rows.
        assert_eq!(s.len(), 11, "{s:#?}");
        assert!(s[1].contains("✓ a"));
        assert!(s[5].contains("▶ b") && s[5].contains("· c"), "{s:#?}");
        // The connector from a fans out to b and c; the one into d merges them.
        assert_eq!(s[3], "   ├────────┐");
        assert_eq!(s[7], "   ├────────┘");
    }

    #[test]
    fn cycles_and_dangling_deps_still_draw() {
        let g = vec![
            n("a", &["b"], Status::Pending),
            n("b", &["a"], Status::Pending),
            n("c", &["nowhere"], Status::Passed),
        ];
        let (ls, stuck) = layers(&g);
        assert_eq!(ls, vec![vec![2]]);
        assert_eq!(stuck, vec![0, 1]);
        assert!(layout(&g, 80).is_some());
    }

    #[test]
    fn too_narrow_falls_back() {
        let g = vec![
            n("a_long_step_name", &[], Status::Passed),
            n("another_one", &[], Status::Passed),
        ];
        assert!(layout(&g, 20).is_none());
        assert!(layout(&g, 0).is_none());
        assert!(layout(&g, 200).is_some());
    }
}
