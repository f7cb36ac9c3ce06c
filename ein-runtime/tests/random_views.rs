//! Property test of the runtime's reads: random shapes (empty axes, axes of length 1, and
//! broadcast axes near `isize::MAX`; lengths near `usize::MAX` at the safe constructors), random
//! strides (negative, zero, stepped, and anything at all on axes of length 1 or in empty views)
//! and random views, checked against plain loops over the storage behind them: `View::to_array`,
//! `iter`, `as_slice` and `get`, `contract` (matmul, matrix–vector, vector–matrix, batched, dot,
//! outer and two-summed-label shapes, each operand's axes in any order, f64, f32 and i64) and
//! `contract_chain`. A call may instead panic with a message that starts with `ein:` exactly
//! where the reference says its result cannot exist (more elements than memory can hold); any
//! other panic, any other answer, a crash or an abort fails the test.
//!
//! `EIN_RUNTIME_CASES` sets the number of cases of each kind (default 6000: about two seconds in a
//! debug build); `EIN_RUNTIME_SEED` the seed of the first case. A failure names the seed of its
//! case, so `EIN_RUNTIME_SEED=<seed> EIN_RUNTIME_CASES=1` reruns it alone.

use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use ein_runtime::private::{contract, contract_chain, ChainSpec, ContractionSpec, Num};
use ein_runtime::{Array, View, ViewMut};
use ein_testing::{env_number, panic_message, Rng};

/// Cases of each kind when `EIN_RUNTIME_CASES` is not set.
const DEFAULT_CASES: u64 = 6000;

/// Views with at most this many elements are read in full; larger ones (which have a broadcast
/// axis of at least 2^60 elements) only at random indices.
const SMALL: usize = 1 << 12;

/// The long axes: all at least 2^60, so an array of one of them, of 4-byte elements or wider,
/// needs at least 2^62 bytes, which no machine can allocate (their refusal is certain).
const HUGE: [usize; 7] =
    [1 << 60, (1 << 60) + 1, 3 << 60, 1 << 61, 1 << 62, isize::MAX as usize - 1, isize::MAX as usize];

/// A stride of any size at all, extremes included.
fn any_stride(random: &mut Rng) -> isize {
    match random.below(4) {
        0 => *random.pick(&[isize::MAX, isize::MIN, isize::MIN + 1, -isize::MAX, 1 << 40]),
        1 => random.next_u64() as isize,
        _ => random.below(2001) as isize - 1000,
    }
}

fn cases() -> u64 {
    env_number("EIN_RUNTIME_CASES").unwrap_or(DEFAULT_CASES)
}

fn first_seed() -> u64 {
    env_number("EIN_RUNTIME_SEED").unwrap_or(0x5EED)
}

/// Runs `check(random, seed)` for every case: seeds `first_seed()`, the next, and so on; each
/// kind of test draws its own numbers from a seed. `check` says what the case came to ("values",
/// "empty", "refused", …); the tally is printed at the end (seen with `--nocapture`).
fn for_each_case(kind: u64, what: &str, mut check: impl FnMut(&mut Rng, u64) -> &'static str) {
    quiet_expected_panics();
    let first = first_seed();
    let started = std::time::Instant::now();
    let mut tally = std::collections::BTreeMap::new();
    for case in 0..cases() {
        let seed = first.wrapping_add(case);
        *tally.entry(check(&mut Rng::new(seed ^ (kind << 56)), seed)).or_insert(0u64) += 1;
    }
    eprintln!("{what}: {} cases in {:.2?}: {tally:?}", cases(), started.elapsed());
}

/// Expected panics (`ein: …`) are caught and checked, not printed; any other panic is printed
/// as usual.
fn quiet_expected_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_message(info.payload()).starts_with("ein:") {
                default(info);
            }
        }));
    });
}

