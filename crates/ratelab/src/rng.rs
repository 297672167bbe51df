//! The one random number generator of ratelab: PCG32 (PCG-XSH-RR 64/32), seeded from the
//! scenario, with a named stream for every purpose.
//!
//! PCG32 does all its work in 64-bit integer arithmetic, so it gives the same numbers natively
//! and in 32-bit wasm. Exponential variates come from a ziggurat whose tables and rare slow
//! paths use the pure-Rust `libm`, never the platform's maths library, so they are identical
//! on both targets too, and the common path costs no logarithm at all.

use std::sync::OnceLock;

/// The LCG's multiplier, PCG's 64-bit default.
const MULTIPLIER: u64 = 6_364_136_223_846_793_005;

/// PCG32 (PCG-XSH-RR 64/32): the reference generator's numbers (`rand_pcg::Pcg32`'s, which a
/// test holds it to, draw for draw). A 64-bit draw takes two steps of the LCG one after the
/// other. (Until the tenth session the next state was two steps on in one multiply, by `M²`,
/// which shortened the chain of dependent steps but held two more numbers in registers: the
/// steady arrivals' loop, which is short of registers and not of time between steps, is 2%
/// faster with one multiplier and one increment.)
#[derive(Debug, Clone)]
struct Pcg32 {
    state: u64,
    increment: u64,
}

impl Pcg32 {
    /// The generator of state `state` and stream `stream`, as the reference seeds it.
    fn new(state: u64, stream: u64) -> Self {
        let increment = (stream << 1) | 1;
        let mut pcg = Pcg32 {
            state: state.wrapping_add(increment),
            increment,
        };
        pcg.state = pcg.step(pcg.state);
        pcg
    }

    #[inline(always)]
    fn step(&self, state: u64) -> u64 {
        state.wrapping_mul(MULTIPLIER).wrapping_add(self.increment)
    }

    /// XSH RR: xorshift high, then a rotation by the top five bits.
    #[inline(always)]
    fn output(state: u64) -> u32 {
        let rot = (state >> 59) as u32;
        let xsh = (((state >> 18) ^ state) >> 27) as u32;
        xsh.rotate_right(rot)
    }

    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        let state = self.state;
        self.state = self.step(state);
        Self::output(state)
    }

    /// Two draws, the first in the low half.
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        let s0 = self.state;
        let s1 = self.step(s0);
        self.state = self.step(s1);
        u64::from(Self::output(s0)) | u64::from(Self::output(s1)) << 32
    }
}

/// What a generator is for. Each purpose draws from its own PCG stream, so adding a draw for
/// one purpose (say, routing to servers) never shifts the numbers of another (the arrivals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// Arrival times of the traffic.
    Arrivals = 1,
    /// Which server a request is routed to, when a limit is split across servers.
    Routing = 2,
    /// Small random test cases (property tests and the optimality check of the study).
    Cases = 3,
    /// A retrying client's jitter.
    Jitter = 4,
}

/// A seeded PCG32 generator.
#[derive(Debug, Clone)]
pub struct Rng {
    pcg: Pcg32,
}

impl Rng {
    /// A generator for `stream` of run `run` of the scenario seeded with `seed`.
    ///
    /// The run number is folded into the state with a SplitMix64 step so that runs of one
    /// seed, and seeds next to each other, start far apart.
    pub fn new(seed: u64, run: u64, stream: Stream) -> Self {
        let state = splitmix64(seed ^ splitmix64(run.wrapping_add(0x5eed)));
        Rng {
            pcg: Pcg32::new(state, (stream as u64) << 8 | (run & 0xff)),
        }
    }

    /// A generator for `stream` of client `client` of a fleet of clients: client 0's is
    /// [`Rng::new`]'s, so that one client draws what the essays' single client drew, and each
    /// other client's seed is folded from the scenario's and its number.
    pub fn for_client(seed: u64, run: u64, stream: Stream, client: u32) -> Self {
        let seed = match client {
            0 => seed,
            c => splitmix64(seed ^ splitmix64(u64::from(c).wrapping_add(0x00c1_1e47))),
        };
        Rng::new(seed, run, stream)
    }

