//! Build script: tells the test suite whether tmux and Chromium are here.
//!
//! The end-to-end tests drive the real binary in tmux, and the report's test loads it in
//! headless Chromium (`cfg(doxascope_no_chromium)`, the same way). Without tmux they cannot run, and a
//! test that returns early is reported as passed, which hides the gap. With
//! `cfg(doxascope_no_tmux)` they are marked `#[ignore]` instead, so `cargo test` lists each as
//! "ignored, tmux is not installed" and counts them in its summary. Under CI (`CI` set and not
//! `false`/`0`) the cfg is never set: the tests run and fail when tmux is missing, because a
//! CI run that silently skips them proves nothing.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_tmux)");
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_chromium)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=PATH");
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    let tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .any(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if !ci && !chromium {
        println!("cargo::rustc-cfg=doxascope_no_chromium");
        println!(
            "cargo::warning=chromium is not installed: the report's browser test will be ignored"
        );
    }
    if !ci && (!tmux || !chromium) {
        // Installing either changes a directory on PATH: look again then.
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path).filter(|d| d.is_dir()) {
                println!("cargo::rerun-if-changed={}", dir.display());
            }
        }
    }
    if !ci && !tmux {
        println!("cargo::rustc-cfg=doxascope_no_tmux");
        println!("cargo::warning=tmux is not installed: the end-to-end tests will be ignored");
    }
}