/// Runs `call`; a panic is returned as its message, which must start with `ein:` (anything else
/// fails the test, naming `case`).
fn outcome<R>(case: &dyn Debug, call: impl FnOnce() -> R) -> Result<R, String> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(value) => Ok(value),
        Err(payload) => {
            let message = panic_message(&*payload);
            assert!(message.starts_with("ein:"), "{case:?}: a panic that is not ein's: {message}");
            Err(message)
        }
    }
}

/// The product of the non-zero `lengths`, exactly.
fn nonzero_product(lengths: &[usize]) -> u128 {
    lengths.iter().filter(|&&length| length != 0).fold(1u128, |product, &length| product.saturating_mul(length as u128))
}

/// Whether an array or view may have `shape`: ndarray's rule.
fn shape_is_allowed(shape: &[usize]) -> bool {
    nonzero_product(shape) <= isize::MAX as u128
}

fn element_count(shape: &[usize]) -> u128 {
    if shape.contains(&0) {
        0
    } else {
        nonzero_product(shape)
    }
}

/// A strided layout over a storage vector: where the element at `[0; N]` is and the strides.
#[derive(Clone, Debug)]
struct Layout {
    shape: Vec<usize>,
    strides: Vec<isize>,
    /// The position in the storage of the element at `[0; N]`.
    origin: usize,
    /// The storage's length.
    len: usize,
}

impl Layout {
    /// Rng strides for `shape` (which must be allowed): row-major a quarter of the time when
    /// no axis is long, so that contiguous views are common; otherwise per axis a stride in
    /// -7..=7 (0 broadcasts, negative reverses, beyond ±1 steps), any stride at all on an axis
    /// of length 1 now and then, 0 on a long axis. An empty view's strides are anything at all:
    /// it addresses nothing.
    fn random(random: &mut Rng, shape: &[usize]) -> Layout {
        let rank = shape.len();
        if shape.contains(&0) {
            let strides = (0..rank).map(|_| any_stride(random)).collect();
            return Layout { shape: shape.to_vec(), strides, origin: 0, len: 0 };
        }
        let long = shape.iter().any(|&length| length > SMALL);
        let strides: Vec<isize> = if !long && random.percent(25) {
            let mut strides = vec![0isize; rank];
            let mut step = 1isize;
            for axis in (0..rank).rev() {
                strides[axis] = step;
                step *= shape[axis] as isize;
            }
            strides
        } else {
            shape
                .iter()
                .map(|&length| match length {
                    1 if random.percent(30) => any_stride(random),
                    length if length > SMALL => 0,
                    _ => random.below(15) as isize - 7,
                })
                .collect()
        };
        let (mut low, mut high) = (0i128, 0i128);
        for (&length, &stride) in shape.iter().zip(&strides) {
            let last = (length as i128 - 1) * stride as i128;
            if last < 0 {
                low += last;
            } else {
                high += last;
            }
        }
        // Room before and after, so that a view need not start or end its storage.
        let (before, after) = (random.below(3) as i128, random.below(3) as i128);
        Layout {
            shape: shape.to_vec(),
            strides,
            origin: (before - low) as usize,
            len: (before + high - low + 1 + after) as usize,
        }
    }

    /// The storage position of the element at `index` (in range).
    fn position(&self, index: &[usize]) -> usize {
        let offset: i128 = index.iter().zip(&self.strides).map(|(&at, &stride)| at as i128 * stride as i128).sum();
        (self.origin as i128 + offset) as usize
    }

    fn count(&self) -> u128 {
        element_count(&self.shape)
    }

    /// A view of `storage` (of `self.len` elements) with this layout.
    fn view<'a, T, const N: usize>(&self, storage: &'a [T]) -> View<'a, T, N> {
        assert_eq!(storage.len(), self.len);
        let shape: [usize; N] = self.shape.clone().try_into().expect("the layout's rank");
        let strides: [isize; N] = self.strides.clone().try_into().expect("the layout's rank");
        // SAFETY: for a view with elements, `origin` is inside the storage and every in-range
        // index addresses a position in `low..=high` from it, all inside the storage (see
        // `random`); the storage is borrowed for 'a and not mutated. An empty view addresses
        // nothing, and a dangling but aligned pointer (an empty Vec's) is allowed. The shape is
        // allowed (the callers' promise).
        unsafe { View::from_raw_parts(storage.as_ptr().wrapping_add(self.origin), shape, strides) }
    }
}

