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
    /// Workers waiting for room in the window: the caller wakes them only
    /// when there are some, since every wake-up is a system call.
    sleepers: usize,
}

/// What taking the next item gave.
enum Take<X> {
    Item(usize, Result<X>),
    /// The window is full (only the caller sees this; workers wait).
    Full,
    /// No more items, or the batch stopped.
    Done,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The next item, if the window has room for it.
fn take<I, X>(f: &mut Feed<I>, window: usize) -> Take<X>
where
    I: Iterator<Item = Result<X>>,
{
    if f.stopped {
        return Take::Done;
    }
    if f.next >= f.emitted + window {
        return Take::Full;
    }
    match f.items.as_mut().and_then(Iterator::next) {
        Some(item) => {
            f.next += 1;
            Take::Item(f.next - 1, item)
        }
        None => {
            f.items = None;
            Take::Done
        }
    }
}

/// Maps `items` on `workers` threads, each with its own state from `init`
/// (made on its first item), and feeds the results to `sink` on the calling
/// thread in item order. A worker takes no item more than `window` places
/// ahead of the first one not yet emitted, which bounds the results
/// waiting to be reordered; `window` must be at least `workers`, so the
/// worker holding that first item is never the one kept waiting.
///
/// The calling thread is one of the workers: it maps items itself between
/// handing results on, so there are never more busy threads than
/// `workers`, and it sleeps only when the window is full and the first
/// result it waits for is another worker's.
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
    let workers = workers.max(1);
    let window = window.max(workers);
    let feed = Mutex::new(Feed {
        items: Some(items),
        next: 0,
        emitted: 0,
        stopped: false,
        sleepers: 0,
    });
    let room = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, Result<T>)>();
    let map = |state: &mut Option<S>, item: Result<X>| {
        item.and_then(|x| {
            let state = match state {
                Some(s) => s,
                None => state.insert(init()?),
            };
            work(state, x)
        })
    };
    std::thread::scope(|scope| {
        for _ in 1..workers {
            let tx = tx.clone();
            let (feed, room, map) = (&feed, &room, &map);
            scope.spawn(move || {
                let mut state: Option<S> = None;
                loop {
                    let (position, item) = {
                        let mut f = lock(feed);
                        loop {
                            match take(&mut f, window) {
                                Take::Item(position, item) => break (position, item),
                                Take::Done => return,
                                Take::Full => {
                                    f.sleepers += 1;
                                    f = room.wait(f).unwrap_or_else(|e| e.into_inner());
                                    f.sleepers -= 1;
                                }
                            }
                        }
                    };
                    if tx.send((position, map(&mut state, item))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, Result<T>> = BTreeMap::new();
        let mut emitted = 0;
        let mut state: Option<S> = None;
        // Hands on every result that is next in order; the first failure
        // stops the batch.
        let mut emit = |waiting: &mut BTreeMap<usize, Result<T>>| -> Result<()> {
            let before = emitted;
            while let Some(result) = waiting.remove(&emitted) {
                if let Err(e) = result.and_then(&mut *sink) {
                    waiting.clear();
                    let mut f = lock(&feed);
                    f.stopped = true;
                    room.notify_all();
                    return Err(e);
                }
                emitted += 1;
            }
            if emitted > before {
                let mut f = lock(&feed);
                f.emitted = emitted;
                if f.sleepers > 0 {
                    room.notify_all();
                }
            }
            Ok(())
        };
        let outcome = loop {
            while let Ok((position, result)) = rx.try_recv() {
                waiting.insert(position, result);
            }
            if let Err(e) = emit(&mut waiting) {
                break Err(e);
            }
            let taken = take(&mut lock(&feed), window);
            match taken {
                Take::Item(position, item) => {
                    waiting.insert(position, map(&mut state, item));
                }
                Take::Full => match rx.recv() {
                    Ok((position, result)) => {
                        waiting.insert(position, result);
                    }
                    // The window is full, so a worker holds the first item
                    // and sends it before it stops; only a worker that
                    // panicked (the scope then re-raises it) gets here.
                    Err(_) => {
                        break Err(crate::error::Error::Other(
                            "a batch worker stopped without handing back its result".into(),
                        ))
                    }
                },
                // Ends once every worker has stopped and dropped its sender.
                Take::Done => {
                    let mut failed = None;
                    for (position, result) in rx.iter() {
                        waiting.insert(position, result);
                        if let Err(e) = emit(&mut waiting) {
                            failed = Some(e);
                            break;
                        }
                    }
                    break failed.map_or(Ok(()), Err);
                }
            }
        };
        // A failure stopped the feed; the workers finish what they hold.
        drop(rx);
        outcome.map(|()| emitted)
    })
}
