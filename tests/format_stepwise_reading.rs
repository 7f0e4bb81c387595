//! `StepLoad::reading`: a file parsed while it is read, chunk by chunk, gives what
//! `format::load` gives for the whole file, good or bad, and parses before the last chunk.

use memtrace::format::stepwise::StepLoad;
use memtrace::format::{load, synth, FormatError, LoadOptions, Loaded};

const FIXTURE: &[u8] = include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-1.json");
const DEMO: &[u8] = include_bytes!("../www/demo.json");
const OTLP: &[u8] = include_bytes!("fixtures/otlp/mem0_genai_eval.jsonl");
const BARE: &[u8] = include_bytes!("fixtures/smartcomment/mem0_bare.json");

/// Loads `bytes` pushed `chunk` bytes at a time, stepping until it waits after each; the result
/// and how far the load had got before the last push.
fn read_in_chunks(
    bytes: &[u8],
    opts: LoadOptions,
    chunk: usize,
) -> (Result<Loaded, FormatError>, f64) {
    let mut s = StepLoad::reading(bytes.len(), opts);
    let mut before_end = 0.0;
    for part in bytes.chunks(chunk) {
        before_end = s.progress();
        s.push(part);
        let mut guard = 0;
        while !s.waiting() {
            assert!(s.step(64 * 1024).is_none(), "a result before the end");
            guard += 1;
            assert!(guard < 1_000_000, "no progress while reading");
        }
    }
    s.end();
    loop {
        if let Some(r) = s.step(64 * 1024) {
            return (r, before_end);
        }
    }
}

fn same(bytes: &[u8], opts: LoadOptions, chunk: usize) -> f64 {
    let (got, before_end) = read_in_chunks(bytes, opts, chunk);
    match (got, load(bytes, opts)) {
        (Ok(g), Ok(w)) => {
            assert_eq!(g.format, w.format);
            assert!(g.trace == w.trace, "the trace differs (chunk {chunk})");
        }
        (Err(g), Err(w)) => assert_eq!(g, w),
        (g, w) => panic!("read {:?} vs load {:?}", g.map(|_| ()), w.map(|_| ())),
    }
    before_end
}

fn big() -> Vec<u8> {
    synth::bytes(&synth::Options {
        nodes: 6000,
        seed: 3,
    })
}

#[test]
fn a_large_file_is_parsed_while_it_is_read() {
    let bytes = big();
    assert!(bytes.len() > 8 << 20, "{} bytes", bytes.len());
    for chunk in [64 * 1024, 1 << 20] {
        let before_end = same(&bytes, LoadOptions::default(), chunk);
        assert!(
            before_end > 0.3,
            "only {before_end} done before the last chunk"
        );
    }
}

#[test]
fn small_files_and_other_formats_give_the_same_result() {
    let lenient = LoadOptions {
        lenient: true,
        ..LoadOptions::default()
    };
    for bytes in [FIXTURE, DEMO, OTLP, BARE] {
        for chunk in [1000, 1 << 20] {
            same(bytes, LoadOptions::default(), chunk);
            same(bytes, lenient, chunk);
        }
    }
}

#[test]
fn a_bad_file_gives_the_same_error() {
    let good = big();
    let mut broken = good.clone();
    // A broken record in the middle, one cut short, one with trailing bytes.
    let mid = good.len() / 2;
    let comma = mid + good[mid..].iter().position(|&b| b == b',').unwrap_or(0);
    broken[comma] = b';';
    let cut = &good[..good.len() * 3 / 4];
    let mut trailing = good.clone();
    trailing.extend_from_slice(b" {}");
    for bytes in [
        broken.as_slice(),
        cut,
        trailing.as_slice(),
        b"",
        b"{",
        b"[1,2",
    ] {
        for chunk in [64 * 1024, 1 << 20] {
            same(bytes, LoadOptions::default(), chunk);
        }
    }
}