/// Every index of `shape` (which has at most `SMALL` elements) in row-major order.
fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let count = element_count(shape) as usize;
    let mut indices = Vec::with_capacity(count);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..count {
        indices.push(index.clone());
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    indices
}

/// A random allowed shape of `rank` for a view test: lengths 0 (rarely), 1, 2..=5 or long.
fn random_view_shape(random: &mut Rng, rank: usize) -> Vec<usize> {
    let mut shape: Vec<usize> = (0..rank)
        .map(|_| match random.below(20) {
            0 | 1 => 0,
            2..=5 => 1,
            6..=16 => 2 + random.below(4),
            _ => *random.pick(&HUGE),
        })
        .collect();
    while !shape_is_allowed(&shape) {
        let axis = random.below(rank);
        if shape[axis] > SMALL {
            shape[axis] = 1 + random.below(5);
        }
    }
    shape
}

/// Reads a random view of rank `N` every way there is, against the storage.
fn check_random_view<const N: usize>(random: &mut Rng, seed: u64) -> &'static str {
    let shape = random_view_shape(random, N);
    let layout = Layout::random(random, &shape);
    let storage: Vec<i64> = (0..layout.len as i64).map(|position| position * 7 - 3).collect();
    let view: View<'_, i64, N> = layout.view(&storage);
    let case = (seed, &layout);
    assert_eq!(&view.shape()[..], &shape[..], "{case:?}");
    for (axis, &length) in shape.iter().enumerate() {
        assert_eq!(view.size(axis), length as i64, "{case:?}: size of axis {axis}");
    }
    let count = layout.count();
    assert_eq!(view.element_count() as u128, count, "{case:?}");
    // `get`, at random indices in range and just out of it.
    for _ in 0..8 {
        let mut index = [0usize; N];
        let mut inside = true;
        for axis in 0..N {
            index[axis] = match random.below(8) {
                0 => shape[axis],
                1 => shape[axis].saturating_add(random.below(3)),
                2 => usize::MAX,
                _ if shape[axis] == 0 => 0,
                _ => random.below(shape[axis]),
            };
            inside &= index[axis] < shape[axis];
        }
        let expected = inside.then(|| storage[layout.position(&index)]);
        assert_eq!(view.get(index), expected, "{case:?}: get {index:?}");
    }
    if count <= SMALL as u128 {
        let positions: Vec<usize> = all_indices(&shape).iter().map(|index| layout.position(index)).collect();
        let expected: Vec<i64> = positions.iter().map(|&position| storage[position]).collect();
        assert_eq!(view.iter().collect::<Vec<_>>(), expected, "{case:?}: iter");
        assert_eq!(view.iter().size_hint(), (expected.len(), Some(expected.len())), "{case:?}: iter's length");
        let array = outcome(&case, || view.to_array()).expect("a small view can be copied");
        assert_eq!((&array.shape()[..], array.as_slice()), (&shape[..], &expected[..]), "{case:?}: to_array");
        // Contiguous in row-major order: consecutive storage positions.
        let contiguous = positions.windows(2).all(|pair| pair[1] == pair[0] + 1);
        match view.as_slice() {
            Some(elements) => {
                assert!(contiguous, "{case:?}: as_slice of a view that is not contiguous");
                assert_eq!(elements, &expected[..], "{case:?}: as_slice");
            }
            None => assert!(!contiguous, "{case:?}: no slice of a contiguous view"),
        }
        if let Some(unit) = view.unit_inner() {
            assert_eq!(unit.iter().collect::<Vec<_>>(), expected, "{case:?}: unit_inner");
        }
        match (count, contiguous) {
            (0, _) => "empty",
            (_, true) => "contiguous",
            _ => "strided",
        }
    } else {
        // A long broadcast axis: the first elements, then a copy that cannot be had.
        let first: Vec<i64> = view.iter().take(20).collect();
        let expected: Vec<i64> =
            all_indices_prefix(&shape, 20).iter().map(|index| storage[layout.position(index)]).collect();
        assert_eq!(first, expected, "{case:?}: the first elements");
        assert_eq!(view.iter().size_hint().0 as u128, count, "{case:?}");
        assert!(view.as_slice().is_none(), "{case:?}: a slice of a broadcast view");
        let refused = outcome(&case, || view.to_array()).expect_err("a copy larger than memory");
        assert!(refused.starts_with("ein: cannot allocate"), "{case:?}: {refused}");
        "long broadcast, copy refused"
    }
}

