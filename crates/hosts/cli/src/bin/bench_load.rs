//! `scripts/bench`: load throughput of a generated ~100 MB smartcomment file, natively, against
//! `serde_json::from_slice::<serde_json::Value>` of the same bytes in the same run (ours builds
//! the indexed model and failure cases; theirs only a tree). Goal: ≤ 1.5× their time. Also
//! prints the peak heap of each, relative to the file size (goal for ours: ≤ 3×).
//!
//! Usage: `bench_load [NODES]` (default 54,000 nodes ≈ 100 MB).
#![allow(unsafe_code)] // the counting allocator below: GlobalAlloc is an unsafe trait

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use memtrace::format::{load, synth, LoadOptions};

/// Counts live and peak heap bytes.
struct PeakAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// Peak heap above the live heap at the start, while `f` runs; and `f`'s median time over `runs`.
fn measure<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, usize) {
    let mut times = Vec::new();
    let mut peak = 0;
    for _ in 0..runs {
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed().as_secs_f64());
        peak = peak.max(PEAK.load(Ordering::Relaxed) - base);
        drop(out);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], peak)
}

fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(54_000);
    let bytes = synth::bytes(&synth::Options { nodes, seed: 1 });
    let mb = bytes.len() as f64 / 1e6;
    let (theirs_s, theirs_peak) = measure(3, || {
        serde_json::from_slice::<serde_json::Value>(&bytes).ok()
    });
    let (ours_s, ours_peak) = measure(3, || load(&bytes, LoadOptions::default()).ok());
    let file = bytes.len() as f64;
    println!("| measure | memtrace load | serde_json::Value | ratio (ours / theirs) | goal |");
    println!("|---|---|---|---|---|");
    println!("| file | {mb:.1} MB smartcomment, {nodes} generated nodes | same bytes | | |");
    println!(
        "| time (median of 3) | {:.0} ms | {:.0} ms | {:.2} | ≤ 1.5 |",
        ours_s * 1e3,
        theirs_s * 1e3,
        ours_s / theirs_s
    );
    println!(
        "| throughput | {:.0} MB/s | {:.0} MB/s | | |",
        mb / ours_s,
        mb / theirs_s
    );
    println!(
        "| peak heap beyond the input | {:.0} MB ({:.2}× file) | {:.0} MB ({:.2}× file) | {:.2} | ours + input ≤ 3× file |",
        ours_peak as f64 / 1e6,
        ours_peak as f64 / file,
        theirs_peak as f64 / 1e6,
        theirs_peak as f64 / file,
        ours_peak as f64 / theirs_peak.max(1) as f64
    );
}
