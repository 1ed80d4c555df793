//! Render tests: every pane on the samples at two sizes, against snapshot files in
//! `tests/snapshots/` (text only; styles are asserted separately). A missing or different
//! snapshot fails; run with `UPDATE_SNAPSHOTS=1` to write them, then review the diff.
//!
//! Besides snapshots, each test asserts the content a user relies on, so a snapshot
//! accepted by mistake does not hide a regression.

use std::path::PathBuf;

use doxascope::tui::app::{App, Pane};
use doxascope::tui::audit_job::Auditor;
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::text::is_clean;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;

fn sample(name: &str) -> App {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name);
    let bytes = std::fs::read(&path).expect("sample exists");
    highlight::load_now();
    let store = Store::from_bytes(name, &bytes);
    audited(App::new(store, Theme::builtin("dark").expect("dark theme")))
}

/// The view once the background audit has answered (run here on the test's thread).
fn audited(mut app: App) -> App {
    let mut auditor = Auditor::default();
    if let Some(req) = app.recompute_input(true) {
        let (session, version) = (req.delta.session, req.version);
        auditor.add(req);
        app.on_analysis(auditor.analyse(session, version));
    }
    app.status.clear();
    app
}

fn snapshot(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, text).expect("write snapshot");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {path:?}; run with UPDATE_SNAPSHOTS=1"));
    if want != text {
        panic!("snapshot {name} differs.\n--- want\n{want}\n--- got\n{text}");
    }
}

fn zoomed(app: &mut App, pane: Pane, w: u16, h: u16) -> String {
    app.focus = pane;
    app.detail_from = if matches!(
        pane,
        Pane::Sigma | Pane::Verify | Pane::Retract | Pane::Timeline
    ) {
        pane
    } else {
        Pane::Timeline
    };
    app.zoom = true;
    render_text(app, w, h)
}

const SIZES: [(u16, u16); 2] = [(100, 30), (60, 16)];

#[test]
fn sigma_pane_shows_beliefs_with_status_and_retractions() {
    for (w, h) in SIZES {
        let mut app = sample("greedysat-stress.jsonl");
        let s = zoomed(&mut app, Pane::Sigma, w, h);
        snapshot(&format!("sigma_greedysat_{w}x{h}"), &s);
        assert!(s.contains("Σ beliefs"), "{s}");
        assert!(
            s.contains("retracted@"),
            "retracted beliefs are shown as such:\n{s}"
        );
        assert!(is_clean(&s));
    }
    // At the last step of the treasure hunt the map's belief is active with its confidence.
    let mut app = sample("treasure-hunt.jsonl");
    let s = zoomed(&mut app, Pane::Sigma, 120, 20);
    assert!(
        s.contains("t2-map-b") && s.contains("0.95") && s.contains("tool:ask_map"),
        "{s}"
    );
}

#[test]
fn plan_pane_draws_the_dag_and_falls_back_when_narrow() {
    for (w, h) in SIZES {
        let mut app = sample("kipchoge-bdi.jsonl");
        let s = zoomed(&mut app, Pane::Plan, w, h);
        snapshot(&format!("plan_kipchoge_{w}x{h}"), &s);
        assert!(s.contains("intention int-1"), "{s}");
        assert!(s.contains("plan plan-2"), "{s}");
    }
    let mut app = sample("kipchoge-bdi.jsonl");
    let wide = zoomed(&mut app, Pane::Plan, 120, 40);
    assert!(wide.contains("┌") && wide.contains("✓ S1 fetch"), "{wide}");
    // Too narrow for the S1/S2 layer side by side: one line per step with its dependencies.
    let narrow = zoomed(&mut app, Pane::Plan, 26, 30);
    assert!(narrow.contains("✓ S3 compute ← S1, S2"), "{narrow}");
    // Back in time the later steps are pending and one is running.
    app.view_mut().follow = false;
    app.goto_step(28);
    let mid = zoomed(&mut app, Pane::Plan, 120, 40);
    assert!(mid.contains("·") || mid.contains("▶"), "{mid}");
}

