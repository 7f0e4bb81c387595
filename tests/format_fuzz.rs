//! Property: no importer panics, whatever the bytes. 10,000 seeded mutants of the fixtures
//! (byte edits and JSON-structure edits) go through every importer, detected and forced, strict
//! and lenient (one way per mutant, in turn); what loads must survive `smartcomment::write` and
//! load again with the same counts (checked for one mutant in four).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use memtrace::format::{detect, load, smartcomment, synth, Format, LoadOptions};
use memtrace::util::rng::SplitMix64;
use serde_json::Value;

/// Mutants per fixture (10,000 in all), scaled by `MEMTRACE_FUZZ_SCALE` (a float) for longer
/// or shorter runs.
#[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)] // a small positive count
fn cases(base: usize) -> usize {
    let scale: f64 = std::env::var("MEMTRACE_FUZZ_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    (base as f64 * scale) as usize
}

/// `SplitMix64`, seeded per case so a failure names a case that can be replayed alone.
type Rng = SplitMix64;

const TOKENS: [&str; 16] = [
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "null",
    "-1",
    "1e999",
    "\"\\ud800\"",
    "\\",
    "18446744073709551616",
    "\"resourceSpans\"",
    "\"observations\"",
    "\n",
];

fn mutate_bytes(rng: &mut Rng, b: &mut Vec<u8>) {
    if b.is_empty() {
        b.extend_from_slice(TOKENS[rng.below(TOKENS.len())].as_bytes());
        return;
    }
    let at = rng.below(b.len());
    match rng.below(6) {
        0 => b.truncate(at),
        1 => b[at] ^= 1 << rng.below(8),
        2 => {
            let end = (at + 1 + rng.below(64)).min(b.len());
            b.drain(at..end);
        }
        3 => {
            let end = (at + 1 + rng.below(256)).min(b.len());
            let copy = b[at..end].to_vec();
            let to = rng.below(b.len());
            b.splice(to..to, copy);
        }
        4 => {
            let token = TOKENS[rng.below(TOKENS.len())].as_bytes().to_vec();
            b.splice(at..at, token);
        }
        _ => b[at] = [b'0', b'9', b'"', b'{', b'-', b' ', 0xff][rng.below(7)],
    }
}

/// Every node of a JSON value, by pointer.
fn pointers(v: &Value, here: String, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| pointers(x, format!("{here}/{i}"), out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            pointers(
                x,
                format!("{here}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            );
        }),
        _ => {}
    }
    out.push(here);
}

fn mutate_json(rng: &mut Rng, doc: &mut Value) {
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    let strings: Vec<String> = all
        .iter()
        .filter(|p| doc.pointer(p).is_some_and(Value::is_string))
        .cloned()
        .collect();
    let target = all[rng.below(all.len())].clone();
    let replacement = match rng.below(5) {
        // Another value of another type.
        0 => [
            Value::Null,
            Value::Bool(true),
            serde_json::json!(-1),
            serde_json::json!(1.5e300),
            Value::String(String::new()),
            serde_json::json!([[[]]]),
            serde_json::json!({"id": 1}),
        ][rng.below(7)]
        .clone(),
        // A string copied from elsewhere: dangling references, duplicate ids, cycles.
        1 | 2 if !strings.is_empty() => doc
            .pointer(&strings[rng.below(strings.len())])
            .cloned()
            .unwrap_or(Value::Null),
        // A duplicated array element or a deleted key.
        3 => {
            if let Some(Value::Array(a)) = doc.pointer_mut(&target) {
                if !a.is_empty() {
                    let i = rng.below(a.len());
                    let copy = a[i].clone();
                    a.push(copy);
                }
            } else if let Some(Value::Object(o)) = doc.pointer_mut(&target) {
                let keys: Vec<String> = o.keys().cloned().collect();
                if !keys.is_empty() {
                    o.shift_remove(&keys[rng.below(keys.len())]);
                }
            }
            return;
        }
        _ => Value::String("2024-13-45T99:99:99Z".into()),
    };
    if let Some(slot) = doc.pointer_mut(&target) {
        *slot = replacement;
    }
}

/// One mutated input: 1-3 edits, JSON-structure edits when the input parses.
fn mutant(seed: u64, base: &[u8]) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut bytes = base.to_vec();
    for _ in 0..=rng.below(3) {
        let parsed = if rng.below(2) == 0 {
            serde_json::from_slice::<Value>(&bytes).ok()
        } else {
            None
        };
        match parsed {
            Some(mut doc) => {
                mutate_json(&mut rng, &mut doc);
                bytes = serde_json::to_vec(&doc).unwrap_or_default();
            }
            None => mutate_bytes(&mut rng, &mut bytes),
        }
    }
    bytes
}

