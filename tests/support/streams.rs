//! Random JSONL byte streams for the reader's property tests: valid events, every framing
//! hazard (CRLF, BOMs, blank lines, no final newline, invalid UTF-8, lines around the length
//! cap), and lines that trip the per-session checks (duplicate `seq`, `ts` going backwards).
//!
//! Shared by `tests/trace_chunking.rs` (chunking) and the crate's own tests, which include it
//! with `#[path]` in `src/trace/mod.rs` (the parallel load, the one-session load, and the
//! viewer's load in two passes).

use proptest::prelude::*;

/// One line's bytes (without its line ending); `cap` is the line-length cap under test.
pub fn piece(cap: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0u64..6, 0usize..3).prop_map(|(seq, s)| format!(
            r#"{{"kind":"announce","formula":"p1 & !p2 -> p3","seq":{seq},"session":"s{s}"}}"#
        )
        .into_bytes()),
        // Sessions written in ways a glance at the bytes could misread.
        prop_oneof![
            Just(br#"{"kind":"log","session":"s\u0031","seq":9}"#.to_vec()),
            Just(br#"{"kind":"log","sess\u0069on":"s2","seq":9}"#.to_vec()),
            Just(br#"{"kind":"log","meta":{"session":"s2"},"session":"s0"}"#.to_vec()),
            Just(br#"{"kind":"log","meta":{"session":"s2"}}"#.to_vec()),
            Just(br#"{"kind":"log","message":"\"session\":\"s1\"","session":"s2"}"#.to_vec()),
            Just(br#"{"kind":"log","session" : "s1"}"#.to_vec()),
            Just(br#"{"kind":"log","session":"s1","session":"s2"}"#.to_vec()),
            Just(br#"{"kind":"log","sess\u0069on":"s1","session":"s2"}"#.to_vec()),
            Just(br#"{"kind":"log","session":""}"#.to_vec()),
            Just(br#"{"kind":"log","session":7}"#.to_vec()),
            Just(br#"{"kind":"session","session":"s1"}"#.to_vec()),
            Just(br#"{"kind":"log","message":"{","session":"s1"}"#.to_vec()),
        ],
        (0u64..4).prop_map(|t| format!(
            r#"{{"kind":"log","message":"caf\u00e9 \u001b[2J","ts":"2026-01-01T00:00:0{t}Z"}}"#
        )
        .into_bytes()),
        Just(br#"{"kind":"mystery","x":[1,{"y":null}],"seq":2}"#.to_vec()),
        Just(br#"{"kind":"announce","formula":"q","confidence":7}"#.to_vec()),
        Just(b"{\"kind\":\"thought\",\"text\":\"\xce\xbb \xe2\x88\x80x\"}".to_vec()),
        Just(b"{\"kind\":\"log\",\"message\":\"bad \xff\xfe\"}".to_vec()),
        // Bytes that are not UTF-8 in every place a decoder might skip over them.
        prop::sample::select(vec![
            b"{\"kind\":\"log\",\"message\":\"overlong \xc0\xaf\"}".to_vec(),
            b"{\"kind\":\"log\",\"message\":\"overlong \xe0\x80\xaf\"}".to_vec(),
            b"{\"kind\":\"log\",\"message\":\"surrogate \xed\xa0\x80\"}".to_vec(),
            b"{\"kind\":\"log\",\"message\":\"past U+10FFFF \xf4\x90\x80\x80\"}".to_vec(),
            b"{\"kind\":\"log\",\"message\":\"cut \xe2\x88\"}".to_vec(),
            b"{\"kind\":\"log\",\"message\":\"stray \x80\"}".to_vec(),
            b"{\"kind\":\"log\",\"message\":\"end\"}\xe2\x88".to_vec(),
            b"{\"kind\":\"log\",\xff\"message\":\"between\"}".to_vec(),
            b"{\"kind\":\"log\",\"m\xc3ssage\":\"key\"}".to_vec(),
            b"{\"kind\":\"log\",\"m\xc3\xa9ssage\":\"key \xf0\x9f\x98\x80\"}".to_vec(),
            b"{\"kind\":\"log\",\"meta\":{\"a\":\"\xe2\x88\x80 \xff\"}}".to_vec(),
            b"{\"kind\":\"log\",\"meta\":{\"a\":\"\xe2\x88\x80\"},\"session\":\"s\xc3\xa9\"}"
                .to_vec(),
            b"{\"kind\":\"log\",\"session\":\"s1\xff\"}".to_vec(),
        ]),
        Just(b"\xef\xbb\xbf{\"kind\":\"desire\",\"text\":\"bom\"}".to_vec()),
        Just(b"\xef\xbb\xbf".to_vec()),
        Just(b"{\"kind\":\"log\"".to_vec()),
        Just(b"{\"kind\":\"log\",\"seq\":1,\"seq\":2}".to_vec()),
        Just(b"not json at all".to_vec()),
        Just(Vec::new()),
        Just(b"  \t".to_vec()),
        Just(b"\r".to_vec()),
        (cap - 2..cap + 3).prop_map(|n| {
            let mut v = br#"{"kind":"log","message":""#.to_vec();
            v.resize(n.saturating_sub(2), b'x');
            v.extend_from_slice(br#""}"#);
            v
        }),
        (cap * 2..cap * 5).prop_map(|n| vec![b'y'; n]),
    ]
}

/// Up to `max_pieces` pieces joined by LF or CRLF, maybe without a final newline.
pub fn stream(cap: usize, max_pieces: usize) -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((piece(cap), any::<bool>()), 0..max_pieces),
        any::<bool>(),
    )
        .prop_map(|(pieces, final_nl)| {
            let mut out = Vec::new();
            let n = pieces.len();
            for (i, (p, crlf)) in pieces.into_iter().enumerate() {
                out.extend_from_slice(&p);
                if i + 1 < n || final_nl {
                    out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
                }
            }
            out
        })
}