#[test]
fn verification_pane_lists_claims_newest_first() {
    for (w, h) in SIZES {
        let mut app = sample("treasure-hunt.jsonl");
        let s = zoomed(&mut app, Pane::Verify, w, h);
        snapshot(&format!("verify_treasure_{w}x{h}"), &s);
        assert!(s.contains("claimed"), "{s}");
    }
    let mut app = sample("treasure-hunt.jsonl");
    let s = zoomed(&mut app, Pane::Verify, 120, 20);
    let contra = s
        .find("contradiction")
        .expect("the contradiction claim is listed");
    let newinfo = s.find("newinfo").expect("a newinfo claim is listed");
    assert!(contra < newinfo, "newest first:\n{s}");
}

#[test]
fn retractions_pane_shows_trigger_dropped_and_policy() {
    for (w, h) in SIZES {
        let mut app = sample("greedysat-stress.jsonl");
        let s = zoomed(&mut app, Pane::Retract, w, h);
        snapshot(&format!("retract_greedysat_{w}x{h}"), &s);
        assert!(s.contains("revise"), "{s}");
    }
    let mut app = sample("greedysat-stress.jsonl");
    let s = zoomed(&mut app, Pane::Retract, 140, 20);
    assert!(s.contains("trigger b9 dropped b4 policy greedy"), "{s}");
}

#[test]
fn retractions_pane_shows_what_the_model_linked() {
    let t = r#"{"kind":"announce","formula":"p","id":"a"}
{"kind":"announce","formula":"~p","id":"b"}
{"kind":"revise","trigger":"b","retracted":["a"],"policy":"greedy"}
{"kind":"retract","target":"a","by":"revision"}
{"kind":"retract","target":"ghost"}
"#;
    highlight::load_now();
    let mut app = App::new(
        Store::from_bytes("r.jsonl", t.as_bytes()),
        Theme::builtin("dark").expect("dark theme"),
    );
    let end = zoomed(&mut app, Pane::Retract, 100, 10);
    assert!(end.contains("ghost (names no active belief)"), "{end}");
    assert!(
        !end.contains("pending"),
        "the revise was carried out:\n{end}"
    );
    app.view_mut().follow = false;
    app.goto_step(3);
    let mid = zoomed(&mut app, Pane::Retract, 100, 10);
    assert!(
        mid.contains("policy greedy pending a"),
        "not yet applied at step 3:\n{mid}"
    );
}

#[test]
fn timeline_pane_marks_kinds_flags_and_draws_the_density_strip() {
    for (w, h) in SIZES {
        let mut app = sample("greedysat-stress.jsonl");
        let s = zoomed(&mut app, Pane::Timeline, w, h);
        snapshot(&format!("timeline_greedysat_{w}x{h}"), &s);
        assert!(s.contains("revise"), "{s}");
        assert!(s.contains('█'), "contradictions on the density strip:\n{s}");
    }
}

#[test]
fn parse_errors_are_timeline_rows_with_their_location() {
    let t = "{\"kind\":\"announce\",\"formula\":\"p\",\"id\":\"a\"}\nnot json \u{1b}[31mred\n{\"kind\":\"announce\",\"formula\":\"q &\"}\n";
    highlight::load_now();
    let mut app = audited(App::new(
        Store::from_bytes("bad.jsonl", t.as_bytes()),
        Theme::builtin("dark").expect("dark theme"),
    ));
    let s = zoomed(&mut app, Pane::Timeline, 100, 12);
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("announce") || l.contains("parse-error"))
        .collect();
    assert_eq!(rows.len(), 3, "{s}");
    assert!(
        rows[0].contains("announce")
            && rows[1].contains("parse-error")
            && rows[2].contains("announce"),
        "in file order:\n{s}"
    );
    assert!(rows[1].contains("! ") && rows[1].contains("line 2:"), "{s}");
    assert!(
        rows[2].contains("! "),
        "the formula error is an audit finding:\n{s}"
    );
    // The detail of the problem row: file:line:column: message, sanitized.
    app.view_mut().follow = false;
    app.goto(1);
    let d = zoomed(&mut app, Pane::Detail, 120, 20);
    assert!(d.contains("bad.jsonl:2:2: expected ident"), "{d}");
    assert!(d.contains("finding    parse-error (error)"), "{d}");
    assert!(is_clean(&d) && !d.contains('\u{1b}'), "{d}");
    // The header counts the bad line and the audit's findings (the line and the formula).
    let h = render_text(&mut app, 160, 45);
    assert!(
        h.contains("parse errors: 1") && h.contains("findings: 2"),
        "{h}"
    );
}

