//! OTLP files imported in bounded memory: read a chunk of whole lines at a time (about
//! [`CHUNK`] bytes, cut only before a line that starts with `{` or `[`, where the Collector's
//! file exporter starts a request), each chunk's traces mapped and written before the next is
//! read.
//!
//! The output is byte for byte the whole-file import's ([`super::import`]) or nothing: a
//! chunk is mapped alone only when nothing in it depends on the rest of the file. When a
//! trace (or the session of untraced spans) comes back in a later chunk, two traces of
//! different chunks share a short session name, a chunk holds log records, an agent's
//! creation, an any-agent `final_output`, a broken value or bytes that are not UTF-8, the
//! stream gives up ([`None`]) and the caller imports the file whole, which handles all of
//! those across the file.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};

use super::map::{Class, classify};
use super::{
    Par, group_spans, map_sessions, other_events_note, read_parallel, read_values, short_names,
};
use crate::trace::import::{Format, ImportNote, OpenError, budget};

/// Bytes read before a chunk is mapped: a few of the Collector's request lines, small
/// beside the files worth streaming (a chunk's spans and lines take about six times its
/// text), and split in parts for the cores (see [`stream_par`]).
pub(crate) const CHUNK: usize = 2 << 20;

/// The machine's threads, each reading a part of a chunk of 256 KiB or more, and mapping a
/// chunk's traces once it holds 512 spans or more: a 2 MiB chunk holds about 2,500, below
/// the whole-file import's threshold, and mapping them (3 to 4 µs a span) was the largest
/// part of a chunk's time, done on one core.
fn stream_par() -> Par {
    Par {
        min_chunk: 256 << 10,
        min_spans: 512,
        ..Par::of_machine()
    }
}

/// What the chunks so far have given.
#[derive(Default)]
struct State {
    /// Every trace seen (`None`: the spans without a trace id).
    seen: HashSet<Option<u128>>,
    /// Every short session name given.
    short: HashSet<String>,
    /// Notes of reading, in file order.
    read_notes: Vec<ImportNote>,
    /// Notes of mapping (spans whose parent is missing), in session order.
    orphans: Vec<ImportNote>,
    other_events: u64,
    spans: usize,
}

/// Imports the OTLP text read from `src` into `out`, chunk by chunk; the notes, or `None`
/// when the file must be imported whole (see the module docs; `out` then holds a part to
/// discard). `name` names the session of untraced spans.
pub(crate) fn import_stream<R: Read, W: Write>(
    src: R,
    name: &str,
    out: &mut W,
) -> Result<Option<Vec<ImportNote>>, OpenError> {
    stream_with(src, name, out, CHUNK, stream_par())
}

/// [`import_stream`] with chunks of `chunk` bytes.
fn stream_with<R: Read, W: Write>(
    mut src: R,
    name: &str,
    out: &mut W,
    chunk: usize,
    par: Par,
) -> Result<Option<Vec<ImportNote>>, OpenError> {
    let chunk = chunk.max(1);
    let max = budget::current().max_bytes;
    let mut st = State::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    let mut first = true;
    let mut line = 1usize;
    let mut target = chunk;
    loop {
        while !eof && buf.len() < target {
            let want = (target - buf.len()) as u64;
            if (&mut src).take(want).read_to_end(&mut buf)? == 0 {
                eof = true;
            }
        }
        if first && (buf.len() >= 3 || eof) {
            first = false;
            if buf.starts_with(b"\xEF\xBB\xBF") {
                buf.drain(..3);
            }
        }
        let cut = if eof {
            buf.len()
        } else {
            match split_point(&buf) {
                Some(p) => p,
                None => {
                    // One value longer than a chunk: read on until a request ends.
                    if buf.len() as u64 > max {
                        return Err(budget::too_many_bytes(Format::Otlp, name, max).into());
                    }
                    target = buf.len() + chunk;
                    continue;
                }
            }
        };
        target = chunk;
        if cut as u64 > max {
            return Err(budget::too_many_bytes(Format::Otlp, name, max).into());
        }
        if cut > 0 {
            let part = &buf[..cut];
            budget::check_json(Format::Otlp, "the file", part)?;
            if !map_chunk(part, line, name, par, &mut st, out)? {
                return Ok(None);
            }
            line += memchr::memchr_iter(b'\n', part).count();
            buf.drain(..cut);
        }
        if eof && buf.is_empty() {
            break;
        }
    }
    if st.spans == 0 {
        // No spans: the whole-file import says why (no JSON, an error, only logs).
        return Ok(None);
    }
    let mut notes = st.read_notes;
    notes.extend(st.orphans);
    notes.extend(other_events_note(st.other_events));
    Ok(Some(notes))
}

/// Where the last request of `buf` starts: just after a newline, at `{` or `[` (0 when
/// none does).
fn split_point(buf: &[u8]) -> Option<usize> {
    let end = buf.len().checked_sub(1)?;
    memchr::memrchr_iter(b'\n', &buf[..end])
        .map(|nl| nl + 1)
        .find(|&at| matches!(buf[at], b'{' | b'['))
}

