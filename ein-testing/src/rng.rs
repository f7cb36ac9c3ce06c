//! The one random number generator of the workspace's tests: SplitMix64, seeded explicitly, so
//! that every random test reproduces from the seed it reports.

/// SplitMix64's increment: the odd integer nearest 2^64 / φ.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// the state advances by 0x9E37_79B9_7F4A_7C15 (2^64 / φ) and each output is the state passed
/// through [`splitmix64_finalizer`]. Small and fast, with a period of 2^64 and good enough
/// statistics for generating test cases; not for cryptography.
///
/// Every draw is a pure function of the seed and the draws before it, on every platform, so a
/// reported seed replays its case exactly. The methods' arithmetic (`next_u64() % bound`) is
/// part of that contract: the tests' seeds mean what they meant before this crate existed.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose first output is `splitmix64_finalizer(seed + GOLDEN_GAMMA)`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The generator of case number `case` of a run seeded with `seed`: the two are mixed
    /// through two outputs of a generator, so the streams of neighbouring cases (or seeds) share
    /// nothing visible. Tests that number their cases use this, so that a failure replays alone
    /// from (seed, case).
    pub fn for_case(seed: u64, case: u64) -> Rng {
        let mut mixer = Rng::new(seed ^ case.wrapping_mul(GOLDEN_GAMMA));
        mixer.next_u64();
        Rng::new(mixer.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        splitmix64_finalizer(self.state)
    }

    /// Uniform in `0..bound`, up to the negligible bias of a modulus (`bound` > 0).
    pub fn below(&mut self, bound: usize) -> usize {
        assert!(bound > 0, "Rng::below(0): nothing to choose from");
        (self.next_u64() % bound as u64) as usize
    }

    /// Uniform in `low..=high` (`low <= high`, and at most 2^64 values), for any primitive
    /// integer type.
    pub fn between<T: Integer>(&mut self, low: T, high: T) -> T {
        let (low, high) = (low.to_i128(), high.to_i128());
        assert!(low <= high, "Rng::between({low}, {high}): an empty range");
        let span = (high - low) as u128 + 1;
        T::from_i128(low + (u128::from(self.next_u64()) % span) as i128)
    }

    /// True with probability `percent` / 100.
    pub fn percent(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// One of `items`, uniformly (`items` not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index into `weights`, with probability proportional to its weight.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut roll = self.below(total.max(1) as usize) as u32;
        for (position, weight) in weights.iter().enumerate() {
            if roll < *weight {
                return position;
            }
            roll -= weight;
        }
        weights.len() - 1
    }

    /// Uniform in `[0, 1)`, with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[low, high)` (up to rounding).
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }
}

/// SplitMix64's output function: a bijective mix of 64 bits in which every input bit affects
/// every output bit. [`Rng`] applies it to its state; counter-based data (element `i` of an
/// input) can apply it to a combination of a seed and `i` directly.
pub fn splitmix64_finalizer(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The primitive integer types [`Rng::between`] draws: every value fits an `i128`.
pub trait Integer: Copy {
    fn to_i128(self) -> i128;
    /// `value` is in range: it lies between two values of the type.
    fn from_i128(value: i128) -> Self;
}

macro_rules! integer {
    ($($type:ty),*) => {$(
        impl Integer for $type {
            fn to_i128(self) -> i128 {
                self as i128
            }
            fn from_i128(value: i128) -> Self {
                value as $type
            }
        }
    )*};
}

integer!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, i128);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_splitmix64() {
        // The reference outputs of SplitMix64 seeded with 0 (from the authors' C code).
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut rng = Rng::for_case(7, 3);
        for _ in 0..1000 {
            assert!(rng.below(5) < 5);
            assert!((-3..=4).contains(&rng.between(-3i64, 4)));
            assert!((10..=10).contains(&rng.between(10usize, 10)));
            assert_eq!(rng.between(i128::MIN, i128::MIN + 1) >> 1, i128::MIN >> 1);
            assert!((0.0..1.0).contains(&rng.unit()));
            assert!((-1.0..1.0).contains(&rng.uniform(-1.0, 1.0)));
            assert_ne!(rng.weighted(&[3, 0, 5]), 1);
        }
        assert!((0..1000).all(|_| !rng.percent(0)) && (0..1000).all(|_| rng.percent(100)));
    }

    #[test]
    fn cases_of_a_run_differ_and_replay() {
        let first: Vec<u64> = (0..4).map(|case| Rng::for_case(1, case).next_u64()).collect();
        let again: Vec<u64> = (0..4).map(|case| Rng::for_case(1, case).next_u64()).collect();
        assert_eq!(first, again);
        assert!(first.windows(2).all(|pair| pair[0] != pair[1]));
    }
}