#[test]
fn detail_pane_shows_provenance_and_raw_json() {
    for (w, h) in SIZES {
        let mut app = sample("dns-troubleshooting.jsonl");
        app.view_mut().follow = false;
        app.goto_step(6);
        let s = zoomed(&mut app, Pane::Detail, w, h);
        snapshot(&format!("detail_dns_{w}x{h}"), &s);
        assert!(
            s.contains("dns-troubleshooting.jsonl:6"),
            "provenance to file:line:\n{s}"
        );
    }
    let mut app = sample("treasure-hunt.jsonl");
    let s = zoomed(&mut app, Pane::Detail, 120, 40);
    assert!(s.contains("raw event") && s.contains("\"kind\""), "{s}");
}

#[test]
fn sigma_pane_shows_ground_beliefs_as_key_rows() {
    // Seed 004's Kipchoge run holds no announced formula: its Σ is its nine ground beliefs,
    // each a value atom with its source, never an empty pane.
    let mut app = sample("kipchoge-bdi.jsonl");
    let s = zoomed(&mut app, Pane::Sigma, 140, 20);
    snapshot("sigma_kipchoge_140x20", &s);
    // Nine held; numerator's first write, re-written with the same value, is shown ended.
    assert!(s.contains("Σ beliefs 10"), "{s}");
    assert_eq!(s.matches(" active ").count(), 9, "{s}");
    assert!(s.contains("retracted@24"), "{s}");
    for row in [
        "numerator = \"356400\" km",
        "denominator = \"20.9\" \"km/h\"",
        "final_answer = \"17\" \"thousand hours\"",
        "web_search",
        "synthesis",
    ] {
        assert!(s.contains(row), "{row} missing:\n{s}");
    }
    assert!(is_clean(&s));
}

#[test]
fn full_screen_of_every_sample() {
    for name in [
        "alice-bob-norms.jsonl",
        "dns-troubleshooting.jsonl",
        "greedysat-stress.jsonl",
        "kipchoge-bdi.jsonl",
        "treasure-hunt.jsonl",
    ] {
        let mut app = sample(name);
        let s = render_text(&mut app, 160, 45);
        snapshot(&format!("screen_{}", name.trim_end_matches(".jsonl")), &s);
        assert!(s.contains(&format!("session {name}")), "{s}");
        for p in Pane::ALL {
            assert!(s.contains(p.title()), "{} missing:\n{s}", p.title());
        }
        assert!(is_clean(&s));
    }
}

#[test]
fn an_80x24_terminal_shows_sigma_the_timeline_the_repl_line_and_what_is_hidden() {
    let mut app = sample("treasure-hunt.jsonl");
    let s = render_text(&mut app, 80, 24);
    snapshot("screen_treasure-hunt_80x24", &s);
    for shown in ["Σ beliefs", "timeline", "REPL", "step 23 of 23"] {
        assert!(s.contains(shown), "{shown} missing:\n{s}");
    }
    assert!(s.contains("hidden: plan, verify, retract, detail"), "{s}");
    // A pane Tab reaches that is hidden takes Σ's place while it has the focus.
    app.focus = Pane::Verify;
    let s = render_text(&mut app, 80, 24);
    assert!(
        s.contains("verification") && !s.contains("Σ beliefs"),
        "{s}"
    );
    assert!(s.contains("hidden: plan, retract, detail"), "{s}");
    // The hints stay when a message is shown: messages have their own line.
    app.status = "audit: 2 finding(s)".into();
    let s = render_text(&mut app, 80, 24);
    assert!(
        s.contains("audit: 2 finding(s)") && s.contains("? help"),
        "{s}"
    );
    assert!(is_clean(&s));
}

