//! Bounded concurrency for batches: at most `k` calls in flight, results in input order.
//! Works on one thread (the browser's), because the futures interleave at their awaits.

use std::future::Future;

use futures_util::stream::{self, StreamExt};

use super::{ChatRequest, ChatResponse, Llm, ProviderError};

/// Runs `f` on every item with at most `concurrency` futures in flight (at least 1) and
/// returns the outputs in input order.
///
/// # Complexity
/// O(n) futures created; each wake polls only the ready ones.
pub async fn run_bounded<I, F, Fut>(items: I, concurrency: usize, f: F) -> Vec<Fut::Output>
where
    I: IntoIterator,
    F: FnMut(I::Item) -> Fut,
    Fut: Future,
{
    stream::iter(items)
        .map(f)
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// Sends every request through `llm`, at most `concurrency` at a time, results in order.
pub async fn chat_batch<L: Llm>(
    llm: &L,
    requests: &[ChatRequest],
    concurrency: usize,
) -> Vec<Result<ChatResponse, ProviderError>> {
    run_bounded(requests, concurrency, |r| llm.chat(r)).await
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::*;

    /// Pending once, then ready: lets other futures run in between.
    struct YieldOnce(bool);
    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    #[test]
    fn keeps_order_and_bounds_in_flight() {
        for k in [1usize, 3, 8] {
            let in_flight = Cell::new(0usize);
            let peak = Cell::new(0usize);
            let out = futures_executor::block_on(run_bounded(0..20u32, k, |i| {
                let (in_flight, peak) = (&in_flight, &peak);
                async move {
                    in_flight.set(in_flight.get() + 1);
                    peak.set(peak.get().max(in_flight.get()));
                    for _ in 0..=(20 - i) % 4 {
                        YieldOnce(false).await;
                    }
                    in_flight.set(in_flight.get() - 1);
                    i * 2
                }
            }));
            assert_eq!(out, (0..20).map(|i| i * 2).collect::<Vec<_>>());
            assert_eq!(peak.get(), k, "peak in flight with k = {k}");
        }
    }
}
