//! A tiny deterministic random number generator (SplitMix64).
//!
//! The demo must give the same worlds, questions and replies for the same `--seed` on every
//! platform and in every release, so it carries its own generator instead of depending on a
//! crate whose streams may change between versions.

/// SplitMix64: fast, small state, good enough for synthetic data.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    #[cfg(test)]
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// An independent stream for item `index` of the run seeded with `seed` (e.g. one per
    /// dialogue), so that dialogue 7 is the same whether or not dialogues 1..6 were generated.
    pub(crate) fn derive(seed: u64, index: u64, purpose: u64) -> Self {
        let mut r = Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B);
        let a = r.next_u64();
        let mut r = Rng(a ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let b = r.next_u64();
        Rng(b ^ purpose.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0). The modulo bias is irrelevant for n this small.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p` (clamped to [0, 1]).
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::derive(3, 1, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::derive(3, 1, 0);
        let mut y = Rng::derive(3, 2, 0);
        let mut z = Rng::derive(3, 1, 1);
        let (x, y, z) = (x.next_u64(), y.next_u64(), z.next_u64());
        assert!(x != y && x != z && y != z);
    }

    #[test]
    fn below_and_unit_stay_in_range() {
        let mut r = Rng::new(42);
        for n in 1..50 {
            assert!(r.below(n) < n);
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(r.below(0), 0);
    }
}
