//! Long work off the Python thread: the GIL is released while it runs, progress is
//! shown and Ctrl-C is honoured while it waits.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use pyo3::prelude::*;

/// How often the waiting thread takes the GIL back to show progress and check for
/// Ctrl-C.
const TICK: Duration = Duration::from_millis(100);

/// Where the worker leaves its outcome (a panic included) and wakes the waiter.
struct Slot<T> {
    value: Mutex<Option<std::thread::Result<T>>>,
    ready: Condvar,
}

/// Runs `work` on a thread of its own while this one waits with the GIL released,
/// taking it back every [`TICK`] to call `tick` (progress) and to check for signals.
/// On Ctrl-C (or an error of `tick`) it sets `stop`, which `work` must watch, waits
/// for `work` to return and raises the error; `work`'s result is then dropped. A panic
/// of `work` is resumed here (PyO3 raises it as `PanicException`).
pub fn detached<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send,
    mut tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<T> {
    let slot = Slot {
        value: Mutex::new(None),
        ready: Condvar::new(),
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            let outcome = catch_unwind(AssertUnwindSafe(work));
            if let Ok(mut v) = slot.value.lock() {
                *v = Some(outcome);
            }
            slot.ready.notify_all();
        });
        let wait = |timeout: Option<Duration>| {
            py.detach(|| {
                let Ok(mut v) = slot.value.lock() else {
                    return None;
                };
                loop {
                    if let Some(outcome) = v.take() {
                        return Some(outcome);
                    }
                    match timeout {
                        Some(t) => {
                            let Ok((guard, _)) = slot.ready.wait_timeout(v, t) else {
                                return None;
                            };
                            v = guard;
                            return v.take();
                        }
                        None => {
                            let Ok(guard) = slot.ready.wait(v) else {
                                return None;
                            };
                            v = guard;
                        }
                    }
                }
            })
        };
        loop {
            if let Some(outcome) = wait(Some(TICK)) {
                tick(py)?;
                return match outcome {
                    Ok(v) => Ok(v),
                    Err(panic) => resume_unwind(panic),
                };
            }
            if let Err(e) = py.check_signals().and_then(|()| tick(py)) {
                stop.store(true, Ordering::Relaxed);
                let _ = wait(None);
                return Err(e);
            }
        }
    })
}
