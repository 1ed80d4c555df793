//! The plan DAG drops no edge: for random DAGs, every dependency is traceable on the drawn
//! text by following box-drawing lines from the dependency's box down to the dependent's,
//! and no node reaches a node that does not depend on it through lines alone when the
//! graph is a chain of single edges. The tracer knows nothing of the layout: it finds boxes
//! by their labels and walks glyphs by the directions they connect.

use std::collections::{HashSet, VecDeque};

use doxascope::tui::dag::{Node, Status, label, layout, to_strings};
use proptest::prelude::*;

const UP: u8 = 1;
const DOWN: u8 = 2;
const LEFT: u8 = 4;
const RIGHT: u8 = 8;

/// The directions a box-drawing glyph connects.
fn dirs(c: char) -> u8 {
    match c {
        '│' => UP | DOWN,
        '─' => LEFT | RIGHT,
        '└' => UP | RIGHT,
        '┘' => UP | LEFT,
        '┌' => DOWN | RIGHT,
        '┐' => DOWN | LEFT,
        '┴' => UP | LEFT | RIGHT,
        '┬' => DOWN | LEFT | RIGHT,
        '├' => UP | DOWN | RIGHT,
        '┤' => UP | DOWN | LEFT,
        '┼' => UP | DOWN | LEFT | RIGHT,
        '╵' => UP,
        '╷' => DOWN,
        _ => 0,
    }
}

/// A node's box on the grid: its top row, bottom row and the columns of its borders.
#[derive(Debug, Clone, Copy)]
struct Boxed {
    top: usize,
    bottom: usize,
    left: usize,
    right: usize,
}

fn grid(lines: &[String]) -> Vec<Vec<char>> {
    let w = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            let mut v: Vec<char> = l.chars().collect();
            v.resize(w, ' ');
            v
        })
        .collect()
}

/// Finds the box whose middle row reads `│ LABEL │`.
fn find_box(g: &[Vec<char>], text: &str) -> Boxed {
    let want: Vec<char> = format!("│ {text} │").chars().collect();
    for (y, row) in g.iter().enumerate() {
        if let Some(x) = row.windows(want.len()).position(|w| w == want.as_slice()) {
            return Boxed {
                top: y - 1,
                bottom: y + 1,
                left: x,
                right: x + want.len() - 1,
            };
        }
    }
    panic!("no box {text:?}");
}

/// Whether lines lead from just below `from`'s box to just above `to`'s box.
fn traceable(g: &[Vec<char>], from: Boxed, to: Boxed) -> bool {
    let at = |y: usize, x: usize| g.get(y).and_then(|r| r.get(x)).map_or(0, |&c| dirs(c));
    let start_y = from.bottom + 1;
    let mut queue: VecDeque<(usize, usize)> = (from.left..=from.right)
        .filter(|&x| at(start_y, x) & UP != 0)
        .map(|x| (start_y, x))
        .collect();
    let mut seen: HashSet<(usize, usize)> = queue.iter().copied().collect();
    while let Some((y, x)) = queue.pop_front() {
        let d = at(y, x);
        if to.top > 0 && y == to.top - 1 && (to.left..=to.right).contains(&x) && d & DOWN != 0 {
            return true;
        }
        let mut next = Vec::new();
        if d & UP != 0 && y > 0 && at(y - 1, x) & DOWN != 0 {
            next.push((y - 1, x));
        }
        if d & DOWN != 0 && at(y + 1, x) & UP != 0 {
            next.push((y + 1, x));
        }
        if d & LEFT != 0 && x > 0 && at(y, x - 1) & RIGHT != 0 {
            next.push((y, x - 1));
        }
        if d & RIGHT != 0 && at(y, x + 1) & LEFT != 0 {
            next.push((y, x + 1));
        }
        for n in next {
            if seen.insert(n) {
                queue.push_back(n);
            }
        }
    }
    false
}

const STATUSES: [Status; 7] = [
    Status::Pending,
    Status::Running,
    Status::Passed,
    Status::SelfReported,
    Status::Disputed,
    Status::Unchecked,
    Status::Failed,
];

/// A random DAG: node i may depend on any node before it in the list, which is shuffled
/// by `order` so the drawing's input order is not the topological one.
fn dag() -> impl Strategy<Value = Vec<Node>> {
    (1usize..10).prop_flat_map(|n| {
        (
            proptest::collection::vec(proptest::collection::vec(any::<bool>(), n), n),
            proptest::collection::vec(0usize..7, n),
            proptest::collection::vec(proptest::sample::select(&["", "fetch", "compute"][..]), n),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        )
            .prop_map(move |(adj, st, kinds, order)| {
                let name = |i: usize| format!("S{i}");
                let mut nodes: Vec<Node> = (0..n)
                    .map(|i| Node {
                        id: name(i),
                        kind: kinds[i].to_string(),
                        deps: (0..i).filter(|&j| adj[i][j]).map(name).collect(),
                        status: STATUSES[st[i]],
                    })
                    .collect();
                let mut shuffled = Vec::with_capacity(n);
                for &k in &order {
                    shuffled.push(nodes[k].clone());
                }
                nodes = shuffled;
                nodes
            })
    })
}

