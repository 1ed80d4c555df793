//! Ground beliefs (`belief` events, steps' `new_beliefs`) as members of Σ: value atoms with
//! their writes, overwrites as revisions, retractions of a key.

use doxascope::model::{Model, RecomputeOptions, RetractedBy};

const TRACE: &str = r#"{"kind":"session","v":1,"seq":1,"session":"g"}
{"kind":"belief","seq":2,"session":"g","name":"user-prefs/seat","value":"aisle","source":"memory:create"}
{"kind":"announce","seq":3,"session":"g","id":"r1","formula":"balance_ok -> status = \"paid\"","role":"rule"}
{"kind":"belief","seq":4,"session":"g","name":"status","value":"due","source":"tool:billing"}
{"kind":"belief","seq":5,"session":"g","name":"user-prefs/seat","value":"window","source":"memory:update"}
{"kind":"retract","seq":6,"session":"g","target":"status","reason":"memory deleted"}
{"kind":"belief","seq":7,"session":"g","name":"count","value":3.0}
{"kind":"belief","seq":8,"session":"g","name":"blob","value":{"b":[1,2],"a":null}}
{"kind":"belief","seq":9,"session":"g","name":"empty"}
"#;

fn sigma(m: &Model, t: u32) -> Vec<(String, String)> {
    m.sigma_at("g", t)
        .unwrap()
        .iter()
        .map(|b| (b.id().to_string(), b.formula_text().to_string()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn writes_overwrites_and_retractions_of_keys() {
    let m = Model::from_bytes("g.jsonl", TRACE.as_bytes());
    let tl = m.timeline("g").unwrap();
    assert!(tl.errors().is_empty(), "{:?}", tl.errors());
    assert_eq!(
        sigma(&m, 4),
        pairs(&[
            ("user-prefs/seat", r#"user-prefs/seat = "aisle""#),
            ("r1", r#"balance_ok -> status = "paid""#),
            ("status", r#"status = "due""#),
        ])
    );
    // The overwrite ends the old value at the writing event's step, as a revision.
    assert_eq!(
        sigma(&m, 6),
        pairs(&[
            ("r1", r#"balance_ok -> status = "paid""#),
            ("user-prefs/seat", r#"user-prefs/seat = "window""#),
        ])
    );
    let seat: Vec<_> = tl.records_of("user-prefs/seat").collect();
    assert_eq!(seat.len(), 2);
    let old = seat[0].1.retraction.unwrap();
    assert_eq!((old.step, old.by), (5, RetractedBy::Superseded));
    assert_eq!(tl.overwrites().len(), 1);
    let ow = tl.overwrites()[0];
    assert_eq!((ow.step, ow.old, ow.new), (5, seat[0].0, seat[1].0));
    assert!(tl.is_ground(seat[0].0) && !tl.is_ground(tl.records_of("r1").next().unwrap().0));
    // The retract of a key ends its record and the BDI log's held value both.
    let status = tl.records_of("status").next().unwrap().1;
    assert_eq!(status.retraction.map(|r| r.step), Some(6));
    let rt = tl.retracts().last().unwrap();
    assert!(rt.record.is_some() && rt.ground.is_some());
    assert!(!tl.bdi_log().known_by("status", 6));
    assert!(tl.bdi_log().known_by("status", 5));
    // Numbers and JSON canonical; a belief without a value holds null.
    let end = sigma(&m, 9);
    assert!(
        end.contains(&("count".into(), "count = 3".into())),
        "{end:?}"
    );
    assert!(
        end.contains(&("blob".into(), r#"blob = {"a":null,"b":[1,2]}"#.into())),
        "{end:?}"
    );
    assert!(
        end.contains(&("empty".into(), "empty = null".into())),
        "{end:?}"
    );
    // The recomputation walks the session without errors.
    let r = m.recompute("g", &RecomputeOptions::default()).unwrap();
    assert!(r.errors.is_empty());
}

#[test]
fn a_followed_file_replays_ground_beliefs_like_a_loaded_one() {
    // Loaded whole from a file (briefs from the scanner) and read as bytes: the same Σ.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.jsonl");
    std::fs::write(&path, TRACE).unwrap();
    let loaded = Model::load(&[&path]).unwrap();
    let bytes = Model::from_bytes("g.jsonl", TRACE.as_bytes());
    for t in 0..=9 {
        assert_eq!(sigma(&loaded, t), sigma(&bytes, t), "step {t}");
    }
}

#[test]
fn whatif_holds_the_traces_ground_values_in_the_alternative() {
    use doxascope::logic::revise::Policy;
    use doxascope::model::whatif::whatif;
    let m = Model::from_bytes("g.jsonl", TRACE.as_bytes());
    let tl = m.timeline("g").unwrap();
    let opts = RecomputeOptions::default();
    for from in [0, 3] {
        let w = whatif(tl, m.log(), Policy::Recency, from, &opts);
        assert!(w.errors.is_empty(), "{:?}", w.errors);
        let mut ids: Vec<&str> = w.alt_at(6).iter().map(|a| a.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["r1", "user-prefs/seat"], "from {from}");
        let seat: Vec<u32> = w
            .alt
            .iter()
            .filter(|a| a.id == "user-prefs/seat")
            .map(|a| a.entered)
            .collect();
        assert_eq!(seat, [2, 5], "from {from}");
    }
}

#[test]
fn the_recomputation_reasons_with_ground_values() {
    let trace = r#"{"kind":"session","v":1,"seq":1,"session":"g"}
{"kind":"belief","seq":2,"session":"g","name":"status","value":"due","source":"tool:billing"}
{"kind":"verify","seq":3,"session":"g","formula":"status = \"paid\"","outcome":"contradiction"}
{"kind":"verify","seq":4,"session":"g","formula":"status = \"due\"","outcome":"entailed"}
{"kind":"announce","seq":5,"session":"g","id":"r1","formula":"balance_ok -> status = \"paid\"","role":"rule"}
{"kind":"announce","seq":6,"session":"g","id":"b","formula":"balance_ok"}
{"kind":"belief","seq":7,"session":"g","name":"status","value":"paid"}
{"kind":"verify","seq":8,"session":"g","formula":"status = \"due\"","outcome":"contradiction"}
"#;
    let m = Model::from_bytes("g.jsonl", trace.as_bytes());
    let r = m.recompute("g", &RecomputeOptions::default()).unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.verifies.len(), 3);
    assert!(
        r.verifies.iter().all(|v| v.agrees() == Some(true)),
        "{:?}",
        r.verifies
    );
    // balance_ok with the rule forces status = "paid" while "due" is held: inconsistent.
    let b = r.announces.iter().find(|a| a.id == "b").unwrap();
    let res = b.result.as_ref().unwrap();
    assert!(!res.consistent_after);
    let mut c = res.conflict.to_vec();
    c.sort();
    assert_eq!(c, ["b", "r1", "status"]);
}

#[test]
fn exports_carry_the_one_value_per_key_constraint() {
    use doxascope::model::export::{Format, Header, export};
    // Σ at step 4 holds `status = "due"` and the rule naming `status = "paid"`: two values
    // of one key, which SMT-LIB must exclude explicitly (DIMACS gets the encoder's clauses).
    let m = Model::from_bytes("g.jsonl", TRACE.as_bytes());
    let sigma = m.sigma_at("g", 4).unwrap();
    let header = Header {
        session: "g",
        step: 4,
    };
    let smt = export(&sigma, Format::Smtlib, header);
    assert!(smt.contains("; one value at a time: status"), "{smt}");
    assert!(
        smt.contains(r#"(assert (not (and |status = "due"| |status = "paid"|)))"#),
        "{smt}"
    );
    let dimacs = export(
        &sigma,
        Format::Dimacs,
        Header {
            session: "g",
            step: 4,
        },
    );
    let clauses: Vec<Vec<i64>> = dimacs
        .lines()
        .filter(|l| !l.starts_with('c') && !l.starts_with('p'))
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    // The ladder's exclusion: a binary clause of two negative literals.
    assert!(
        clauses
            .iter()
            .any(|c| c.len() == 3 && c[0] < 0 && c[1] < 0 && c[2] == 0),
        "{dimacs}"
    );
}

#[test]
fn a_retract_may_name_a_ground_belief_by_its_value_atom() {
    let trace = concat!(
        r#"{"kind":"belief","seq":1,"name":"seat","value":"aisle"}"#,
        "\n",
        r#"{"kind":"retract","seq":2,"target":"seat = \"window\""}"#,
        "\n",
        r#"{"kind":"retract","seq":3,"target":"seat  =  \"aisle\""}"#,
        "\n",
    );
    let m = Model::from_bytes("r.jsonl", trace.as_bytes());
    let s = m.sessions()[0].to_string();
    let tl = m.timeline(&s).unwrap();
    // Another value names nothing held: an error; the value held is taken back.
    let rt = tl.retracts();
    assert_eq!((rt[0].record, rt[0].ground), (None, None));
    assert!(rt[1].record.is_some() && rt[1].ground.is_some());
    assert_eq!(tl.errors().len(), 1);
    assert!(m.sigma_at(&s, 3).unwrap().is_empty());
    assert!(!tl.bdi_log().known_by("seat", 3));
}
