//! The filtered Σ pane against an independent oracle: at every step visited (forwards,
//! backwards, jumps), and as the session grows batch by batch, the rows of a filter are
//! exactly the records the straightforward definition selects (announced by the step,
//! active or retracted at it as the status asks, role, source and text matched on the
//! lowercased strings). The filter's index moves between steps by the records that ended
//! in between and scans new records incrementally, so this checks every path of it.

use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{Body, Reader, ReaderConfig};
use doxascope::tui::app::App;
use doxascope::tui::data::Store;
use doxascope::tui::panes::sigma::SigmaFilter;
use doxascope::tui::theme::Theme;

fn trace(events: u64, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let cfg = GenConfig {
        events,
        seed,
        sessions: 1,
        atoms: 12,
    };
    write_mixed(&mut out, &cfg).expect("in-memory write");
    out
}

/// The rows by definition, from the store alone.
fn oracle(app: &App, f: &SigmaFilter, t: u32) -> Vec<u32> {
    let s = app.sess().expect("a session");
    let role_name = |r: &doxascope::trace::event::Role| {
        serde_json::to_value(r)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    s.tl.beliefs()
        .iter()
        .enumerate()
        .filter(|(_, b)| b.announced <= t)
        .filter(|(_, b)| match f.status.as_deref() {
            Some("active") => b.active_at(t),
            Some("retracted") => !b.active_at(t),
            _ => true,
        })
        .filter(|(i, b)| {
            // A ground belief's record stands for its value atom's announcement.
            let a = match s.tl.ground_announce(*i as u32) {
                Some(a) => a,
                None => match app.store.event(b.event).map(|e| &e.body) {
                    Some(Body::Announce(a)) => a,
                    _ => return false,
                },
            };
            f.role.as_ref().is_none_or(|r| role_name(&a.role) == *r)
                && f.source.as_ref().is_none_or(|src| {
                    a.source
                        .as_deref()
                        .is_some_and(|s| s.to_lowercase().contains(src.as_str()))
                })
                && f.text.as_ref().is_none_or(|x| {
                    b.id.to_lowercase().contains(x.as_str())
                        || a.formula.to_lowercase().contains(x.as_str())
                })
        })
        .map(|(i, _)| i as u32)
        .collect()
}

/// The pane's rows once the filter has scanned everything (a new filter scans in pieces).
fn rows(app: &App) -> Vec<u32> {
    let mut rows = app.sigma_rows();
    for _ in 0..10_000 {
        if app.sigma_filter_progress().is_none() {
            break;
        }
        rows = app.sigma_rows();
    }
    assert_eq!(app.sigma_filter_progress(), None, "the scan ends");
    let all = rows.range(0, usize::MAX);
    assert_eq!(all.len(), rows.len());
    // Single rows and windows agree with the whole list, as the pane and the keys read them.
    for (i, &r) in all.iter().enumerate().step_by(7) {
        assert_eq!(rows.get(i), Some(r));
        assert_eq!(rows.range(i, i + 3), all[i..(i + 3).min(all.len())]);
    }
    assert_eq!(rows.get(all.len()), None);
    all
}

const FILTERS: &[&str] = &[
    "status:active",
    "status:retracted",
    "p1",
    "status:active p1",
    "status:retracted P2",
    "role:rule",
    "role:rule status:active",
    "source:user status:retracted",
    "source:tool",
    "status:bogus P3",
];

#[test]
fn filtered_rows_match_the_definition_at_every_step_in_any_order() {
    let bytes = trace(2_500, 11);
    let mut app = App::new(
        Store::from_bytes("t.jsonl", &bytes),
        Theme::builtin("dark").unwrap(),
    );
    let n = app.sess().map_or(0, |s| s.len());
    let retracted = app.sess().map_or(0, |s| s.ended.len());
    assert!(
        retracted > 20,
        "the trace must retract beliefs ({retracted})"
    );
    // Forwards in small steps, a jump back, backwards, random jumps.
    let mut steps: Vec<u32> = (0..=n).step_by(37).collect();
    steps.extend([n / 2, n / 3, 0, n]);
    steps.extend((0..=n).rev().step_by(53));
    let mut x = 12_345u64;
    for _ in 0..25 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        steps.push(((x >> 33) % u64::from(n + 1)) as u32);
    }
    for text in FILTERS {
        let f = SigmaFilter::parse(text);
        app.panes.sigma.filter = f.clone();
        let mut seen = 0;
        for &t in &steps {
            app.goto_step(u64::from(t));
            let t = app.step();
            let want = oracle(&app, &f, t);
            seen += want.len();
            assert_eq!(rows(&app), want, "filter {text:?} at step {t}");
        }
        // Every filter selects something somewhere, or the comparison proves little.
        assert!(seen > 0, "filter {text:?} never matches");
    }
}

#[test]
fn filtered_rows_follow_a_growing_session() {
    let bytes = trace(3_000, 5);
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    for text in FILTERS {
        let f = SigmaFilter::parse(text);
        let mut app = App::new(Store::new(), Theme::builtin("dark").unwrap());
        app.panes.sigma.filter = f.clone();
        let mut reader = Reader::new("grow.jsonl", ReaderConfig::default());
        for (k, chunk) in lines.chunks(97).enumerate() {
            let mut items = Vec::new();
            reader.feed(&chunk.concat(), &mut items);
            app.store.extend(items);
            app.on_data();
            let t = app.step();
            assert_eq!(
                rows(&app),
                oracle(&app, &f, t),
                "filter {text:?} after batch {k}"
            );
            // Every few batches, look back in time and return, as a user might.
            if k % 5 == 4 {
                app.goto_step(u64::from(t / 2));
                assert_eq!(rows(&app), oracle(&app, &f, app.step()), "{text:?} back");
                app.goto_step(u64::from(t));
                app.view_mut().follow = true;
            }
        }
    }
}

#[test]
fn a_new_filter_applies_in_pieces_within_each_frames_window() {
    let bytes = trace(20_000, 3);
    let mut app = App::new(
        Store::from_bytes("t.jsonl", &bytes),
        Theme::builtin("dark").unwrap(),
    );
    let total = app.sess().map_or(0, |s| s.tl.beliefs().len()) as u32;
    assert!(total > 4_096, "enough records for several pieces ({total})");
    let f = SigmaFilter::parse("p1");
    app.panes.sigma.filter = f.clone();
    // A window already closed: one piece of the scan, and the pane knows how far it got.
    app.set_scan_window(Some(std::time::Instant::now()));
    let partial = app.sigma_rows();
    let Some((done, all)) = app.sigma_filter_progress() else {
        panic!("one piece cannot have scanned {total} records");
    };
    assert!(done > 0 && done < all && all == total, "{done} of {all}");
    let t = app.step();
    // The rows so far are the matches among the records scanned.
    let want = oracle(&app, &f, t);
    let got = partial.range(0, usize::MAX);
    assert_eq!(got, want[..got.len()]);
    assert!(got.iter().all(|&r| r < done));
    // Frames go on until it is complete, each asking for the next while it is not.
    let mut frames = 0;
    while app.sigma_filter_progress().is_some() {
        app.dirty = false;
        let screen = doxascope::tui::ui::render_text(&mut app, 200, 60);
        frames += 1;
        assert!(frames < 10_000, "the scan ends");
        if app.sigma_filter_progress().is_some() {
            assert!(app.dirty, "a frame of a partial filter asks for the next");
            assert!(screen.contains("filtering…"), "{screen}");
        }
    }
    app.set_scan_window(None);
    assert_eq!(rows(&app), want);
}
