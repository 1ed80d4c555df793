//! Process figures from Linux's /proc for the benchmarks (0 where unavailable). Included with
//! `#[path]` by the benches that report memory or CPU time; each uses a subset.
#![allow(dead_code)]

/// A field of /proc/self/status (`VmHWM:`, `VmRSS:`...) in KiB.
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// CPU time of the whole process (all threads, user + system) in seconds: on a shared
/// machine wall time includes waiting for a core, CPU time does not.
pub fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the parenthesized command name; utime and stime are 14 and 15.
            let rest = s.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            let u: f64 = f.get(11)?.parse().ok()?;
            let k: f64 = f.get(12)?.parse().ok()?;
            // Linux reports these in USER_HZ, 100 on every mainstream configuration.
            Some((u + k) / 100.0)
        })
        .unwrap_or(0.0)
}