#[test]
fn no_panic_at_any_size() {
    let mut app = sample("kipchoge-bdi.jsonl");
    app.help = true;
    let mut sizes: Vec<(u16, u16)> = Vec::new();
    for w in [1u16, 2, 5, 19, 20, 21, 40, 80, 89, 90, 91, 120, 200, 500] {
        for h in [1u16, 2, 3, 5, 6, 7, 12, 21, 22, 23, 40, 60, 200] {
            sizes.push((w, h));
        }
    }
    for (w, h) in sizes {
        // The split layout once, then each pane alone (zoomed): every drawing path.
        let views = std::iter::once((false, Pane::Repl)).chain(Pane::ALL.map(|p| (true, p)));
        for (zoom, p) in views {
            app.zoom = zoom;
            app.focus = p;
            let s = render_text(&mut app, w, h);
            assert_eq!(s.lines().count(), usize::from(h), "{w}x{h}");
        }
    }
    let s = render_text(&mut app, 10, 3);
    assert!(s.contains("terminal"), "{s}");
}

/// Seed 004's failure modes reach the TUI as the audit reports them: the detail pane of the
/// event a finding is about shows its code and sentence.
#[test]
fn failure_taxonomy_findings_show_in_the_detail_pane() {
    for (name, step, code, words) in [
        (
            "bdi-bad-retrieval.jsonl",
            15,
            "bad-retrieval",
            "nothing was retrieved",
        ),
        (
            "bdi-bad-retrieval.jsonl",
            25,
            "bad-retrieval",
            "wrong (expected 17)",
        ),
        (
            "bdi-file-read.jsonl",
            11,
            "file-read-avoided",
            "menu_sales.xlsx",
        ),
        (
            "bdi-file-read.jsonl",
            19,
            "failure-mode-mismatch",
            "avoided_file_read",
        ),
        (
            "bdi-computation.jsonl",
            20,
            "incorrect-computation",
            "17820",
        ),
        ("bdi-answer-format.jsonl", 26, "answer-formatting", "16.95"),
        (
            "kipchoge-bdi.jsonl",
            19,
            "failure-mode-recorded",
            "verification_false_positive",
        ),
    ] {
        let mut app = sample(name);
        app.view_mut().follow = false;
        app.goto_step(step);
        let s = zoomed(&mut app, Pane::Detail, 200, 40);
        assert!(
            s.contains(code) && s.contains(words),
            "{name} step {step}:\n{s}"
        );
    }
}

/// Seed 000's Table 1 followed step by step in the TUI, including the revision of step 5:
/// Σ at each row of the table, the contradiction at the user's correction, and the
/// retractions pane showing what the `confidence` policy dropped.
#[test]
fn treasure_hunt_table_1_step_by_step_with_the_revision() {
    let mut app = sample("treasure-hunt.jsonl");
    app.view_mut().follow = false;
    // (trace step, the paper's row, ids in Σ)
    for (step, row, ids) in [
        (2u64, "0", &[][..]),
        (5, "1", &["t1-domain"][..]),
        (8, "2", &["t1-domain", "t2-map-b"][..]),
        (11, "3", &["t1-domain", "t2-map-b", "t3-not-a"][..]),
        (13, "4", &["t1-domain", "t2-map-b", "t3-not-a"][..]),
        (
            15,
            "5",
            &["t1-domain", "t2-map-b", "t3-not-a", "t5-user-a"][..],
        ),
        (21, "5, revised", &["t1-domain", "t5-user-a"][..]),
    ] {
        app.goto_step(step);
        let s = zoomed(&mut app, Pane::Sigma, 120, 16);
        for id in ["t1-domain", "t2-map-b", "t3-not-a", "t5-user-a"] {
            let active = s
                .lines()
                .any(|l| l.contains(id) && l.contains("active") && !l.contains("retracted"));
            assert_eq!(
                active,
                ids.contains(&id),
                "row {row} (step {step}), {id}:\n{s}"
            );
        }
    }
    app.goto_step(21);
    let s = zoomed(&mut app, Pane::Retract, 140, 12);
    assert!(s.contains("trigger t5-user-a"), "{s}");
    assert!(s.contains("t2-map-b") && s.contains("t3-not-a"), "{s}");
    assert!(s.contains("policy confidence"), "{s}");
    // No finding: the contradiction was handled, and the header says so.
    assert!(s.contains("findings: 0"), "{s}");
}