/// The first `limit` indices of `shape` in row-major order (any number of elements).
fn all_indices_prefix(shape: &[usize], limit: usize) -> Vec<Vec<usize>> {
    let mut indices = Vec::new();
    if shape.contains(&0) {
        return indices;
    }
    let mut index = vec![0usize; shape.len()];
    for _ in 0..limit {
        indices.push(index.clone());
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return indices;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    indices
}

#[test]
fn random_views_read_like_their_storage() {
    for_each_case(1, "views", |random, seed| match random.below(5) {
        0 => check_random_view::<0>(random, seed),
        1 => check_random_view::<1>(random, seed),
        2 => check_random_view::<2>(random, seed),
        3 => check_random_view::<3>(random, seed),
        _ => check_random_view::<4>(random, seed),
    });
}

/// Checks one random shape of rank `N` at the safe constructors: accepted exactly when the rule
/// allows it (and then every size is exact), refused with an `ein:` panic otherwise.
fn check_safe_constructors<const N: usize>(random: &mut Rng, seed: u64) -> &'static str {
    let lengths = [0, 1, 2, 3, 1 << 31, 1 << 32, 1 << 62, isize::MAX as usize, 1 << 63, usize::MAX - 1, usize::MAX];
    let mut shape = [0usize; N];
    for length in &mut shape {
        *length = *random.pick(&lengths);
    }
    // Elements for the shape if it has only a few, else none (and then it must be empty).
    let count = element_count(&shape);
    if count > 64 && N > 0 {
        shape[random.below(N)] = 0;
    }
    let count = element_count(&shape) as usize;
    let allowed = shape_is_allowed(&shape);
    let case = (seed, shape);
    let data: Vec<i32> = (0..count as i32).collect();
    let view = outcome(&case, || View::from_slice(&data, shape));
    let mut mutable_data = data.clone();
    let mutable = outcome(&case, || ViewMut::from_slice(&mut mutable_data, shape).shape());
    let array = outcome(&case, || Array::from_vec(shape, data.clone()));
    assert_eq!((view.is_ok(), mutable.is_ok(), array.is_ok()), (allowed, allowed, allowed), "{case:?}");
    match (view, array) {
        (Ok(view), Ok(array)) => {
            for (axis, &length) in shape.iter().enumerate() {
                assert_eq!(view.size(axis), length as i64, "{case:?}");
                assert!(view.size(axis) >= 0, "{case:?}");
            }
            assert_eq!(view.iter().collect::<Vec<_>>(), data, "{case:?}");
            assert_eq!(array.view().to_array(), array, "{case:?}");
            "accepted"
        }
        _ => "refused",
    }
}

#[test]
fn the_safe_constructors_accept_exactly_the_shapes_the_rule_allows() {
    for_each_case(2, "safe constructors", |random, seed| match random.below(4) {
        0 => check_safe_constructors::<1>(random, seed),
        1 => check_safe_constructors::<2>(random, seed),
        2 => check_safe_constructors::<3>(random, seed),
        _ => check_safe_constructors::<4>(random, seed),
    });
}

/// An element type for the contraction tests: small integers are exact in all three.
trait Element: Num + Debug + PartialEq {}
impl Element for f64 {}
impl Element for f32 {}
impl Element for i64 {}

