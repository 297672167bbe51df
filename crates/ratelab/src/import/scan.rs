//! Line scanning: finding a byte (a newline, a quote) eight bytes at a time.

pub(super) const ONES: u64 = 0x0101_0101_0101_0101;
pub(super) const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every zero byte of `x` (and perhaps of bytes after the first zero byte,
/// so only the lowest flag is to be trusted).
#[inline(always)]
pub(super) fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The first byte equal to `a` or `b`, eight bytes at a time.
#[inline(always)]
pub(super) fn find_either(s: &[u8], a: u8, b: u8) -> Option<usize> {
    let (wa, wb) = (ONES * u64::from(a), ONES * u64::from(b));
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        // The lowest flag of each mask is exact, so the lowest of both is the first match.
        let found = zero_bytes(w ^ wa) | zero_bytes(w ^ wb);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == a || c == b)
        .map(|i| at + i)
}

/// The first `\n`.
pub(super) fn find_newline(s: &[u8]) -> Option<usize> {
    find_either(s, b'\n', b'\n')
}
