//! The CLI's audit renders each session's findings as its audit ends and keeps them deflated
//! (`audit_spooled`); what it prints must be what the whole report prints: the JSON
//! byte for byte as serde_json pretty-prints [`Report::to_json`] (an independent printer),
//! the text as [`render_text`] of the whole report, and the same verdict. Reader problems
//! (which come first), several sessions merged in order, and findings of one code spread
//! over sessions are all exercised.

use std::path::Path;

use doxascope::model::Model;
use doxascope::model::audit::{
    AuditOptions, Form, Report, audit, audit_spooled, audit_spooled_releasing, render_text,
};
use doxascope::trace::generate::{GenConfig, write_mixed};

fn spooled(model: &Model, opts: &AuditOptions, form: Form) -> (String, bool, usize) {
    let s = audit_spooled(model, opts, form);
    let mut out = Vec::new();
    s.write(&mut out).expect("write to memory");
    (
        String::from_utf8(out).expect("UTF-8"),
        s.failed(),
        s.findings(),
    )
}

fn same(model: &Model, opts: &AuditOptions, what: &str) -> Report {
    let report = audit(model, opts);
    let json = serde_json::to_string_pretty(&report.to_json()).expect("JSON") + "\n";
    let (text, failed, n) = spooled(model, opts, Form::Text);
    assert_eq!(text, render_text(&report), "{what}: text");
    assert_eq!(failed, report.failed(), "{what}: verdict");
    assert_eq!(n, report.findings.len(), "{what}: count");
    let (spooled_json, failed, _) = spooled(model, opts, Form::Json);
    assert_eq!(spooled_json, json, "{what}: JSON");
    assert_eq!(failed, report.failed(), "{what}: verdict (JSON)");
    report
}

/// The bundled samples' trace files, in name order.
fn sample_files() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("sample-traces")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_sample_prints_the_same_spooled() {
    let files = sample_files();
    assert!(files.len() >= 5, "samples: {files:?}");
    let mut problems = 0;
    for f in &files {
        let model = Model::load(std::slice::from_ref(f)).expect("sample loads");
        problems += model.log().problems.len();
        same(&model, &AuditOptions::default(), &f.display().to_string());
    }
    // Reader problems (broken.jsonl) are among what was compared.
    assert!(problems > 0);
    // All samples at once: many sessions, codes spread over them.
    let all = Model::load(&files).expect("samples load");
    let report = same(&all, &AuditOptions::default(), "all samples");
    assert!(report.sessions.len() > 5);
}

#[test]
fn generated_sessions_merge_in_order_whatever_the_threads() {
    for (seed, sessions) in [(3, 4), (11, 7)] {
        let cfg = GenConfig {
            events: 6_000,
            seed,
            sessions,
            atoms: 40,
        };
        let mut bytes = Vec::new();
        write_mixed(&mut bytes, &cfg).expect("generator");
        let model = Model::from_bytes("gen.jsonl", &bytes);
        for threads in [1, 3] {
            let opts = AuditOptions {
                threads,
                ..AuditOptions::default()
            };
            let report = same(&model, &opts, &format!("seed {seed}, {threads} threads"));
            // Several codes, each with findings in several sessions.
            let spread = report
                .by_code()
                .keys()
                .filter(|c| {
                    let mut names: Vec<&str> = report
                        .findings
                        .iter()
                        .filter(|f| f.code == **c)
                        .map(|f| f.session.as_str())
                        .collect();
                    names.sort_unstable();
                    names.dedup();
                    names.len() > 1
                })
                .count();
            assert!(spread >= 3, "seed {seed}: {spread}");
        }
    }
}

