//! Mapping a stream of items on several threads while handing the results
//! on in item order, with a bounded window: what lets batch replay and
//! batch scoring run on every core in flat memory.

use std::collections::BTreeMap;
use std::sync::{mpsc, Condvar, Mutex, MutexGuard};

use crate::error::Result;

/// Shared between the workers of [`ordered_parallel`] and its caller.
struct Feed<I> {
    /// Where the items come from; `None` once exhausted.
    items: Option<I>,
    /// The position of the next item handed out.
    next: usize,
    /// Items before this position have been handed to the sink.
    emitted: usize,
    /// Set at the first failure: workers take no more items.
    stopped: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Maps `items` on `workers` threads, each with its own state from `init`
/// (made on its first item), and feeds the results to `sink` on the calling
/// thread in item order. A worker takes no item more than `window` places
/// ahead of the first one not yet emitted, which bounds the results
/// waiting to be reordered; `window` must be at least `workers`, so the
/// worker holding that first item is never the one kept waiting.
pub(crate) fn ordered_parallel<X, S, T>(
    items: impl Iterator<Item = Result<X>> + Send,
    workers: usize,
    window: usize,
    init: impl Fn() -> Result<S> + Sync,
    work: impl Fn(&mut S, X) -> Result<T> + Sync,
    sink: &mut dyn FnMut(T) -> Result<()>,
) -> Result<usize>
where
    X: Send,
    T: Send,
{
    let window = window.max(workers);
    let feed = Mutex::new(Feed {
        items: Some(items),
        next: 0,
        emitted: 0,
        stopped: false,
    });
    let room = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, Result<T>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (feed, room, init, work) = (&feed, &room, &init, &work);
            scope.spawn(move || {
                let mut state: Option<S> = None;
                loop {
                    let (position, item) = {
                        let mut f = lock(feed);
                        while !f.stopped && f.next >= f.emitted + window {
                            f = room.wait(f).unwrap_or_else(|e| e.into_inner());
                        }
                        if f.stopped {
                            return;
                        }
                        let Some(item) = f.items.as_mut().and_then(Iterator::next) else {
                            f.items = None;
                            return;
                        };
                        f.next += 1;
                        (f.next - 1, item)
                    };
                    let result = item.and_then(|x| {
                        let state = match &mut state {
                            Some(s) => s,
                            None => state.insert(init()?),
                        };
                        work(state, x)
                    });
                    if tx.send((position, result)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, Result<T>> = BTreeMap::new();
        let mut emitted = 0;
        let mut failure = None;
        // Ends once every worker has stopped and dropped its sender.
        for (position, result) in rx {
            if failure.is_some() {
                continue;
            }
            waiting.insert(position, result);
            while let Some(result) = waiting.remove(&emitted) {
                if let Err(e) = result.and_then(&mut *sink) {
                    failure = Some(e);
                    waiting.clear();
                    lock(&feed).stopped = true;
                    room.notify_all();
                    break;
                }
                emitted += 1;
                lock(&feed).emitted = emitted;
                room.notify_all();
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(emitted),
        }
    })
}
