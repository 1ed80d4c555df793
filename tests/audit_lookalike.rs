//! `mixed-script-atom`: an atom whose letters mix scripts (`"аdmin"` with a Cyrillic `а`)
//! renders like another atom. The audit reports it once per atom, and the TUI marks the
//! formulas holding one; names in one script, or Latin with a CJK writing system, are not
//! flagged.

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Report, audit};
use doxascope::tui::app::{App, Pane};
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;

fn run(lines: &[&str]) -> Report {
    let bytes = lines.join("\n") + "\n";
    audit(
        &Model::from_bytes("t.jsonl", bytes.as_bytes()),
        &AuditOptions::default(),
    )
}

/// `"аdmin"`: the first letter is U+0430 CYRILLIC SMALL LETTER A.
const LOOKALIKE: &str = r#"{"kind":"announce","id":"b1","formula":"\"аdmin\" -> granted"}"#;

#[test]
fn a_mixed_script_atom_is_reported_once_with_its_scripts() {
    let r = run(&[
        r#"{"kind":"announce","id":"b0","formula":"\"admin\" -> granted"}"#,
        LOOKALIKE,
        r#"{"kind":"query","formula":"\"аdmin\""}"#,
        r#"{"kind":"announce","id":"b2","formula":"Access(\"pаypal\", x) | q"}"#,
    ]);
    let fs: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.code == Code::MixedScriptAtom)
        .collect();
    assert_eq!(fs.len(), 2, "{:#?}", r.findings);
    let f = fs[0];
    assert_eq!(f.step, Some(2), "at the first event using it");
    assert_eq!(f.evidence["atom"], "аdmin");
    assert_eq!(
        f.evidence["scripts"],
        serde_json::json!(["Cyrillic", "Latin"])
    );
    assert!(
        f.message.contains(r#"Cyrillic "а", Latin "dmin""#),
        "{}",
        f.message
    );
    assert_eq!(f.formulas, [r#""аdmin" -> granted"#]);
    // A predicate's constant is a name too.
    assert_eq!(fs[1].evidence["atom"], "pаypal");
    assert_eq!(fs[1].step, Some(4));
}

#[test]
fn names_in_one_script_or_latin_with_cjk_are_not_reported() {
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"\"admin\" & \"админ\" & \"Ελλάδα\""}"#,
        r#"{"kind":"announce","id":"b","formula":"\"東京タワー\" | \"Tokyo東京\" | \"서울 Seoul\""}"#,
        r#"{"kind":"announce","id":"c","formula":"\"café_42\" -> \"naïve résumé\""}"#,
    ]);
    assert!(
        r.findings.iter().all(|f| f.code != Code::MixedScriptAtom),
        "{:#?}",
        r.findings
    );
}

#[test]
fn the_tui_marks_a_look_alike_in_sigma_and_says_how_it_is_made_in_the_detail_pane() {
    highlight::load_now();
    let bytes = format!(
        "{}\n{}\n",
        r#"{"kind":"announce","id":"b0","formula":"\"admin\" -> granted"}"#, LOOKALIKE
    );
    let mut app = App::new(
        Store::from_bytes("t.jsonl", bytes.as_bytes()),
        Theme::builtin("dark").unwrap(),
    );
    let s = render_text(&mut app, 160, 45);
    let row = |id: &str| {
        s.lines()
            .find(|l| l.contains(&format!("{id} ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("b1").contains("⟨mixed script⟩ \"аdmin\""), "{s}");
    assert!(!row("b0").contains("mixed script"), "{s}");
    // The detail pane of b1.
    app.focus = Pane::Sigma;
    app.detail_from = Pane::Sigma;
    app.panes.sigma.sel = 1;
    let s = render_text(&mut app, 160, 45);
    assert!(
        s.contains(r#"look-alike ⟨mixed script⟩ "аdmin" mixes Cyrillic "а", Latin "dmin""#),
        "{s}"
    );
}