#[test]
fn an_overwritten_value_is_a_row_of_the_retractions_pane() {
    let trace = concat!(
        r#"{"kind":"belief","seq":1,"name":"seat","value":"aisle","source":"memory:create"}"#,
        "\n",
        r#"{"kind":"belief","seq":2,"name":"seat","value":"window","source":"memory:update"}"#,
        "\n",
        r#"{"kind":"retract","seq":3,"target":"seat","by":"agent"}"#,
        "\n",
    );
    highlight::load_now();
    let store = Store::from_bytes("kv.jsonl", trace.as_bytes());
    let mut app = audited(App::new(store, Theme::builtin("dark").expect("dark theme")));
    let s = zoomed(&mut app, Pane::Retract, 120, 12);
    assert!(s.contains("retractions 2"), "{s}");
    assert!(
        s.contains(r#"2 overwrite seat = "aisle" → seat = "window""#),
        "{s}"
    );
    assert!(s.contains("retract seat by agent"), "{s}");
    assert!(is_clean(&s));
}

/// Reader warnings (a duplicate `seq`, time going backwards, a BOM mid-file) are about lines
/// that were kept as events: they are shown and counted as warnings, not as parse errors.
#[test]
fn reader_warnings_are_warnings_not_parse_errors() {
    let t = concat!(
        "{\"kind\":\"announce\",\"seq\":1,\"ts\":\"2026-03-01T09:00:05Z\",\"formula\":\"p\",\"id\":\"a\"}\n",
        "{\"kind\":\"announce\",\"seq\":1,\"ts\":\"2026-03-01T09:00:06Z\",\"formula\":\"q\",\"id\":\"b\"}\n",
        "{\"kind\":\"announce\",\"seq\":2,\"ts\":\"2026-03-01T09:00:01Z\",\"formula\":\"r\",\"id\":\"c\"}\n",
        "\u{feff}{\"kind\":\"announce\",\"seq\":3,\"formula\":\"s\",\"id\":\"d\"}\n",
        "not json\n",
    );
    highlight::load_now();
    let mut app = audited(App::new(
        Store::from_bytes("warn.jsonl", t.as_bytes()),
        Theme::builtin("dark").expect("dark theme"),
    ));
    let s = zoomed(&mut app, Pane::Timeline, 120, 16);
    let warned: Vec<&str> = s.lines().filter(|l| l.contains(" warning ")).collect();
    assert_eq!(warned.len(), 3, "one row per warning:\n{s}");
    for l in &warned {
        assert!(l.contains("· warning"), "{l}\n{s}");
    }
    let errors: Vec<&str> = s.lines().filter(|l| l.contains("parse-error")).collect();
    assert_eq!(errors.len(), 1, "the line that is not JSON:\n{s}");
    assert!(errors[0].contains("! "), "{s}");
    // Every announce was kept.
    assert_eq!(s.matches("announce").count(), 4, "{s}");
    let h = render_text(&mut app, 200, 40);
    let head = h.lines().next().unwrap_or("");
    assert!(
        head.contains("parse errors: 1") && head.contains("warnings: 3"),
        "{head}"
    );
    // The detail of a warning row names it as such.
    app.view_mut().follow = false;
    app.goto(1);
    let d = zoomed(&mut app, Pane::Detail, 120, 20);
    assert!(d.contains("kind       warning"), "{d}");
    assert!(d.contains("warning: the line was kept"), "{d}");
}

/// The header's first line at `w` columns.
fn header_at(app: &mut App, w: u16, h: u16) -> String {
    render_text(app, w, h)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// At 80x24 the header keeps what an auditor reads first: the step, the findings and the
/// demo's play state; less important parts are shortened or dropped instead.
#[test]
fn an_80_column_header_keeps_the_step_the_findings_and_the_demo_state() {
    let mut app = sample("greedysat-stress.jsonl");
    let wide = header_at(&mut app, 200, 30);
    assert!(
        wide.contains("doxascope") && wide.contains("session greedysat-stress.jsonl"),
        "{wide}"
    );
    for w in [80u16, 60, 40] {
        let head = header_at(&mut app, w, 24);
        assert!(head.contains("findings: "), "{w}: {head}");
        assert!(head.contains("step ") || head.contains('/'), "{w}: {head}");
    }
    let head = header_at(&mut app, 80, 24);
    assert!(head.contains("step ") && head.contains(" of "), "{head}");
    let mut demo = App::new(Store::new(), Theme::builtin("dark").expect("dark theme"));
    demo.demo = Some(doxascope::tui::demo_player(&doxascope::tui::DemoOptions {
        config: doxascope::demo::DemoConfig::default(),
        dialogues: 2,
        speed: 1.0,
        scripted: None,
    }));
    // A few events in, playing.
    let mut now = std::time::Instant::now();
    for _ in 0..6 {
        if let Some(due) = demo.demo_next_due(now) {
            now = due;
        }
        demo.demo_tick(now);
    }
    let head = header_at(&mut demo, 80, 24);
    assert!(
        head.contains("demo ▶ x1.0") && head.contains("findings: ") && head.contains("step "),
        "{head}"
    );
}

/// A file read once (`--no-follow`, or imported) is never followed: the header does not say
/// FOLLOW for it, but does for a followed file.
#[test]
fn the_header_says_follow_only_for_a_source_that_grows() {
    let mut app = sample("treasure-hunt.jsonl");
    let head = header_at(&mut app, 160, 30);
    assert!(
        !head.contains("FOLLOW") && head.contains("READ ONCE"),
        "{head}"
    );
    app.sources.add_file(PathBuf::from("treasure-hunt.jsonl"));
    let head = header_at(&mut app, 160, 30);
    assert!(head.contains("● FOLLOW"), "{head}");
    app.view_mut().follow = false;
    app.goto_step(3);
    let head = header_at(&mut app, 160, 30);
    assert!(head.contains("PAUSED"), "{head}");
}

/// The verification pane's rows at `w` columns, in the full layout (not zoomed).
fn verify_rows(app: &mut App, w: u16) -> Vec<String> {
    app.zoom = false;
    app.focus = Pane::Timeline;
    let s = render_text(app, w, 40);
    let start = s.find("verification").expect("the verification pane");
    let top = s[..start].lines().count() - 1;
    let left = s
        .lines()
        .nth(top)
        .unwrap()
        .chars()
        .take_while(|c| *c != '┌' && *c != '┏');
    let x = left.count();
    s.lines()
        .skip(top + 1)
        .take_while(|l| !l.chars().nth(x).is_some_and(|c| c == '└' || c == '┗'))
        .map(|l| l.chars().skip(x).take(w as usize / 2).collect())
        .collect()
}

/// Columns are sized by what they hold: at 120 and 105 columns the formulas show whole
/// beside the claims (no empty `tier` column holds room), and at any width two different
/// formulas are never cut to the same text.
#[test]
fn verification_columns_are_sized_by_content_and_keep_formulas_apart() {
    let mut app = sample("treasure-hunt.jsonl");
    for w in [120u16, 105] {
        let rows = verify_rows(&mut app, w).join("\n");
        assert!(
            rows.contains("treasure_in_a ") && rows.contains("treasure_in_b "),
            "{w}:\n{rows}"
        );
        assert!(
            !rows.contains("tier"),
            "an empty tier column is dropped:\n{rows}"
        );
    }
    // Narrow: whatever the width, the rows of B and of A read differently.
    for w in 30u16..70 {
        let s = zoomed(&mut app, Pane::Verify, w, 12);
        let cell = |step: &str| -> String {
            let l = s
                .lines()
                .find(|l| l.trim_start_matches(['┃', '│']).starts_with(step))
                .unwrap_or_else(|| panic!("step {step}:\n{s}"));
            l.split_whitespace().nth(1).unwrap_or("").to_string()
        };
        assert_ne!(cell("14 "), cell("7 "), "{w}:\n{s}");
        assert_ne!(cell("14 "), cell("10 "), "{w}:\n{s}");
    }
}
