//! `doxascope report` in a real browser: headless Chromium (Debian's package) renders the
//! report of a hostile trace, a screenshot shows the chart's colours, the DOM Chromium built
//! holds the findings, and the trace's `<script>` (in a session name, a formula, a retraction
//! reason, a note) stayed text: it neither ran (the title and the root element are as written)
//! nor became an element.
//!
//! Needs Chromium (`apt-get install chromium`; `.ci/run` installs it). Without it the test is
//! ignored with that reason (`build.rs`), and fails under CI.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use doxascope::model::report::colour;
use doxascope::trace::notes::NoteStore;

const PAYLOAD: &str = "<script>document.title='pwned';document.documentElement.setAttribute('data-pwned','yes')</script>";

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Runs headless Chromium on `page` with the flags of a locked-down run (no network services,
/// a fresh profile), killing it after a minute; returns its stdout.
fn run_chromium(bin: &str, profile: &Path, extra: &[String], page: &Path) -> Vec<u8> {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("reader")
}

/// A PNG's pixels as RGB (8-bit RGB or RGBA, not interlaced: what Chromium writes).
fn decode_png(bytes: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut at = 8;
    let (mut w, mut h, mut ctype) = (0usize, 0usize, 0u8);
    let mut idat = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "8-bit channels");
                ctype = data[9];
                assert_eq!(data[12], 0, "not interlaced");
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let bpp = match ctype {
        2 => 3,
        6 => 4,
        other => panic!("colour type {other}"),
    };
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("inflate");
    let stride = w * bpp;
    let mut img = vec![0u8; h * stride];
    for y in 0..h {
        let f = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= bpp {
                img[y * stride + x - bpp]
            } else {
                0
            };
            let b = if y > 0 { img[(y - 1) * stride + x] } else { 0 };
            let c = if x >= bpp && y > 0 {
                img[(y - 1) * stride + x - bpp]
            } else {
                0
            };
            let v = match f {
                0 => line[x],
                1 => line[x].wrapping_add(a),
                2 => line[x].wrapping_add(b),
                3 => line[x].wrapping_add(((u16::from(a) + u16::from(b)) / 2) as u8),
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    let pred = if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    };
                    line[x].wrapping_add(pred)
                }
                other => panic!("filter {other}"),
            };
            img[y * stride + x] = v;
        }
    }
    let px = img.chunks(bpp).map(|p| [p[0], p[1], p[2]]).collect();
    (w, h, px)
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// A trace that carries the payload everywhere a string reaches the report, and makes
/// findings (a contradiction never handled, a disputed claim) so messages quote it too.
fn hostile_trace(dir: &Path) -> PathBuf {
    let q = format!("\\\"{}\\\"", PAYLOAD.replace('\'', "\\u0027"));
    let session = PAYLOAD.replace('\'', "\\u0027");
    let lines = [
        format!(
            r#"{{"kind":"announce","session":"{session}","id":"a1","formula":"p -> q","role":"rule","source":"{session}"}}"#
        ),
        format!(
            r#"{{"kind":"announce","session":"{session}","id":"a2","formula":"p","text":"{session}"}}"#
        ),
        format!(r#"{{"kind":"verify","session":"{session}","formula":"q","outcome":"newinfo"}}"#),
        format!(r#"{{"kind":"announce","session":"{session}","id":"x<b>","formula":"{q}"}}"#),
        format!(
            r#"{{"kind":"retract","session":"{session}","target":"x<b>","by":"agent","reason":"</td></tr></table>{session}"}}"#
        ),
        format!(r#"{{"kind":"announce","session":"{session}","id":"a3","formula":"!q"}}"#),
    ];
    let p = dir.join("hostile.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
#[cfg_attr(
    doxascope_no_chromium,
    ignore = "chromium is not installed (apt-get install chromium)"
)]
fn the_report_renders_in_chromium_and_trace_scripts_stay_inert() {
    let Some(bin) = chromium() else {
        assert!(
            !in_ci(),
            "chromium is not installed, and under CI the report's browser test must run"
        );
        eprintln!("skipping report_browser: chromium is not installed (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let trace = hostile_trace(dir.path());
    let session = PAYLOAD;
    let mut notes = NoteStore::open(trace.to_str().unwrap());
    notes
        .add(
            session,
            3,
            None,
            "<img src=x onerror=\"document.title='pwned2'\">",
        )
        .unwrap();
    let page = dir.path().join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args([
            "report",
            trace.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no script element, nothing loaded from elsewhere.
    let lower = html.to_lowercase();
    assert!(!lower.contains("<script"), "a script element in the report");
    assert!(!lower.contains("<img"), "an image element in the report");
    // Every tag the report holds: no source to load, no event handler, links within the page.
    for tag in lower
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or(""))
    {
        assert!(
            !tag.contains(" src="),
            "something loaded from elsewhere: <{tag}>"
        );
        assert!(!tag.contains(" on"), "an event handler: <{tag}>");
        if let Some(i) = tag.find("href=\"") {
            assert!(
                tag[i + 6..].starts_with('#'),
                "a link out of the page: <{tag}>"
            );
        }
    }
    assert!(lower.contains("content-security-policy"));

    // The DOM Chromium built: our title, no attribute set by the payload, no element made of
    // it, its text shown as text; the findings and the chart are there.
    let profile = tempfile::tempdir().unwrap();
    let dom = String::from_utf8(run_chromium(
        bin,
        profile.path(),
        &[
            "--dump-dom".to_string(),
            "--virtual-time-budget=2000".to_string(),
        ],
        &page,
    ))
    .unwrap();
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .expect("a title");
    assert!(
        title.starts_with("doxascope report:"),
        "the payload ran: title {title:?}"
    );
    assert!(!title.contains("pwned"), "the payload ran: title {title:?}");
    let root = dom
        .split("<html")
        .nth(1)
        .and_then(|t| t.split('>').next())
        .unwrap_or("");
    assert!(
        !root.contains("data-pwned"),
        "the payload ran: <html{root}>"
    );
    assert!(
        !dom.to_lowercase().contains("<script"),
        "the payload became an element"
    );
    assert!(
        !dom.to_lowercase().contains("<img"),
        "the note's payload became an element"
    );
    assert!(
        dom.contains("&lt;script&gt;document.title="),
        "the payload is not shown as text"
    );
    assert!(dom.contains("unhandled-contradiction"), "findings missing");
    assert!(dom.contains("claimed-outcome-mismatch"), "findings missing");
    assert!(dom.contains("<svg"), "chart missing");
    assert!(dom.contains("Retraction history"));
    assert!(dom.contains("&lt;img src=x onerror"), "the note is missing");

    // A screenshot: not blank, and the chart's colours are on it.
    let shot = dir.path().join("shot.png");
    let profile = tempfile::tempdir().unwrap();
    run_chromium(
        bin,
        profile.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1100,1500".to_string(),
        ],
        &page,
    );
    let (w, h, px) = decode_png(&std::fs::read(&shot).expect("a screenshot"));
    assert!(w >= 1000 && h >= 1000, "{w}x{h}");
    let count = |c: [u8; 3]| px.iter().filter(|p| **p == c).count();
    let white = count([255, 255, 255]);
    assert!(white < px.len() * 97 / 100, "the page is blank");
    let sigma = count(rgb(colour::SIGMA));
    assert!(
        sigma > 2000,
        "Σ's area is not on the screenshot ({sigma} pixels)"
    );
    assert!(
        count(rgb(colour::AGREE)) + count(rgb(colour::DISAGREE)) > 100,
        "no verdict ticks"
    );
    assert!(
        count(rgb(colour::INCONSISTENT)) > 100,
        "no inconsistency band"
    );
    assert!(count(rgb(colour::RETRACT)) > 50, "no retraction tick");
}

/// Without a browser: every sample's report names every finding the audit makes, lists every
/// session, and holds no element that could run or load anything.
#[test]
fn every_sample_reports_every_finding_and_nothing_active() {
    use doxascope::model::Model;
    use doxascope::model::audit::{AuditOptions, audit};
    use doxascope::model::report::report;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let m = Model::load(&[&f]).unwrap();
        let name = f.to_string_lossy().into_owned();
        let html = report(&m, std::slice::from_ref(&name), &AuditOptions::default());
        let a = audit(&m, &AuditOptions::default());
        for finding in &a.findings {
            assert!(
                html.contains(&format!("<code>{}</code>", finding.code.as_str())),
                "{name}: {} missing",
                finding.code.as_str()
            );
        }
        let sections = html.matches(r#"<section class="session""#).count();
        assert_eq!(sections, m.timelines().len(), "{name}");
        let lower = html.to_lowercase();
        assert!(
            !lower.contains("<script") && !lower.contains("<iframe"),
            "{name}"
        );
        assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
        assert_eq!(html.matches("<svg").count(), m.timelines().len(), "{name}");
    }
}

/// A Σ under a finding is cut at `MAX_SIGMA_ROWS` beliefs on a long run; the beliefs the
/// finding names come first, so the conflict a reader looks for is never among those cut.
#[test]
fn a_long_sigma_under_a_finding_lists_the_named_beliefs_first() {
    use doxascope::model::Model;
    use doxascope::model::audit::AuditOptions;
    use doxascope::model::report::{MAX_SIGMA_ROWS, report};
    let n = MAX_SIGMA_ROWS + 20;
    let late = n - 3;
    let mut lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"kind":"announce","session":"s","id":"b{i}","formula":"p{i}"}}"#))
        .collect();
    lines.push(format!(
        r#"{{"kind":"announce","session":"s","id":"c","formula":"!p{late}"}}"#
    ));
    let m = Model::from_bytes("long.jsonl", (lines.join("\n") + "\n").as_bytes());
    let html = report(&m, &["long.jsonl".into()], &AuditOptions::default());
    let table = html
        .split("<details><summary>")
        .nth(1)
        .expect("a finding lists Σ");
    let table = &table[..table.find("</details>").unwrap()];
    assert!(table.starts_with(&format!("Σ at step {} ({} beliefs)", n + 1, n + 1)));
    let rows: Vec<&str> = table
        .split(r#"<tr><td class="f">"#)
        .skip(1)
        .map(|r| &r[..r.find('<').unwrap()])
        .collect();
    assert_eq!(rows.len(), MAX_SIGMA_ROWS);
    assert_eq!(rows[..2], [format!("b{late}").as_str(), "c"]);
    assert!(table.contains(&format!("… and {} more", n + 1 - MAX_SIGMA_ROWS)));
}

/// Past `MAX_SIGMA_FINDINGS` findings in a session, a finding names the export that prints Σ
/// at its step instead of listing it; the report says so once. Every finding is still listed.
#[test]
fn past_the_first_findings_sigma_is_named_not_listed() {
    use doxascope::model::Model;
    use doxascope::model::audit::{AuditOptions, audit};
    use doxascope::model::report::{MAX_SIGMA_FINDINGS, report};
    let extra = 7;
    let mut lines = vec![r#"{"kind":"announce","session":"s","id":"a","formula":"p"}"#.to_string()];
    for _ in 0..MAX_SIGMA_FINDINGS + extra {
        lines.push(
            r#"{"kind":"verify","session":"s","formula":"p","outcome":"contradiction"}"#.into(),
        );
    }
    let m = Model::from_bytes("many.jsonl", (lines.join("\n") + "\n").as_bytes());
    let findings = audit(&m, &AuditOptions::default()).findings.len();
    assert!(findings >= MAX_SIGMA_FINDINGS + extra, "{findings}");
    let html = report(&m, &["many.jsonl".into()], &AuditOptions::default());
    assert_eq!(html.matches(r#"<div class="finding"#).count(), findings);
    assert_eq!(
        html.matches("<details><summary>Σ at step").count(),
        MAX_SIGMA_FINDINGS
    );
    assert_eq!(
        html.matches(r#"<p class="muted">Σ: <code>doxascope export --at "#)
            .count(),
        findings - MAX_SIGMA_FINDINGS
    );
    assert_eq!(
        html.matches(&format!(
            "the other {} name the",
            findings - MAX_SIGMA_FINDINGS
        ))
        .count(),
        1
    );
}

/// A session without findings still shows what was checked: every verify claim with its
/// recomputed verdict, and Σ at the end (open).
#[test]
fn a_clean_session_lists_its_claims_and_its_final_sigma() {
    use doxascope::model::Model;
    use doxascope::model::audit::{AuditOptions, audit};
    use doxascope::model::report::report;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces/treasure-hunt.jsonl");
    let m = Model::load(&[&path]).unwrap();
    assert!(audit(&m, &AuditOptions::default()).findings.is_empty());
    let html = report(
        &m,
        &["treasure-hunt.jsonl".into()],
        &AuditOptions::default(),
    );
    assert!(html.contains("<h3>Verification claims (4)</h3>"), "{html}");
    let claims = &html[html.find("<h3>Verification claims").unwrap()..];
    let claims = &claims[..claims.find("</table>").unwrap()];
    assert_eq!(claims.matches("<tr><td").count(), 4, "{claims}");
    assert!(
        claims.contains(
            r#"<td class="f">treasure_in_b</td><td>newinfo</td><td>newinfo</td><td>=</td>"#
        ),
        "{claims}"
    );
    let end = &html[html.find("<h3>Σ at the end</h3>").expect("the final Σ")..];
    assert!(
        end.starts_with("<h3>Σ at the end</h3><details open><summary>Σ at step 23 (2 beliefs)"),
        "{end}"
    );
    assert!(
        end.contains("t1-domain") && end.contains("t5-user-a"),
        "{end}"
    );
}

/// The evidence under a finding reads as sets of ids, not as raw JSON.
#[test]
fn supports_read_as_sets_not_json() {
    use doxascope::model::Model;
    use doxascope::model::audit::AuditOptions;
    use doxascope::model::report::report;
    let t = r#"{"kind":"announce","session":"s","id":"a","formula":"p"}
{"kind":"announce","session":"s","id":"b","formula":"p -> q"}
{"kind":"verify","session":"s","formula":"q","outcome":"newinfo"}
"#;
    let m = Model::from_bytes("s.jsonl", t.as_bytes());
    let html = report(&m, &["s.jsonl".into()], &AuditOptions::default());
    let at = html
        .find("<th>supports</th>")
        .expect("the supports of the entailed claim");
    let cell = &html[at..at + html[at..].find("</tr>").unwrap()];
    assert!(cell.contains("{a, b}"), "{cell}");
    assert!(!cell.contains("[[") && !cell.contains("&quot;"), "{cell}");
}
