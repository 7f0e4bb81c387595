//! A progress line on stderr while cases are attributed (`attribute`, `eval`): count, rate and
//! time left, redrawn in place at most ten times a second; only when stderr is a terminal and
//! `--quiet` is not given, so logs and pipes stay clean. Wiped before results are printed.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Cases done of cases known, since the first was started.
pub struct Progress {
    shown: bool,
    done: Cell<usize>,
    total: Cell<usize>,
    started: Instant,
    drawn: Cell<Option<Instant>>,
}

impl Progress {
    /// A line shown only on a terminal and when not `quiet`.
    pub fn new(quiet: bool) -> Self {
        Self {
            shown: !quiet && std::io::stderr().is_terminal(),
            done: Cell::new(0),
            total: Cell::new(0),
            started: Instant::now(),
            drawn: Cell::new(None),
        }
    }

    /// `n` more cases to do.
    pub fn add(&self, n: usize) {
        self.total.set(self.total.get() + n);
    }

    /// One case done.
    pub fn tick(&self) {
        self.done.set(self.done.get() + 1);
        let now = Instant::now();
        let due = self
            .drawn
            .get()
            .is_none_or(|t| now.duration_since(t) >= Duration::from_millis(100));
        if self.shown && (due || self.done.get() == self.total.get()) {
            self.drawn.set(Some(now));
            eprint!("\r\x1b[K{}", self.line(now.duration_since(self.started)));
        }
    }

    /// Wipes the line, so other output can be printed; the next tick draws it again.
    pub fn clear(&self) {
        if self.shown && self.drawn.get().is_some() {
            eprint!("\r\x1b[K");
        }
    }

    fn line(&self, elapsed: Duration) -> String {
        let (done, total) = (self.done.get(), self.total.get());
        let secs = elapsed.as_secs_f64().max(1e-3);
        let rate = done as f64 / secs;
        let left = total.saturating_sub(done) as f64 / rate.max(1e-9);
        format!("{done}/{total} cases · {rate:.1}/s · {left:.0} s left")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_rate_and_time_left() {
        let p = Progress::new(true);
        p.add(10);
        for _ in 0..4 {
            p.tick();
        }
        assert_eq!(
            p.line(Duration::from_secs(2)),
            "4/10 cases · 2.0/s · 3 s left"
        );
    }
}