fn check_every_edge(nodes: &[Node], width: u16) -> Result<(), TestCaseError> {
    let Some(d) = layout(nodes, width) else {
        // Too wide for this width: the pane shows the one-line-per-step fallback.
        return Ok(());
    };
    let lines = to_strings(&d);
    let g = grid(&lines);
    let boxes: Vec<Boxed> = nodes.iter().map(|n| find_box(&g, &label(n))).collect();
    for (i, n) in nodes.iter().enumerate() {
        for dep in &n.deps {
            let j = nodes.iter().position(|m| &m.id == dep).unwrap();
            prop_assert!(
                traceable(&g, boxes[j], boxes[i]),
                "no line from {} down to {} at width {width}:\n{}",
                dep,
                n.id,
                lines.join("\n")
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_edge_of_a_random_dag_is_traceable(nodes in dag(), width in 30u16..160) {
        check_every_edge(&nodes, width)?;
    }
}

fn n(id: &str, deps: &[&str]) -> Node {
    Node {
        id: id.into(),
        kind: String::new(),
        deps: deps.iter().map(|s| s.to_string()).collect(),
        status: Status::Pending,
    }
}

/// kipchoge-bdi.jsonl's plan-1 shape: S4 depends on S2 (two layers up) and S3.
#[test]
fn an_edge_over_a_layer_gets_a_line_of_its_own() {
    let g = vec![
        n("S1", &[]),
        n("S2", &["S1"]),
        n("S3", &["S1", "S2"]),
        n("S4", &["S2", "S3"]),
        n("S5", &["S4"]),
    ];
    check_every_edge(&g, 60).unwrap();
    let lines = to_strings(&layout(&g, 60).unwrap());
    let text = lines.join("\n");
    // The S2 → S4 line passes S3's layer beside its box.
    let s3_row = lines.iter().find(|l| l.contains("S3")).unwrap();
    assert!(s3_row.matches('│').count() >= 3, "{text}");
}

/// A node that depends on nothing drawn (a dangling dependency) and nodes in a cycle still
/// lay out, and every edge that has a direction is traceable.
#[test]
fn dangling_and_cyclic_dependencies_do_not_break_the_others() {
    let g = vec![
        n("a", &[]),
        n("b", &["a", "ghost"]),
        n("c", &["b", "d"]),
        n("d", &["c"]),
        n("e", &["a", "b"]),
    ];
    let d = layout(&g, 80).expect("fits");
    let lines = to_strings(&d);
    let gr = grid(&lines);
    let bx = |i: usize| find_box(&gr, &label(&g[i]));
    assert!(traceable(&gr, bx(0), bx(1)));
    assert!(traceable(&gr, bx(0), bx(4)));
    assert!(traceable(&gr, bx(1), bx(4)));
    assert!(traceable(&gr, bx(1), bx(2)), "{}", lines.join("\n"));
}

/// The issue's own case: kipchoge-bdi.jsonl's plan-1, where S4 depends on S2 and S3, drawn
/// as the plan pane draws it; every dependency is traceable, S2 → S4 included.
#[test]
fn kipchoge_plan_1_draws_the_s2_to_s4_edge() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces/kipchoge-bdi.jsonl");
    let store = doxascope::tui::data::Store::from_bytes(
        "kipchoge-bdi.jsonl",
        &std::fs::read(path).unwrap(),
    );
    let (id, nodes) =
        doxascope::tui::panes::plan::plan_at(&store, &store.sessions[0], 19).expect("a plan");
    assert_eq!(id, "plan-1");
    let s4 = nodes.iter().find(|n| n.id == "S4").unwrap();
    assert!(s4.deps.contains(&"S2".to_string()) && s4.deps.contains(&"S3".to_string()));
    for width in [40, 60, 98] {
        check_every_edge(&nodes, width).unwrap();
    }
    // S2's line runs down beside S3's box, in a column of its own.
    let lines = to_strings(&layout(&nodes, 98).unwrap());
    let s3 = lines.iter().find(|l| l.contains("S3 compute")).unwrap();
    assert!(s3.trim_end().ends_with('│'), "{}", lines.join("\n"));
}