/// One operand: its storage, layout and the label of each axis.
#[derive(Debug)]
struct Operand<T> {
    storage: Vec<T>,
    layout: Layout,
    labels: Vec<usize>,
}

impl<T: Element> Operand<T> {
    /// An operand with the given labels in a random axis order, over random small integers.
    fn random(random: &mut Rng, labels: &[usize], sizes: &[usize]) -> Operand<T> {
        let mut labels = labels.to_vec();
        for position in (1..labels.len()).rev() {
            labels.swap(position, random.below(position + 1));
        }
        let shape: Vec<usize> = labels.iter().map(|&label| sizes[label]).collect();
        let layout = Layout::random(random, &shape);
        let storage = (0..layout.len).map(|_| T::from_i64(random.below(9) as i64 - 4)).collect();
        Operand { storage, layout, labels }
    }

    /// The element at the index that gives each label `index[label]`.
    fn at(&self, index: &[usize]) -> T {
        let axes: Vec<usize> = self.labels.iter().map(|&label| index[label]).collect();
        self.storage[self.layout.position(&axes)]
    }

    fn view<const N: usize>(&self) -> View<'_, T, N> {
        self.layout.view(&self.storage)
    }

    /// The labels as the `&'static` slice a spec holds (leaked: a few bytes per case).
    fn static_labels(&self) -> &'static [usize] {
        Box::leak(self.labels.clone().into_boxed_slice())
    }
}

/// What a contraction must give: its elements (row-major), or an `ein:` refusal because the
/// result cannot exist in memory.
#[derive(Debug, PartialEq)]
enum Expected<T> {
    Elements(Vec<T>),
    Refused,
}

/// `scale * Σ Π operands` by plain loops over every label; `sizes` lists the output labels first.
fn reference<T: Element>(outputs: usize, sizes: &[usize], scale: Option<T>, operands: &[&Operand<T>]) -> Expected<T> {
    let output = &sizes[..outputs];
    let element_bytes = std::mem::size_of::<T>() as u128;
    // Refused: more elements than an array may have, or than any memory holds (all long
    // lengths are at least 2^60, so "more than 2^40 elements" means at least 2^60).
    if !shape_is_allowed(output)
        || element_count(output) * element_bytes > isize::MAX as u128
        || element_count(output) > 1 << 40
    {
        return Expected::Refused;
    }
    let mut elements = Vec::new();
    for output_index in all_indices(output) {
        let mut sum = T::ZERO;
        for summed_index in all_indices(&sizes[outputs..]) {
            let index: Vec<usize> = output_index.iter().chain(&summed_index).copied().collect();
            let product = operands.iter().fold(T::ONE, |product, operand| product.mul(operand.at(&index)));
            sum = sum.add(product);
        }
        elements.push(match scale {
            Some(scale) => scale.mul(sum),
            None => sum,
        });
    }
    Expected::Elements(elements)
}

/// Rng label sizes for a contraction whose labels `0..outputs` are output labels, such that
/// every operand (its labels in `operands`) is an allowed view, and the work is small unless the
/// output is empty or certainly refused.
fn random_sizes(random: &mut Rng, labels: usize, outputs: usize, operands: &[&[usize]]) -> Vec<usize> {
    loop {
        let sizes: Vec<usize> = (0..labels)
            .map(|_| match random.below(40) {
                0..=2 => 0,
                3..=8 => 1,
                9..=30 => 2 + random.below(5),
                31..=34 => 7 + random.below(34),
                _ => *random.pick(&HUGE),
            })
            .collect();
        let operand_shapes_allowed = operands.iter().all(|labels| {
            let shape: Vec<usize> = labels.iter().map(|&label| sizes[label]).collect();
            shape_is_allowed(&shape)
        });
        let output_count = element_count(&sizes[..outputs]);
        let work = output_count.saturating_mul(element_count(&sizes[outputs..]).max(1));
        let refused = !shape_is_allowed(&sizes[..outputs]) || output_count > 1 << 40;
        if operand_shapes_allowed && (output_count == 0 || refused || work <= 20_000) {
            return sizes;
        }
    }
}

