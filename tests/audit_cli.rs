//! `doxascope audit` exit codes and output shape (contract §1): 0 without warnings or errors,
//! 1 with, 2 for unusable input or arguments, with a clear message.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("audit")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn doxascope");
    if let Some(mut si) = child.stdin.take() {
        if let Some(bytes) = stdin {
            si.write_all(bytes).expect("write stdin");
        }
    }
    child.wait_with_output().expect("wait")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn clean_trace_exits_0_with_a_readable_report() {
    let o = run(&["sample-traces/dns-troubleshooting.jsonl"], None);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("doxascope audit: 0 errors, 0 warnings"),
        "{text}"
    );
    assert!(text.contains("No findings"), "{text}");
}

#[test]
fn findings_exit_1_and_are_grouped_with_a_summary() {
    let o = run(&["sample-traces/kipchoge-bdi.jsonl"], None);
    assert_eq!(code(&o), 1);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "1 postcondition was self-reported as met but is not [postcondition-false-positive]"
        ),
        "{text}"
    );
    assert!(text.contains("1 plan deadlocked [dag-deadlock]"), "{text}");
    assert!(
        text.contains("sample-traces/kipchoge-bdi.jsonl:18"),
        "{text}"
    );
}

#[test]
fn several_files_are_audited_together() {
    let o = run(
        &[
            "--json",
            "sample-traces/treasure-hunt.jsonl",
            "sample-traces/dns-troubleshooting.jsonl",
        ],
        None,
    );
    // The treasure hunt ends revised (seed 000's own resolution) and the DNS walkthrough is
    // clean: two sessions, no finding, exit 0.
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["summary"]["sessions"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["claimed_vs_recomputed"]["newinfo"]["newinfo"], 6);
}

#[test]
fn missing_file_exits_2_with_a_message() {
    let o = run(&["no/such/trace.jsonl"], None);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot read"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn bad_policy_exits_2() {
    let o = run(
        &["--policy", "bogus", "sample-traces/treasure-hunt.jsonl"],
        None,
    );
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("bogus"));
}

#[test]
fn no_files_exits_2() {
    assert_eq!(code(&run(&[], None)), 2);
}

#[test]
fn input_without_any_event_exits_2() {
    let o = run(&["-"], Some(b"this is not json\n{\"no kind\": 1}\n"));
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no usable event"));
}

#[test]
fn bad_lines_are_parse_errors_with_file_line_column() {
    let trace = concat!(
        "{\"kind\":\"announce\",\"id\":\"a\",\"formula\":\"p\"}\n",
        "{\"kind\":\"announce\",\"id\"\n",
        "{\"kind\":\"announce\",\"id\":\"b\",\"formula\":\"p & (q\"}\n",
    );
    let o = run(&["--json", "-"], Some(trace.as_bytes()));
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let fs = v["findings"].as_array().expect("findings");
    let parse: Vec<&serde_json::Value> = fs.iter().filter(|f| f["code"] == "parse-error").collect();
    assert_eq!(parse.len(), 2, "{fs:?}");
    // The line that is not JSON: file, line and column from the reader.
    assert_eq!(parse[0]["location"]["file"], "<stdin>");
    assert_eq!(parse[0]["location"]["line"], 2);
    assert!(parse[0]["location"]["column"].as_u64().is_some());
    // The formula that does not parse: its line and the column inside the formula.
    assert_eq!(parse[1]["location"]["line"], 3);
    assert_eq!(parse[1]["evidence"]["field"], "formula");
    assert_eq!(parse[1]["location"]["column"], 7);
}

#[test]
fn hostile_text_is_sanitized_in_the_human_report() {
    let trace = concat!(
        "{\"kind\":\"announce\",\"id\":\"x\\u001b[31m\",\"formula\":\"p\"}\n",
        "{\"kind\":\"announce\",\"id\":\"y\",\"formula\":\"!p\"}\n",
    );
    let o = run(&["-"], Some(trace.as_bytes()));
    assert_eq!(code(&o), 1);
    assert!(
        !o.stdout.contains(&0x1b),
        "raw escape reached the terminal: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn help_lists_every_finding_code() {
    let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--help"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0);
    let help = String::from_utf8_lossy(&o.stdout);
    for c in doxascope::model::audit::Code::ALL {
        assert!(help.contains(c.as_str()), "{c} missing from `audit --help`");
    }
}

/// `-j N` chooses how many sessions are audited at once; the report is the same, byte for
/// byte, whatever the number, in text and in JSON.
#[test]
fn the_report_does_not_depend_on_the_threads() {
    let files = [
        "sample-traces/kipchoge-bdi.jsonl",
        "sample-traces/treasure-hunt.jsonl",
        "sample-traces/dns-troubleshooting.jsonl",
    ];
    for form in [&[][..], &["--json"][..]] {
        let with = |j: Option<&str>| {
            let mut args: Vec<&str> = form.to_vec();
            if let Some(j) = j {
                args.extend(["-j", j]);
            }
            args.extend(files);
            run(&args, None)
        };
        let default = with(None);
        assert_eq!(
            code(&default),
            1,
            "{}",
            String::from_utf8_lossy(&default.stderr)
        );
        for j in ["1", "3"] {
            let o = with(Some(j));
            assert_eq!(code(&o), 1);
            assert_eq!(o.stdout, default.stdout, "-j {j} changed the report");
        }
    }
    let bad = run(&["--threads", "many", files[0]], None);
    assert_eq!(code(&bad), 2);
}
