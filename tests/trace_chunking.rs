//! The reader's output depends only on the bytes, never on how they were split into chunks;
//! and its framing agrees with an independent line splitter.

use doxascope::trace::{Item, Reader, ReaderConfig};
use proptest::prelude::*;

const CAP: usize = 96;

#[path = "support/streams.rs"]
mod streams;

fn stream() -> impl Strategy<Value = Vec<u8>> {
    streams::stream(CAP, 12)
}

fn read(chunks: &[&[u8]]) -> Vec<Item> {
    let mut r = Reader::new(
        "t.jsonl",
        ReaderConfig {
            max_line_bytes: CAP,
        },
    );
    let mut out = Vec::new();
    for c in chunks {
        r.feed(c, &mut out);
    }
    r.finish(&mut out);
    out
}

fn line_of(item: &Item) -> (u64, u64) {
    match item {
        Item::Event(e) => (e.origin.line, e.origin.offset),
        Item::Problem(p) => (p.origin.line, p.origin.offset),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_same_items(
        bytes in stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..16),
    ) {
        let whole = read(&[&bytes]);
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks = Vec::new();
        let mut prev = 0;
        for p in points {
            chunks.push(&bytes[prev..p]);
            prev = p;
        }
        chunks.push(&bytes[prev..]);
        prop_assert_eq!(&read(&chunks), &whole);
        // Byte by byte, the most hostile chunking.
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(&read(&singles), &whole);
    }

    #[test]
    fn framing_agrees_with_a_naive_splitter(bytes in stream()) {
        // Oracle: split at LF, number lines from 1, track start offsets.
        let mut expected = Vec::new();
        let mut offset = 0u64;
        for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let content = raw.strip_suffix(b"\r").unwrap_or(raw);
            let content = if offset == 0 {
                content.strip_prefix(b"\xef\xbb\xbf").unwrap_or(content)
            } else {
                content
            };
            let blank = content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
            if !blank {
                expected.push((i as u64 + 1, offset));
            }
            offset += raw.len() as u64 + 1;
        }
        let items = read(&[&bytes]);
        let mut got: Vec<(u64, u64)> = items.iter().map(line_of).collect();
        got.dedup();
        // Every non-blank line yields at least one item, at its true line and offset, in order
        // (a misplaced BOM line may yield a warning and an event: deduplicated above).
        prop_assert_eq!(got, expected);
    }
}