/// The CLI's audit takes the timelines out of the model and drops each as its session ends
/// (`audit_spooled_releasing`): it prints what `audit_spooled` prints on the same model, with
/// reader problems (named after their sessions before the timelines go), several sessions
/// and both thread counts, and leaves the model without sessions.
#[test]
fn releasing_the_sessions_prints_the_same() {
    let files = sample_files();
    let cfg = GenConfig {
        events: 4_000,
        seed: 5,
        sessions: 5,
        atoms: 40,
    };
    let mut generated = Vec::new();
    write_mixed(&mut generated, &cfg).expect("generator");
    let load: [&dyn Fn() -> Model; 2] = [&|| Model::load(&files).expect("samples load"), &|| {
        Model::from_bytes("gen.jsonl", &generated)
    }];
    for (k, load) in load.iter().enumerate() {
        for threads in [1, 2] {
            let opts = AuditOptions {
                threads,
                ..AuditOptions::default()
            };
            for form in [Form::Text, Form::Json] {
                let kept = load();
                let want = spooled(&kept, &opts, form);
                let mut model = load();
                let sessions = model.timelines().len();
                assert!(sessions > 4, "input {k}: {sessions} sessions");
                let r = audit_spooled_releasing(&mut model, &opts, form);
                let mut out = Vec::new();
                r.write(&mut out).expect("write to memory");
                let got = (
                    String::from_utf8(out).expect("UTF-8"),
                    r.failed(),
                    r.findings(),
                );
                assert_eq!(got, want, "input {k}, {threads} threads, {form:?}");
                assert!(model.timelines().is_empty(), "the timelines were taken");
                assert!(!model.log().events.is_empty(), "the log stays");
            }
        }
    }
}

#[test]
fn no_findings_prints_the_same_spooled() {
    let text = r#"{"kind":"session","seq":1,"session":"s"}
{"kind":"announce","seq":2,"session":"s","id":"b1","formula":"p"}
"#;
    let model = Model::from_bytes("ok.jsonl", text.as_bytes());
    let report = same(&model, &AuditOptions::default(), "no findings");
    assert!(report.findings.is_empty());
}

/// Decoded events kept to the end of the audit (pinned in the store) grow with the trace: on
/// the 1-million-event trace, every announcement with a citation, every retracted belief,
/// every revise and every plan step kept decoded were a third of the audit's heap, and the
/// plans, intentions and satisfactions the BDI checks hold views of stayed pinned after them
/// (8% of the 1M audit's peak heap). Every event is now decoded for the step or the check
/// that reads it and dropped with it.
#[test]
fn the_audit_pins_almost_nothing() {
    use doxascope::trace::event::Kind;
    let cfg = GenConfig {
        events: 20_000,
        seed: 5,
        sessions: 3,
        atoms: 40,
    };
    let mut bytes = Vec::new();
    write_mixed(&mut bytes, &cfg).expect("generator");
    let dir = std::env::temp_dir().join(format!("doxascope-audit-pins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("gen.jsonl");
    std::fs::write(&file, &bytes).expect("write trace");
    let model = Model::load(std::slice::from_ref(&file)).expect("loads");
    let events = &model.log().events;
    let count = |k: Kind| {
        (0..events.len())
            .filter(|&i| events.kind(i) == Some(Some(k)))
            .count()
    };
    let plans = count(Kind::Plan);
    let announces = count(Kind::Announce);
    assert_eq!(events.pinned(), 0);
    let report = audit(&model, &AuditOptions::default());
    assert!(announces > 1_000 && plans > 100 && !report.findings.is_empty());
    // `load` borrows an event that is pinned (none is resident in a model read from a file).
    let mut pinned_by_kind = std::collections::BTreeMap::new();
    for i in 0..events.len() {
        if matches!(events.load(i), Some(std::borrow::Cow::Borrowed(_))) {
            *pinned_by_kind.entry(events.kind(i)).or_insert(0) += 1;
        }
    }
    std::fs::remove_dir_all(&dir).expect("remove temp dir");
    assert_eq!(
        pinned_by_kind.values().sum::<usize>(),
        events.pinned(),
        "{pinned_by_kind:?}"
    );
    // Only the trigger announcements of revisions the checks re-run (a handful) may stay
    // pinned.
    let mut others = 0;
    for (k, n) in &pinned_by_kind {
        match k {
            Some(Some(Kind::Announce)) => others += n,
            k => panic!("{n} events of kind {k:?} pinned: {pinned_by_kind:?}"),
        }
    }
    assert!(
        others * 100 <= announces,
        "{others} of {announces} announcements pinned: {pinned_by_kind:?}"
    );
}