/// Reads, maps and writes one chunk (its first line is `line`); `false` when it depends on
/// the rest of the file (nothing of it is written then).
fn map_chunk<W: Write>(
    part: &[u8],
    line: usize,
    name: &str,
    par: Par,
    st: &mut State,
    out: &mut W,
) -> io::Result<bool> {
    let Ok(text) = std::str::from_utf8(part) else {
        return Ok(false);
    };
    let read =
        read_parallel(text, line, par).unwrap_or_else(|| read_values(part, Some(text), line));
    if read.first_error.is_some()
        || read.had_logs
        || read.final_output.is_some()
        || read.spans.iter().any(|s| classify(s) == Class::CreateAgent)
    {
        return Ok(false);
    }
    st.spans += read.spans.len();
    let (order, groups) = group_spans(read.spans);
    if order.iter().any(|k| st.seen.contains(k)) {
        return Ok(false);
    }
    let short = short_names(&order, &groups, &HashMap::new());
    if short.keys().any(|k| st.short.contains(k)) {
        return Ok(false);
    }
    st.seen.extend(order.iter().copied());
    st.short.extend(short.keys().cloned());
    st.read_notes.extend(read.notes);
    let w = map_sessions(order, groups, HashMap::new(), name, &short, None, par);
    for lines in &w.lines {
        out.write_all(lines)?;
    }
    st.orphans.extend(w.orphans);
    st.other_events += w.other_events;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::import::otlp::import_with;

    /// One span as an OTLP JSON object.
    fn span(trace: u128, id: u64, parent: u64, op: &str, t: u64) -> String {
        let parent = if parent == 0 {
            String::new()
        } else {
            format!("{parent:016x}")
        };
        format!(
            r#"{{"traceId":"{trace:032x}","spanId":"{id:016x}","parentSpanId":"{parent}","name":"{op} x","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"{op}"}}}},{{"key":"gen_ai.output.messages","value":{{"stringValue":"[{{\"role\":\"assistant\",\"parts\":[{{\"type\":\"text\",\"content\":\"t{trace} s{id}\"}}]}}]"}}}}]}}"#,
            1_700_000_000_000_000_000u64 + t,
            1_700_000_000_000_000_050u64 + t,
        )
    }

    /// One request line of `spans` from `service`.
    fn request(service: &str, spans: &[String]) -> String {
        format!(
            r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"{service}"}}}}]}},"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        ) + "\n"
    }

    /// A whole trace (an agent, a model call, a tool call; one orphan when `orphan`).
    fn trace(t: u128, orphan: bool) -> Vec<String> {
        let base = (t as u64 % 1000) * 100;
        let mut v = vec![
            span(t, 1, 0, "invoke_agent", base),
            span(t, 2, 1, "chat", base + 1),
            span(t, 3, 1, "execute_tool", base + 2),
        ];
        if orphan {
            v.push(span(t, 4, 99, "chat", base + 3));
        }
        v
    }

    /// Requests of whole traces, several a line: every trace within its line.
    fn whole_traces() -> Vec<u8> {
        let mut out = String::new();
        for line in 0..6u128 {
            let spans: Vec<String> = (0..3u128)
                .flat_map(|k| trace(line * 3 + k + 1, k == 1))
                .collect();
            out += &request("svc", &spans);
        }
        out.into_bytes()
    }

    /// The inputs a stream must get right or give up on: traces spread over lines, short
    /// names shared by traces far apart, broken lines, a BOM, bytes that are not UTF-8, log
    /// records, agent creations, untraced spans, values spread over lines.
    fn hostile() -> Vec<Vec<u8>> {
        let t = |n| trace(n, false);
        let mut spread = String::new();
        for piece in 0..3 {
            for n in 1..5u128 {
                spread += &request("svc", &t(n)[piece..piece + 1]);
            }
        }
        // The same last 16 hex digits, the same service, lines apart: full names for both.
        let twins =
            request("svc", &t(7)) + &request("svc", &t(8)) + &request("svc", &t(7 | 1 << 64));
        let mut broken = whole_traces();
        let at = broken.len() / 2;
        broken.splice(at..at + 5, b"\n{\"x".iter().copied());
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend(whole_traces());
        let mut latin1 = whole_traces();
        let end = latin1.len() - 40;
        latin1[end] = 0xE9;
        let logs = request("svc", &t(1))
            + r#"{"resourceLogs":[{"resource":{},"scopeLogs":[{"logRecords":[{"traceId":"00000000000000000000000000000001","body":{"stringValue":"hi"},"eventName":"gen_ai.user.message","timeUnixNano":"1700000000000000001"}]}]}]}"#
            + "\n"
            + &request("svc", &t(2));
        let creation = request("svc", &t(3))
            + &request(
                "svc",
                &[span(9, 1, 0, "create_agent", 5).replace(
                    r#""attributes":["#,
                    r#""attributes":[{"key":"gen_ai.agent.name","value":{"stringValue":"a"}},"#,
                )],
            );
        let untraced = request("svc", &t(1))
            + r#"{"name":"chat m","attributes":{"gen_ai.operation.name":"chat"}}"#
            + "\n"
            + &request("svc", &t(2))
            + r#"{"name":"chat n","attributes":{"gen_ai.operation.name":"chat"}}"#
            + "\n";
        let pretty = {
            let first = request("svc", &t(4));
            let v: serde_json::Value = serde_json::from_str(&first).expect("a request");
            serde_json::to_string_pretty(&serde_json::json!([v, v])).unwrap_or_default()
                + "\n"
                + &request("svc", &t(5))
        };
        vec![
            spread.into_bytes(),
            twins.into_bytes(),
            broken,
            bom,
            latin1,
            logs.into_bytes(),
            creation.into_bytes(),
            untraced.into_bytes(),
            pretty.into_bytes(),
            b"\n\n  \n".to_vec(),
            b"{\"resourceSpans\":[]}\n".to_vec(),
        ]
    }

    fn par(threads: usize) -> Par {
        Par {
            threads,
            min_chunk: 64,
            min_spans: 1,
        }
    }

    /// Chunk sizes that cut the input everywhere a cut changes something: just before, at
    /// and just after every line start, and the smallest and largest.
    fn sizes(input: &[u8]) -> Vec<usize> {
        let mut v = vec![1, 2, 3, input.len(), input.len() + 1];
        for nl in memchr::memchr_iter(b'\n', input) {
            v.extend([nl, nl + 1, nl + 2]);
        }
        v.sort_unstable();
        v.dedup();
        v.retain(|&c| c > 0);
        v
    }

    /// The stream's output at chunks of `chunk` bytes, `None` when it gave up.
    fn streamed(input: &[u8], chunk: usize, threads: usize) -> Option<(Vec<u8>, Vec<ImportNote>)> {
        let mut out = Vec::new();
        match stream_with(input, "f", &mut out, chunk, par(threads)) {
            Ok(Some(notes)) => Some((out, notes)),
            Ok(None) => None,
            Err(e) => panic!("chunk {chunk}: {e}"),
        }
    }

    /// Streamed, a file of whole traces is the whole-file import at every chunk size, split
    /// at every byte: the same lines, the same notes, in the same order.
    #[test]
    fn whole_traces_stream_as_the_whole_file_at_every_split() {
        let input = whole_traces();
        let want = import_with(&input, "f", par(1)).expect("imports");
        assert!(!want.notes.is_empty(), "the orphans are noted");
        for chunk in sizes(&input) {
            let threads = 1 + chunk % 2;
            let (v1, notes) = streamed(&input, chunk, threads)
                .unwrap_or_else(|| panic!("chunk {chunk}: gave up on whole traces"));
            assert!(v1 == want.v1, "chunk {chunk}: other lines");
            assert_eq!(notes, want.notes, "chunk {chunk}");
        }
    }

    /// On hostile input the stream gives the whole-file import's output or gives up, at
    /// every chunk size; and gives up where it must (a trace split over chunks).
    #[test]
    fn hostile_input_streams_exactly_or_not_at_all() {
        for (i, input) in hostile().iter().enumerate() {
            let want = import_with(input, "f", par(1));
            let mut gave_up = 0;
            for chunk in sizes(input) {
                match (streamed(input, chunk, 2), &want) {
                    (None, _) => gave_up += 1,
                    (Some((v1, notes)), Ok(w)) => {
                        assert!(
                            v1 == w.v1,
                            "input {i}, chunk {chunk}: other lines:\n{}\nwant\n{}",
                            String::from_utf8_lossy(&v1),
                            String::from_utf8_lossy(&w.v1)
                        );
                        assert_eq!(notes, w.notes, "input {i}, chunk {chunk}");
                    }
                    (Some(_), Err(e)) => panic!("input {i}, chunk {chunk}: streamed, want {e}"),
                }
            }
            if i <= 1 {
                assert!(gave_up > 0, "input {i}: split traces were streamed");
            }
        }
    }

    /// Through [`crate::trace::import::open`] (the stream, or the whole file when it gives
    /// up), every input gives what [`super::super::import`] gives.
    #[test]
    fn open_spools_what_import_gives() {
        use crate::trace::import::{Opened, open};
        let mut inputs = hostile();
        inputs.push(whole_traces());
        for (i, input) in inputs.iter().enumerate() {
            let want = super::super::import(input, "f.jsonl");
            match (
                open("f.jsonl", std::io::Cursor::new(input), Some(Format::Otlp)),
                want,
            ) {
                (Ok(Opened::Imported(_, sp)), Ok(w)) => {
                    assert!(sp.to_vec().expect("spool") == w.v1, "input {i}");
                    assert_eq!(sp.len, w.v1.len() as u64, "input {i}");
                    assert_eq!(sp.notes, w.notes, "input {i}");
                }
                (Err(OpenError::Import(g)), Err(w)) => assert_eq!(g, w, "input {i}"),
                (g, w) => panic!("input {i}: {:?} against {:?}", g.err(), w.err()),
            }
        }
    }
}