/// Checks `contract` on random operands of ranks `A` and `B` with these labels (each operand's
/// axes then shuffled), against the loops.
fn check_contraction<T: Element, const A: usize, const B: usize, const N: usize>(
    random: &mut Rng,
    seed: u64,
    left_labels: [usize; A],
    right_labels: [usize; B],
    labels: usize,
) -> &'static str {
    let sizes = random_sizes(random, labels, N, &[&left_labels, &right_labels]);
    let left = Operand::<T>::random(random, &left_labels, &sizes);
    let right = Operand::<T>::random(random, &right_labels, &sizes);
    let scale = random.percent(50).then(|| T::from_i64(random.below(7) as i64 - 3));
    let spec = ContractionSpec { outputs: N, left: left.static_labels(), right: right.static_labels() };
    let output: [usize; N] = sizes[..N].try_into().expect("N output labels");
    let case =
        (seed, std::any::type_name::<T>(), &sizes, scale, &left.layout, &left.labels, &right.layout, &right.labels);
    let expected = reference(N, &sizes, scale, &[&left, &right]);
    let result = outcome(&case, || contract(&spec, output, &sizes[N..], scale, left.view::<A>(), right.view::<B>()));
    judge(&case, result, expected, output, &sizes[N..], "contraction")
}

/// Checks a case's result against the reference: the same elements, or a refusal with the
/// message for a `what` whose result cannot be held. Returns what the case came to.
fn judge<T: Element, const N: usize>(
    case: &dyn Debug,
    result: Result<Array<T, N>, String>,
    expected: Expected<T>,
    output: [usize; N],
    summed: &[usize],
    what: &str,
) -> &'static str {
    match (result, expected) {
        (Ok(array), Expected::Elements(elements)) => {
            assert_eq!(array.shape(), output, "{case:?}");
            assert_eq!(array.as_slice(), &elements[..], "{case:?}");
            outcome_kind(&elements, summed)
        }
        (Err(message), Expected::Refused) => {
            let known = message.starts_with(&format!("ein: the result of this {what} would have"))
                || message.starts_with("ein: cannot allocate");
            assert!(known, "{case:?}: {message}");
            "refused"
        }
        (result, expected) => {
            panic!("{case:?}: got {:?}, expected {expected:?}", result.map(|array| array.shape()))
        }
    }
}

/// What a case that gave elements came to.
fn outcome_kind<T>(elements: &[T], summed: &[usize]) -> &'static str {
    if elements.is_empty() {
        "empty"
    } else if summed.contains(&0) {
        "empty sum"
    } else if elements.len() * summed.iter().product::<usize>() >= 1000 {
        "values, 1000 or more multiply-adds"
    } else {
        "values"
    }
}

/// One random contraction of a random kind and element type.
fn check_random_contraction<T: Element>(random: &mut Rng, seed: u64) -> &'static str {
    match random.below(7) {
        // out[i, j] = Σ_k a[i, k] b[k, j]
        0 => check_contraction::<T, 2, 2, 2>(random, seed, [0, 2], [2, 1], 3),
        // out[i] = Σ_k a[i, k] x[k]
        1 => check_contraction::<T, 2, 1, 1>(random, seed, [0, 1], [1], 2),
        // out[j] = Σ_k x[k] b[k, j]
        2 => check_contraction::<T, 1, 2, 1>(random, seed, [1], [1, 0], 2),
        // out[p, i, j] = Σ_k a[p, i, k] b[p, k, j]
        3 => check_contraction::<T, 3, 3, 3>(random, seed, [0, 1, 3], [0, 3, 2], 4),
        // out = Σ_k x[k] y[k]
        4 => check_contraction::<T, 1, 1, 0>(random, seed, [0], [0], 1),
        // out[i, j] = x[i] y[j]
        5 => check_contraction::<T, 1, 1, 2>(random, seed, [0], [1], 2),
        // out[i, j] = Σ_k,l a[i, k, l] b[k, l, j]
        _ => check_contraction::<T, 3, 3, 2>(random, seed, [0, 2, 3], [2, 3, 1], 4),
    }
}