/// Loads `bytes` one way, picked by `case`: detected or forced to one importer, strict or
/// lenient. What loads is written as smartcomment and read back when `round_trip`.
fn exercise(bytes: &[u8], case: usize, round_trip: bool) -> Result<usize, String> {
    let format = [
        None,
        Some(Format::Smartcomment),
        Some(Format::Otlp),
        Some(Format::Langfuse),
    ][case % 4];
    let opts = LoadOptions {
        format,
        lenient: (case / 4) % 2 == 0,
        ..LoadOptions::default()
    };
    // The span importers build graphs that are valid by construction: a problem the indexer
    // finds in their records (a `data.…` path) is a bug in the importer, not in the input.
    let span_format = matches!(
        format.or_else(|| detect(bytes).ok()),
        Some(Format::Otlp | Format::Langfuse)
    );
    let l = match load(bytes, opts) {
        Ok(l) => l,
        Err(e) if span_format && e.location().starts_with("data.") => {
            return Err(format!("{opts:?}: the importer made invalid records: {e}"));
        }
        Err(_) => return Ok(0),
    };
    if let Some(p) = l
        .problems
        .iter()
        .find(|p| span_format && p.location().starts_with("data."))
    {
        return Err(format!("{opts:?}: the importer made invalid records: {p}"));
    }
    if round_trip {
        let out = smartcomment::write(&l.trace).map_err(|e| format!("write failed: {e}"))?;
        let back = load(
            &out,
            LoadOptions {
                format: None,
                lenient: opts.lenient,
                ..Default::default()
            },
        )
        .map_err(|e| format!("{opts:?}: written trace does not load: {e}"))?;
        if back.trace.vars.len() != l.trace.vars.len()
            || back.trace.edges.len() != l.trace.edges.len()
        {
            return Err(format!("{opts:?}: round trip changed the counts"));
        }
    }
    Ok(1)
}

#[test]
fn ten_thousand_mutants_through_every_importer_without_a_panic() {
    let fixtures: Vec<(&str, Vec<u8>, usize)> = vec![
        (
            "otlp jsonl",
            include_bytes!("fixtures/otlp/mem0_openinference.jsonl").to_vec(),
            cases(3_000),
        ),
        (
            "otlp json",
            include_bytes!("fixtures/otlp/genai_semconv.json").to_vec(),
            cases(2_000),
        ),
        (
            "langfuse",
            include_bytes!("fixtures/langfuse/mem0_traces.json").to_vec(),
            cases(3_000),
        ),
        (
            "smartcomment demo",
            include_bytes!("../www/demo.json").to_vec(),
            cases(1_500),
        ),
        (
            "smartcomment synthetic",
            synth::bytes(&synth::Options { nodes: 12, seed: 3 }),
            cases(500),
        ),
    ];
    let started = Instant::now();
    let (mut total, mut loaded) = (0usize, 0usize);
    let mut failures = Vec::new();
    for (f, (name, base, n)) in fixtures.iter().enumerate() {
        assert_eq!(
            exercise(base, 0, true),
            Ok(1),
            "{name} loads before mutation"
        );
        let fixture_started = Instant::now();
        for case in 0..*n {
            let seed = ((f as u64) << 32) | case as u64;
            let bytes = mutant(seed, base);
            total += 1;
            match catch_unwind(AssertUnwindSafe(|| {
                exercise(&bytes, case, (case / 8) % 4 == 0)
            })) {
                Ok(Ok(n)) => loaded += usize::from(n > 0),
                Ok(Err(e)) => failures.push(format!("{name} seed {seed:#x}: {e}")),
                Err(_) => failures.push(format!("{name} seed {seed:#x}: PANIC")),
            }
        }
        println!(
            "{name}: {} bytes, {:.2} s",
            base.len(),
            fixture_started.elapsed().as_secs_f64()
        );
    }
    println!(
        "{total} mutants, {loaded} loaded in some mode, {} failures, {:.1} s",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(total, fixtures.iter().map(|f| f.2).sum::<usize>());
    assert!(total >= 10_000 || std::env::var("MEMTRACE_FUZZ_SCALE").is_ok());
    assert!(
        loaded > total / 10,
        "the mutator keeps enough inputs loadable to reach the graph code"
    );
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
}