    /// An independent generator split off this one (one draw of it seeds the new one), for a
    /// part of a stream that must be replayed alone: on/off traffic's periods, which the
    /// memory estimate lays out without drawing the arrivals between them.
    pub fn fork(&mut self) -> Rng {
        let state = splitmix64(self.next_u64());
        Rng {
            pcg: Pcg32::new(state, 0x0ff0_0ff0),
        }
    }

    /// A uniform integer in `lo..=hi` (`lo ≤ hi`), unbiased (Lemire's method on 64 bits).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        let Some(n) = (hi - lo).checked_add(1) else {
            return self.next_u64();
        };
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return lo + (m >> 64) as u64;
            }
        }
    }

    /// 32 random bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.pcg.next_u32()
    }

    /// 64 random bits (two PCG outputs, low half first).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.pcg.next_u64()
    }

    /// A uniform float in [0, 1) with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform float in (0, 1].
    #[inline]
    pub fn unit_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n` (Lemire's multiply-and-reject, unbiased). `n` must be > 0.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0);
        self.below_given(n, below_threshold(n))
    }

    /// [`Rng::below`] with its rejection threshold, [`below_threshold`]`(n)`, worked out
    /// beforehand (a division saved per draw when `n` does not change); the same draws.
    #[inline]
    pub fn below_given(&mut self, n: u32, threshold: u32) -> u32 {
        debug_assert!(n > 0 && threshold == below_threshold(n));
        loop {
            let m = u64::from(self.next_u32()) * u64::from(n);
            if (m as u32) >= threshold {
                return (m >> 32) as u32;
            }
        }
    }

    /// A standard exponential variate (mean 1), by the ziggurat method. The common case (about
    /// 98.8% of draws) is one 64-bit draw, a table lookup and a compare, inlined where it is
    /// drawn (natively: in the page's modules, where every byte is fetched, it is a call); the
    /// rest is out of line, in `exp1_rest`.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    #[cfg_attr(target_arch = "wasm32", inline)]
    pub fn exp1(&mut self) -> f64 {
        self.exp1_from(ExpTables::get())
    }

    /// [`Rng::exp1`] with its tables fetched beforehand: for a loop of draws, which then does
    /// not ask for them (a load, a test and a branch) at each.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    #[cfg_attr(target_arch = "wasm32", inline)]
    pub fn exp1_from(&mut self, tables: ExpTables) -> f64 {
        let z = tables.0;
        let bits = self.next_u64();
        let i = (bits & 0xff) as usize;
        // `u · x[i]` with `u` the top 53 bits over 2^53: in the study's build in one multiply,
        // by `x[i]` scaled beforehand, the same number (scaling by a power of two is exact and
        // commutes with rounding); the page's other modules keep the two, which weigh less.
        #[cfg(feature = "storm")]
        let x = (bits >> 11) as f64 * z.x_scaled[i];
        #[cfg(not(feature = "storm"))]
        let x = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * z.x[i];
        if x < z.x[i + 1] {
            return x;
        }
        // The study's build hands the generator to the rare path and back by value, so that
        // a loop holding it in a local keeps its state in a register; the page's other
        // modules pass a reference, which weighs less.
        #[cfg(feature = "storm")]
        {
            let pcg = &mut self.pcg;
            let (x, state) = Rng::exp1_rest(pcg.state, pcg.increment, i, x);
            pcg.state = state;
            x
        }
        #[cfg(not(feature = "storm"))]
        self.exp1_rest_in_place(i, x)
    }

    /// [`Rng::exp1_rest_in_place`] with the generator taken and given back by value, as its
    /// two numbers and its state after: the variate and that state. Each in a register: a
    /// generator passed whole went through memory both ways, and its reload (a 16-byte load of
    /// two 8-byte stores) missed the store buffer's forwarding.
    #[cfg(feature = "storm")]
    #[cold]
    #[inline(never)]
    fn exp1_rest(state: u64, increment: u64, i: usize, x: f64) -> (f64, u64) {
        let mut rng = Rng {
            pcg: Pcg32 { state, increment },
        };
        let x = rng.exp1_rest_in_place(i, x);
        (x, rng.pcg.state)
    }

    /// [`Rng::exp1`] after its first candidate `x`, in layer `i`, fell outside the layer's
    /// rectangle: the tail, the wedge's test, and further candidates, drawn as before.
    #[cfg_attr(feature = "storm", inline)]
    #[cfg_attr(not(feature = "storm"), cold, inline(never))]
    fn exp1_rest_in_place(&mut self, mut i: usize, mut x: f64) -> f64 {
        let z = ziggurat();
        loop {
            if i == 0 {
                // The tail beyond R is itself exponential, shifted: memorylessness.
                return ZIG_R - libm::log(self.unit_open0());
            }
            let y = z.f[i] + self.unit() * (z.f[i + 1] - z.f[i]);
            if wedge_accepts(z, i, x, y) {
                return x;
            }
            let bits = self.next_u64();
            i = (bits & 0xff) as usize;
            x = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * z.x[i];
            if x < z.x[i + 1] {
                return x;
            }
        }
    }

    /// A geometric variate on 1, 2, 3, ... with the given mean (≥ 1).
    ///
    /// `rate` is `-ln(1 - 1/mean)`, computed once by [`geometric_rate`].
    #[inline]
    pub fn geometric(&mut self, rate: f64) -> u64 {
        if rate.is_infinite() {
            return 1;
        }
        1 + (self.exp1() / rate) as u64
    }
}

/// The exponential draw's tables ([`Rng::exp1_from`]), made once for the whole process.
#[derive(Debug, Clone, Copy)]
pub struct ExpTables(&'static Ziggurat);

impl ExpTables {
    /// The tables, made on first use.
    #[inline]
    pub fn get() -> Self {
        ExpTables(ziggurat())
    }
}

/// The rate parameter of [`Rng::geometric`] for a mean of `mean` (≥ 1).
pub fn geometric_rate(mean: f64) -> f64 {
    if mean <= 1.0 {
        return f64::INFINITY;
    }
    -libm::log1p(-1.0 / mean)
}

/// The ziggurat's wedge test, `y < exp(-x)` for `x` in layer `i` (between `x[i + 1]` and
/// `x[i]`), with `exp` the pure-Rust `libm`'s. Most answers need no exponential: `exp(-x)` is
/// convex, so it lies above its tangents at the layer's two edges and below the chord between
/// them; `y` more than 10^-12 below the higher tangent is accepted, more than 10^-12 above the
/// chord refused, each as `libm::exp` would (its error, and these bounds' rounding, are under
/// 10^-15). Only the band between is decided by `libm::exp` itself. A test holds the answers
/// equal to `y < libm::exp(-x)`, near the curve and far from it.
#[inline]
fn wedge_accepts(z: &Ziggurat, i: usize, x: f64, y: f64) -> bool {
    const MARGIN: f64 = 1e-12;
    let (a, b) = (z.x[i + 1], z.x[i]);
    let (fa, fb) = (z.f[i + 1], z.f[i]);
    let below = (fa * (1.0 - (x - a))).max(fb * (1.0 + (b - x)));
    if y < below - MARGIN {
        return true;
    }
    let chord = fa + (x - a) * ((fb - fa) / (b - a));
    if y > chord + MARGIN {
        return false;
    }
    y < libm::exp(-x)
}

/// One SplitMix64 step: a bijective mix of 64 bits.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The start of the exponential ziggurat's tail (Marsaglia and Tsang, 256 layers).
const ZIG_R: f64 = 7.697_117_470_131_05;
/// The area of each of the 256 layers.
const ZIG_V: f64 = 0.003_949_659_822_581_557;

/// Ziggurat layer edges `x` (decreasing, `x[256] = 0`) and the density at them, `f = exp(-x)`.
#[derive(Debug)]
struct Ziggurat {
    x: [f64; 257],
    /// `x[i] / 2^53`, exactly: a 53-bit integer times it is `u · x[i]` with `u` that
    /// integer over 2^53, rounded once as that product is (the study's build).
    #[cfg(feature = "storm")]
    x_scaled: [f64; 257],
    f: [f64; 257],
}

fn ziggurat() -> &'static Ziggurat {
    static TABLES: OnceLock<Ziggurat> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut x = [0.0; 257];
        let mut f = [0.0; 257];
        let fr = libm::exp(-ZIG_R);
        // Layer 0 is the base strip plus the tail; its virtual width makes its area V.
        x[0] = ZIG_V / fr;
        x[1] = ZIG_R;
        for i in 1..256 {
            let next = ZIG_V / x[i] + libm::exp(-x[i]);
            x[i + 1] = if next >= 1.0 { 0.0 } else { -libm::log(next) };
        }
        x[256] = 0.0;
        for i in 0..257 {
            f[i] = libm::exp(-x[i]);
        }
        f[0] = 0.0;
        Ziggurat {
            #[cfg(feature = "storm")]
            x_scaled: x.map(|x| x * (1.0 / (1u64 << 53) as f64)),
            x,
            f,
        }
    })
}

/// The rejection threshold of [`Rng::below`]`(n)`: `2^32 mod n`.
#[inline]
pub fn below_threshold(n: u32) -> u32 {
    n.wrapping_neg() % n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcg32_matches_the_reference_generator() {
        // The reference pcg32-global demo: seed 42, sequence 54.
        let mut pcg = Pcg32::new(42, 54);
        let got: Vec<u32> = (0..6).map(|_| pcg.next_u32()).collect();
        assert_eq!(
            got,
            [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e]
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn pcg32_draws_what_rand_pcg_draws() {
        use rand_core::Rng as _;
        for (state, stream) in [
            (0, 0),
            (42, 54),
            (u64::MAX, u64::MAX),
            (0x5eed, 0x0ff0_0ff0),
        ] {
            let mut ours = Pcg32::new(state, stream);
            let mut theirs = rand_pcg::Pcg32::new(state, stream);
            for i in 0..10_000 {
                if i % 3 == 0 {
                    assert_eq!(ours.next_u32(), theirs.next_u32(), "draw {i}");
                } else {
                    assert_eq!(ours.next_u64(), theirs.next_u64(), "draw {i}");
                }
            }
        }
    }

    #[test]
    fn streams_and_runs_differ() {
        let a = Rng::new(7, 0, Stream::Arrivals).next_u64();
        let b = Rng::new(7, 0, Stream::Routing).next_u64();
        let c = Rng::new(7, 1, Stream::Arrivals).next_u64();
        let d = Rng::new(8, 0, Stream::Arrivals).next_u64();
        assert!(a != b && a != c && a != d && b != c);
        assert_eq!(a, Rng::new(7, 0, Stream::Arrivals).next_u64());
    }

    #[test]
    fn below_is_uniform() {
        let mut rng = Rng::new(1, 0, Stream::Cases);
        let n = 7u32;
        let draws = 700_000;
        let mut counts = [0u32; 7];
        for _ in 0..draws {
            counts[rng.below(n) as usize] += 1;
        }
        // Chi-square with 6 degrees of freedom: the 99.99th percentile is 27.9.
        let e = f64::from(draws) / f64::from(n);
        let chi2: f64 = counts.iter().map(|&c| (f64::from(c) - e).powi(2) / e).sum();
        assert!(chi2 < 27.9, "chi2 {chi2} counts {counts:?}");
    }

    #[test]
    fn exponential_has_the_right_distribution() {
        let mut rng = Rng::new(3, 0, Stream::Cases);
        let n = 400_000;
        let mut xs: Vec<f64> = (0..n).map(|_| rng.exp1()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        // The mean of n Exp(1) has standard error 1/sqrt(n); allow 4 standard errors.
        let se = 1.0 / (n as f64).sqrt();
        assert!((mean - 1.0).abs() < 4.0 * se, "mean {mean}");
        // The sample variance of Exp(1) has standard error about sqrt(8/n).
        assert!(
            (var - 1.0).abs() < 4.0 * (8.0 / n as f64).sqrt(),
            "var {var}"
        );
        // Kolmogorov-Smirnov against 1 - exp(-x): the 99.9% critical value is 1.95/sqrt(n).
        xs.sort_by(f64::total_cmp);
        let d = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let cdf = 1.0 - (-x).exp();
                (cdf - i as f64 / n as f64)
                    .abs()
                    .max(((i + 1) as f64 / n as f64 - cdf).abs())
            })
            .fold(0.0, f64::max);
        assert!(d < 1.95 / (n as f64).sqrt(), "KS distance {d}");
        assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
        // The tail beyond R (about 7.70, drawn by its own branch) is reached and is right:
        // the count above 8 is Binomial(n, e^-8), mean 134.2 and SD 11.6 at n = 400,000;
        // allow 4 SD. This catches a tail branch that is never taken, or that returns R or
        // anything capped near it (0 above 8, 11 SD off); subtler errors in the tail's shape
        // are too rare at this n to see (a tail of R + 2·Exp(1) gives about 156, 1.9 SD).
        let tail = xs.iter().filter(|&&x| x > 8.0).count() as f64;
        let p = (-8.0f64).exp();
        let (m, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
        assert!(
            (tail - m).abs() < 4.0 * sd,
            "{tail} above 8, expected {m:.1} ± {sd:.1}"
        );
        assert!(
            xs.iter().any(|&x| x > ZIG_R + 1.0),
            "the tail branch beyond R is reached"
        );
    }

    /// The wedge test's bounds answer as `libm::exp` does: for random points of every layer,
    /// and for points a few units in the last place either side of the curve.
    #[test]
    fn the_wedge_test_answers_as_the_exponential_does() {
        let z = ziggurat();
        let mut rng = Rng::new(7, 0, Stream::Cases);
        let mut near = 0;
        for n in 0..4_000_000u32 {
            let i = 1 + (n % 255) as usize;
            let x = z.x[i + 1] + rng.unit() * (z.x[i] - z.x[i + 1]);
            let e = libm::exp(-x);
            let y = if n % 2 == 0 {
                z.f[i] + rng.unit() * (z.f[i + 1] - z.f[i])
            } else {
                // Within 8 ulps of the curve, either side.
                near += 1;
                let ulps = i64::from(rng.below(17)) - 8;
                f64::from_bits(e.to_bits().wrapping_add_signed(ulps))
            };
            assert_eq!(wedge_accepts(z, i, x, y), y < e, "layer {i}, x {x}, y {y}");
        }
        assert_eq!(near, 2_000_000);
    }

    #[test]
    fn geometric_has_the_right_mean() {
        let mut rng = Rng::new(4, 0, Stream::Cases);
        for mean in [1.0, 5.0, 20.0, 50.0] {
            let rate = geometric_rate(mean);
            let n = 200_000;
            let sum: u64 = (0..n).map(|_| rng.geometric(rate)).sum();
            let got = sum as f64 / n as f64;
            // Geometric variance is m(m - 1); allow 4 standard errors (and exactness at m = 1).
            let se = (mean * (mean - 1.0) / n as f64).sqrt();
            assert!((got - mean).abs() <= 4.0 * se, "mean {mean}: got {got}");
        }
    }
}