#[test]
fn random_contractions_match_the_loops_or_refuse_results_larger_than_memory() {
    for_each_case(3, "contractions", |random, seed| match random.below(3) {
        0 => check_random_contraction::<f64>(random, seed),
        1 => check_random_contraction::<f32>(random, seed),
        _ => check_random_contraction::<i64>(random, seed),
    });
}

/// Checks `contract_chain` on random operands with these labels against the loops.
fn check_chain<T: Element, const A: usize, const B: usize, const C: usize, const N: usize>(
    random: &mut Rng,
    seed: u64,
    operand_labels: ([usize; A], [usize; B], [usize; C]),
    labels: usize,
) -> &'static str {
    let (a_labels, b_labels, c_labels) = operand_labels;
    let sizes = random_sizes(random, labels, N, &[&a_labels, &b_labels, &c_labels]);
    // A long label outside the output would make an intermediate, or the sums, as long as it
    // (never ending, or refused although the result could exist): only with an empty output,
    // which is returned at once, or one that is refused at once.
    let output_count = element_count(&sizes[..N]);
    let output_refused = !shape_is_allowed(&sizes[..N]) || output_count > 1 << 40;
    if sizes[N..].iter().any(|&size| size > SMALL) && output_count != 0 && !output_refused {
        return "skipped";
    }
    let a = Operand::<T>::random(random, &a_labels, &sizes);
    let b = Operand::<T>::random(random, &b_labels, &sizes);
    let c = Operand::<T>::random(random, &c_labels, &sizes);
    let scale = random.percent(50).then(|| T::from_i64(random.below(7) as i64 - 3));
    let spec = ChainSpec { outputs: N, operands: [a.static_labels(), b.static_labels(), c.static_labels()] };
    let output: [usize; N] = sizes[..N].try_into().expect("N output labels");
    let case = (
        seed,
        std::any::type_name::<T>(),
        &sizes,
        scale,
        [&a.labels, &b.labels, &c.labels],
        [&a.layout, &b.layout, &c.layout],
    );
    let expected = reference(N, &sizes, scale, &[&a, &b, &c]);
    let result = outcome(&case, || {
        contract_chain(&spec, output, &sizes[N..], scale, a.view::<A>(), b.view::<B>(), c.view::<C>())
    });
    judge(&case, result, expected, output, &sizes[N..], "chain of contractions")
}

fn check_random_chain<T: Element>(random: &mut Rng, seed: u64) -> &'static str {
    match random.below(4) {
        // out[i, l] = Σ_j,k a[i, j] b[j, k] c[k, l]
        0 => check_chain::<T, 2, 2, 2, 2>(random, seed, ([0, 2], [2, 3], [3, 1]), 4),
        // out[i] = Σ_k a[i, k] b[k] c[k]
        1 => check_chain::<T, 2, 1, 1, 1>(random, seed, ([0, 1], [1], [1]), 2),
        // out = Σ_i,j,k a[i, j] b[j, k] c[k, i]
        2 => check_chain::<T, 2, 2, 2, 0>(random, seed, ([0, 1], [1, 2], [2, 0]), 3),
        // out[p, i, l] = Σ_j,k a[p, i, j] b[p, j, k] c[k, l]
        _ => check_chain::<T, 3, 3, 2, 3>(random, seed, ([0, 1, 3], [0, 3, 4], [4, 2]), 5),
    }
}

#[test]
fn random_chains_match_the_loops_or_refuse_results_larger_than_memory() {
    for_each_case(4, "chains", |random, seed| match random.below(3) {
        0 => check_random_chain::<f64>(random, seed),
        1 => check_random_chain::<f32>(random, seed),
        _ => check_random_chain::<i64>(random, seed),
    });
}
