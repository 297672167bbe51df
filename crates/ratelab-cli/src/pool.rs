//! The CLI's one thread pool: `simulate` runs its runs on it, `study` its jobs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// The machine's cores (1 if unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `job(i)` for every `i` in `0..n` on up to `threads` threads, each taking the next
/// index when it is free, and hands each result to `done` on the calling thread as it arrives
/// (so what a caller keeps of the results is up to it, not the pool). `Err` if a thread
/// panicked; every other result has been handed over by then.
pub fn for_each<T: Send>(
    n: usize,
    threads: usize,
    job: impl Fn(usize) -> T + Sync,
    mut done: impl FnMut(usize, T),
) -> Result<(), String> {
    let threads = threads.clamp(1, n.max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        let (next, job) = (&next, &job);
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let tx = tx.clone();
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || tx.send((i, job(i))).is_err() {
                        break;
                    }
                })
            })
            .collect();
        drop(tx);
        for (i, result) in rx {
            done(i, result);
        }
        if handles.into_iter().all(|h| h.join().is_ok()) {
            Ok(())
        } else {
            Err("a worker thread failed".to_owned())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_runs_once_whatever_the_thread_count() {
        for threads in [1, 2, 7, 64] {
            let mut seen = vec![0u32; 100];
            for_each(
                100,
                threads,
                |i| i * i,
                |i, sq| {
                    assert_eq!(sq, i * i);
                    seen[i] += 1;
                },
            )
            .expect("no panic");
            assert!(seen.iter().all(|&c| c == 1), "{threads} threads: {seen:?}");
        }
        for_each(0, 4, |i| i, |_, _| panic!("no jobs")).expect("nothing to do");
    }

    #[test]
    fn a_panicking_job_is_an_error_not_a_crash() {
        let mut got = 0;
        let r = for_each(10, 2, |i| assert!(i != 3, "job 3 fails"), |_, ()| got += 1);
        assert!(r.is_err());
        assert!(got <= 9);
    }
}
