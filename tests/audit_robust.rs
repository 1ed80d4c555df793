//! The audit on large generated traces (every event kind, unknown kinds and fields, several
//! interleaved sessions) and on mangled input: it never panics, and every finding is
//! well-formed (a known session, a step within it, a location, a sentence).

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Report, audit, audit_recomputed};
use doxascope::trace::generate::{GenConfig, write_mixed};
use proptest::prelude::*;

fn well_formed(model: &Model, r: &Report) {
    for f in &r.findings {
        assert!(f.message.ends_with('.'), "not a sentence: {}", f.message);
        if let Some(step) = f.step {
            let tl = model
                .timeline(&f.session)
                .unwrap_or_else(|| panic!("unknown session {}", f.session));
            assert!(step >= 1 && step <= tl.len(), "{step} outside {}", tl.len());
            let loc = f
                .location
                .as_ref()
                .expect("an event finding has a location");
            assert!(loc.line >= 1);
        }
    }
    let json = r.to_json();
    assert_eq!(
        json["findings"].as_array().map(Vec::len),
        Some(r.findings.len())
    );
    assert!(serde_json::to_string(&json).is_ok());
    assert_eq!(r.matrix.total(), {
        let mut n = 0;
        for tl in model.timelines() {
            for &(_, pos) in tl.verifies() {
                if let Some(doxascope::trace::event::Body::Verify(v)) =
                    model.event(pos).map(|e| &e.body)
                    && v.outcome.is_some()
                {
                    n += 1;
                }
            }
        }
        n
    });
}

#[test]
fn generated_traces_audit_cleanly() {
    for seed in [1, 2] {
        let mut bytes = Vec::new();
        write_mixed(
            &mut bytes,
            &GenConfig {
                events: 1000,
                seed,
                sessions: 3,
                atoms: 12,
            },
        )
        .expect("generate");
        let model = Model::from_bytes("gen.jsonl", &bytes);
        let r = audit(&model, &AuditOptions::default());
        well_formed(&model, &r);
        assert_eq!(r.sessions.len(), 3);
        // Auditing from recomputations made beforehand gives the same report.
        let rcs: Vec<_> = model
            .timelines()
            .iter()
            .filter_map(|tl| model.recompute(tl.name(), &AuditOptions::default().recompute))
            .collect();
        assert_eq!(audit_recomputed(&model, &rcs, &AuditOptions::default()), r);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Sample lines cut, duplicated and shuffled: still an audit, never a panic.
    #[test]
    fn mangled_samples_never_panic(
        picks in prop::collection::vec((0usize..5, 0usize..64, 0usize..400), 1..30)
    ) {
        let samples: Vec<String> = ["treasure-hunt", "dns-troubleshooting", "alice-bob-norms",
            "greedysat-stress", "kipchoge-bdi"]
            .iter()
            .map(|s| {
                std::fs::read_to_string(format!(
                    "{}/sample-traces/{s}.jsonl",
                    env!("CARGO_MANIFEST_DIR")
                ))
                .expect("sample")
            })
            .collect();
        let mut text = String::new();
        for (s, line, cut) in picks {
            let lines: Vec<&str> = samples[s].lines().collect();
            let l = lines[line % lines.len()];
            // Sometimes keep the line whole, sometimes cut it (on a char boundary).
            let end = if cut % 3 == 0 {
                l.len()
            } else {
                l.char_indices().map(|(i, _)| i).nth(cut % l.chars().count().max(1)).unwrap_or(l.len())
            };
            text.push_str(&l[..end]);
            text.push('\n');
        }
        let model = Model::from_bytes("m.jsonl", text.as_bytes());
        let r = audit(&model, &AuditOptions::default());
        well_formed(&model, &r);
    }
}
