//! A growable ring buffer of timestamps, the queue of the queueing leaky bucket: push at the
//! back, expire from the front.
//!
//! It is a `VecDeque<u64>` specialised to a power-of-two capacity so that indexing is a mask.

use crate::time::Micros;

/// Timestamps in non-decreasing order, oldest at the front.
#[derive(Debug, Clone)]
pub struct TimeRing {
    buf: Vec<Micros>,
    head: usize,
    len: usize,
}

impl Default for TimeRing {
    fn default() -> Self {
        Self::with_capacity(64)
    }
}

impl TimeRing {
    /// An empty ring with room for at least `capacity` timestamps before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        TimeRing {
            buf: vec![0; capacity.max(1).next_power_of_two()],
            head: 0,
            len: 0,
        }
    }

    /// How many timestamps are held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no timestamp is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops every timestamp `<= cutoff` from the front.
    #[inline]
    pub fn expire_through(&mut self, cutoff: Micros) {
        let mask = self.buf.len() - 1;
        while self.len > 0 && self.buf[self.head] <= cutoff {
            self.head = (self.head + 1) & mask;
            self.len -= 1;
        }
    }

    /// Drops every timestamp outside the window `(t - window, t]` that ends at `t`.
    #[inline]
    pub fn expire_before_window(&mut self, t: Micros, window: Micros) {
        if t >= window {
            self.expire_through(t - window);
        }
    }

    /// Appends a timestamp, which must not be older than the newest one held.
    #[inline]
    pub fn push(&mut self, t: Micros) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        self.buf[(self.head + self.len) & mask] = t;
        self.len += 1;
    }

    /// The oldest timestamp held.
    #[inline]
    pub fn front(&self) -> Option<Micros> {
        (self.len > 0).then(|| self.buf[self.head])
    }

    /// The `k`-th oldest timestamp held (0 is the oldest).
    #[inline]
    pub fn get(&self, k: usize) -> Option<Micros> {
        (k < self.len).then(|| self.buf[(self.head + k) & (self.buf.len() - 1)])
    }

    /// Removes and returns the oldest timestamp.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Micros> {
        let t = self.front()?;
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(t)
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    #[cold]
    fn grow(&mut self) {
        let old = self.buf.len();
        let mut buf = vec![0; old * 2];
        for (k, slot) in buf.iter_mut().take(self.len).enumerate() {
            *slot = self.buf[(self.head + k) & (old - 1)];
        }
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn behaves_like_a_deque() {
        let mut ring = TimeRing::with_capacity(2);
        let mut model = VecDeque::new();
        let mut t = 0;
        for step in 0..10_000u64 {
            t += step % 7;
            ring.push(t);
            model.push_back(t);
            let cutoff = t.saturating_sub(40);
            ring.expire_through(cutoff);
            while model.front().is_some_and(|&f| f <= cutoff) {
                model.pop_front();
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.front(), model.front().copied());
            assert_eq!(
                ring.len().checked_sub(1).and_then(|k| ring.get(k)),
                model.back().copied()
            );
        }
    }
}
