//! Run-time checks on sizes and indices, and the panics that report their failures.
//!
//! Every user-facing message starts with `ein: ` and names the user's source location (a
//! [`Site`]). The checks are `#[inline]` with the failing branch moved into a `#[cold]`,
//! never-inlined function, so the code generated around them stays small and fast.

use std::fmt;

/// A location in the user's source, built by generated code from `file!()`, `line!()` and
/// `column!()` spanned at the user's tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// The source file, as `file!()` gives it.
    pub file: &'static str,
    /// The 1-based line.
    pub line: u32,
    /// The 1-based column.
    pub column: u32,
}

impl fmt::Display for Site {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A captured Rust integer of any width accepted as an ein size, count or index (ein sizes are
/// `i64`). Values beyond `i64` saturate, as the item form's unsigned parameters do: above
/// `i64::MAX` an index is past every axis's end and a size is refused by [`check_size`].
pub trait IntoSize {
    /// Converts to `i64`, saturating at `i64::MIN` and `i64::MAX`.
    fn into_size(self) -> i64;
}

macro_rules! impl_into_size {
    ($($integer:ty),+ $(,)?) => {$(
        impl IntoSize for $integer {
            #[inline]
            #[allow(unused_comparisons)]
            fn into_size(self) -> i64 {
                match i64::try_from(self) {
                    Ok(size) => size,
                    Err(_) if self < 0 => i64::MIN,
                    Err(_) => i64::MAX,
                }
            }
        }
    )+};
}

impl_into_size!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

/// Validates a size or fold count and returns it as `usize`; panics if it is negative.
///
/// `what` names the thing sized, e.g. "index `i`". A bare identifier such as `i` is taken to
/// be an index name and printed as "index `i`", so both spellings give the same message:
/// "ein: size of index `i` is -3 (at src/x.rs:4:9); sizes must be >= 0".
#[inline]
pub fn check_size(size: i64, what: &str, site: &Site) -> usize {
    match usize::try_from(size) {
        Ok(count) if size != i64::MAX => count,
        _ => invalid_size(size, what, site),
    }
}

/// The number of elements of a new array of `shape`, checked before anything is allocated:
/// panics unless the product of its non-zero lengths is at most `isize::MAX` (ndarray's rule,
/// which every [`crate::View`] obeys), so no size product computed from `shape` can wrap.
#[inline]
pub fn shape_len<const N: usize>(shape: [usize; N], site: &Site) -> usize {
    match crate::view::element_count(&shape) {
        Some(count) => count,
        None => too_many_elements(&shape, site),
    }
}

#[cold]
#[inline(never)]
fn too_many_elements(shape: &[usize], site: &Site) -> ! {
    panic!("ein: an array of shape {shape:?} (at {site}) would have more elements than memory can address")
}

/// The interior of a run of `count` loop positions whose index starts at `offset`: positions
/// `lo..hi` (with `lo <= hi <= count`) such that, for every `(len, shift)`,
/// `0 <= offset + position + shift < len` — where reads of `array[index + shift]` along an axis
/// of length `len` need no clamping. Positions before `lo` and from `hi` on are the edges.
#[inline]
pub fn interior(offset: usize, count: usize, shifts: &[(usize, i64)]) -> (usize, usize) {
    let start = offset as i128;
    let end = start + count as i128;
    let (mut low, mut high) = (start, end);
    for &(len, shift) in shifts {
        low = low.max(-i128::from(shift));
        high = high.min(len as i128 - i128::from(shift));
    }
    let low = low.clamp(start, end);
    let high = high.clamp(low, end);
    // Both lie in start..=end, so the differences fit in usize.
    ((low - start) as usize, (high - start) as usize)
}

/// The shift `literal + Σ added - Σ subtracted` of a read computed before its loop, for
/// [`interior`]: summed exactly (in `i128`, whatever the order of the terms) and then
/// saturated to `i64`, where a shift beyond `i64` leaves no interior (as its true value would).
#[inline]
pub fn exact_shift(literal: i64, added: &[i64], subtracted: &[i64]) -> i64 {
    let sum = added.iter().fold(i128::from(literal), |sum, &term| sum + i128::from(term));
    let sum = subtracted.iter().fold(sum, |sum, &term| sum - i128::from(term));
    sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// The modulus of a remainder `(index + c) % modulus` that wraps at most once in a loop's
/// interior (`c` is 0, 1, `modulus - 1` or `modulus`), as the length [`interior`] keeps
/// `index + shift` below: none (0) unless `0 < modulus <= 2^62`, so that `index + c`, at
/// most `2 * modulus - 1` there, cannot overflow an `i64` even where the loop's range is not
/// the modulus.
#[inline]
pub fn wrap_modulus(modulus: i64) -> usize {
    if (1..=1 << 62).contains(&modulus) {
        modulus as usize
    } else {
        0
    }
}

/// A size as a number of loop iterations for work estimates: negative sizes (which fail
/// later, where the semantics says) count as none.
#[inline]
pub fn size_or_zero(size: i64) -> usize {
    usize::try_from(size).unwrap_or(0)
}

#[cold]
#[inline(never)]
fn invalid_size(size: i64, what: &str, site: &Site) -> ! {
    let what = describe_sized(what);
    if size < 0 {
        panic!("ein: size of {what} is {size} (at {site}); sizes must be >= 0")
    }
    if size == i64::MAX {
        panic!(
            "ein: size of {what} is i64::MAX or more (at {site}); sizes must be below i64::MAX \
             (unsigned values above it count as it)"
        )
    }
    // Only reachable where usize is narrower than i64.
    panic!("ein: size of {what} is {size} (at {site}), which does not fit in usize on this target")
}

/// Wraps a bare identifier as "index `name`"; leaves a phrase as it is.
fn describe_sized(what: &str) -> String {
    let is_identifier =
        !what.is_empty() && what.chars().all(|character| character.is_alphanumeric() || character == '_');
    if is_identifier {
        format!("index `{what}`")
    } else {
        what.to_owned()
    }
}

/// Panics unless two sizes that must agree (both giving the size of `index`) are equal:
/// "ein: size mismatch for index `k` (at file:line:col): axis 1 of `a` has 3 elements but
/// axis 0 of `b` has 4". With no index (two arrays that must have one shape: the sides of an
/// `if`, a fold's state and its next value, a tangent and its primal): "ein: shape mismatch
/// (at …): …".
#[inline]
pub fn check_same_size(left: i64, right: i64, index: &str, left_what: &str, right_what: &str, site: &Site) {
    if left != right {
        size_mismatch(left, right, index, left_what, right_what, site);
    }
}

#[cold]
#[inline(never)]
fn size_mismatch(left: i64, right: i64, index: &str, left_what: &str, right_what: &str, site: &Site) -> ! {
    let noun = if left == 1 { "element" } else { "elements" };
    if index.is_empty() {
        panic!("ein: shape mismatch (at {site}): {left_what} has {left} {noun} but {right_what} has {right}")
    }
    panic!(
        "ein: size mismatch for index `{index}` (at {site}): {left_what} has {left} {noun} but {right_what} has {right}"
    )
}

/// A captured Rust integer of the expression form as the integer type the program gives it (a
/// `usize` local `n` in `x[n - 1 - i]` is an `i64`, like the index beside it): any integer
/// width converts, and a value that does not fit panics naming the local:
/// "ein: captured `n` = 18446744073709551615 does not fit in i64".
#[inline]
#[track_caller]
pub fn captured_int<T, S>(value: S, name: &str) -> T
where
    S: TryInto<T> + Copy + std::fmt::Display,
{
    match value.try_into() {
        Ok(converted) => converted,
        Err(_) => captured_int_out_of_range(&value.to_string(), name, std::any::type_name::<T>()),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn captured_int_out_of_range(value: &str, name: &str, ty: &str) -> ! {
    panic!("ein: captured `{name}` = {value} does not fit in {ty}")
}

/// Clamps `index` into `0..len` (ein's rule for out-of-range reads such as `a[i + 1]` at the
/// edge); panics if `len == 0`, since there is nothing to clamp to:
/// "ein: read from empty axis 0 of `a` (at file:line:col)".
///
/// Branch-free apart from the empty check, which LLVM can hoist out of a loop, so loops that
/// clamp still vectorise.
#[inline]
pub fn clamp_index(index: i64, len: usize, array: &str, axis: usize, site: &Site) -> usize {
    if len == 0 {
        read_from_empty_axis(array, axis, site);
    }
    // Lengths of real arrays fit in isize; saturate anyway so a clamp can never go negative.
    let last = i64::try_from(len - 1).unwrap_or(i64::MAX);
    index.max(0).min(last) as usize
}

#[cold]
#[inline(never)]
fn read_from_empty_axis(array: &str, axis: usize, site: &Site) -> ! {
    // Generated code passes an empty name for arrays the user never named.
    if array.is_empty() {
        panic!("ein: read from empty axis {axis} of a computed array (at {site})")
    }
    panic!("ein: read from empty axis {axis} of `{array}` (at {site})")
}

/// Panics for `argmax`/`argmin` over an empty range, which has no answer:
/// "ein: argmax over an empty range of index `k` (at file:line:col)".
#[cold]
#[inline(never)]
pub fn empty_arg_reduction(op: &str, index: &str, site: &Site) -> ! {
    panic!("ein: {op} over an empty range of index `{index}` (at {site})")
}

/// Panics for an integer division or remainder by zero (`/`, `%`, `rem_euclid`,
/// `div_euclid`): "ein: integer division by zero (at file:line:col)".
#[cold]
#[inline(never)]
pub(crate) fn integer_division_by_zero(site: &Site) -> ! {
    panic!("ein: integer division by zero (at {site})")
}

/// Panics for `clamp` bounds out of order (or a NaN bound), where std's `clamp` panics:
/// "ein: `clamp` (at file:line:col) needs min <= max (and no NaN bound), but min is 3 and max is 1".
#[cold]
#[inline(never)]
pub(crate) fn clamp_bounds(low: &dyn fmt::Debug, high: &dyn fmt::Debug, site: &Site) -> ! {
    panic!("ein: `clamp` (at {site}) needs min <= max (and no NaN bound), but min is {low:?} and max is {high:?}")
}

/// Panics for a broken invariant of generated code: a bug in ein, not in the user's program.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn internal_error(message: fmt::Arguments<'_>) -> ! {
    panic!("ein: internal error: {message} (this is a bug in ein; please report it)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ein_testing::expect_panic;

    const SITE: Site = Site { file: "src/x.rs", line: 4, column: 9 };

    #[test]
    fn captured_integers_convert_to_the_programs_type_or_panic_naming_the_local() {
        assert_eq!(captured_int::<i64, usize>(7, "n"), 7i64);
        assert_eq!(captured_int::<u8, i64>(255, "k"), 255u8);
        assert_eq!(captured_int::<i32, i32>(-3, "m"), -3);
        let message = expect_panic(|| captured_int::<i64, usize>(usize::MAX, "n"));
        assert_eq!(message, format!("ein: captured `n` = {} does not fit in i64", usize::MAX));
        let message = expect_panic(|| captured_int::<usize, i64>(-1, "len"));
        assert_eq!(message, "ein: captured `len` = -1 does not fit in usize");
    }

    #[test]
    fn site_displays_as_file_line_column() {
        assert_eq!(SITE.to_string(), "src/x.rs:4:9");
    }

    #[test]
    fn check_size_accepts_non_negative_sizes() {
        assert_eq!(check_size(0, "index `i`", &SITE), 0);
        assert_eq!(check_size(17, "index `i`", &SITE), 17);
    }

    #[test]
    fn check_size_reports_negative_sizes() {
        let expected = "ein: size of index `i` is -3 (at src/x.rs:4:9); sizes must be >= 0";
        assert_eq!(expect_panic(|| check_size(-3, "index `i`", &SITE)), expected);
        assert_eq!(expect_panic(|| check_size(-3, "i", &SITE)), expected);
        assert_eq!(
            expect_panic(|| check_size(-1, "the fold count", &SITE)),
            "ein: size of the fold count is -1 (at src/x.rs:4:9); sizes must be >= 0"
        );
    }

    #[test]
    fn check_same_size_passes_equal_sizes_and_reports_mismatches() {
        check_same_size(3, 3, "k", "axis 1 of `a`", "axis 0 of `b`", &SITE);
        assert_eq!(
            expect_panic(|| check_same_size(3, 4, "k", "axis 1 of `a`", "axis 0 of `b`", &SITE)),
            "ein: size mismatch for index `k` (at src/x.rs:4:9): axis 1 of `a` has 3 elements but axis 0 of `b` has 4"
        );
        assert_eq!(
            expect_panic(|| check_same_size(1, 0, "k", "axis 0 of `a`", "axis 0 of `b`", &SITE)),
            "ein: size mismatch for index `k` (at src/x.rs:4:9): axis 0 of `a` has 1 element but axis 0 of `b` has 0"
        );
        // Two arrays of one shape (no index).
        assert_eq!(
            expect_panic(|| check_same_size(2, 3, "", "axis 0 of `d_x`", "axis 0 of `x`", &SITE)),
            "ein: shape mismatch (at src/x.rs:4:9): axis 0 of `d_x` has 2 elements but axis 0 of `x` has 3"
        );
    }

    #[test]
    fn clamp_index_keeps_in_range_indices() {
        for index in 0..5 {
            assert_eq!(clamp_index(index, 5, "a", 0, &SITE), index as usize);
        }
    }

    #[test]
    fn clamp_index_clamps_out_of_range_indices() {
        assert_eq!(clamp_index(-1, 5, "a", 0, &SITE), 0);
        assert_eq!(clamp_index(i64::MIN, 5, "a", 0, &SITE), 0);
        assert_eq!(clamp_index(5, 5, "a", 0, &SITE), 4);
        assert_eq!(clamp_index(i64::MAX, 5, "a", 0, &SITE), 4);
        assert_eq!(clamp_index(-7, 1, "a", 0, &SITE), 0);
        assert_eq!(clamp_index(7, 1, "a", 0, &SITE), 0);
        assert_eq!(clamp_index(i64::MAX, usize::MAX, "a", 0, &SITE), i64::MAX as usize);
    }

    #[test]
    fn clamp_index_reports_reads_from_empty_axes() {
        assert_eq!(
            expect_panic(|| clamp_index(0, 0, "a", 0, &SITE)),
            "ein: read from empty axis 0 of `a` (at src/x.rs:4:9)"
        );
        assert_eq!(
            expect_panic(|| clamp_index(-2, 0, "weights", 2, &SITE)),
            "ein: read from empty axis 2 of `weights` (at src/x.rs:4:9)"
        );
    }

    #[test]
    fn empty_arg_reduction_message() {
        assert_eq!(
            expect_panic(|| empty_arg_reduction("argmax", "k", &SITE)),
            "ein: argmax over an empty range of index `k` (at src/x.rs:4:9)"
        );
    }

    #[test]
    fn into_size_accepts_every_integer_type() {
        assert_eq!(7i8.into_size(), 7);
        assert_eq!((-7i16).into_size(), -7);
        assert_eq!(7i32.into_size(), 7);
        assert_eq!(i64::MIN.into_size(), i64::MIN);
        assert_eq!((-7i128).into_size(), -7);
        assert_eq!((-7isize).into_size(), -7);
        assert_eq!(u8::MAX.into_size(), 255);
        assert_eq!(7u16.into_size(), 7);
        assert_eq!(u32::MAX.into_size(), u32::MAX as i64);
        assert_eq!((i64::MAX as u64).into_size(), i64::MAX);
        assert_eq!(7u128.into_size(), 7);
        assert_eq!(7usize.into_size(), 7);
    }

    #[test]
    fn into_size_saturates_values_that_do_not_fit() {
        assert_eq!(u64::MAX.into_size(), i64::MAX);
        assert_eq!((1u64 << 63).into_size(), i64::MAX);
        assert_eq!(usize::MAX.into_size(), i64::MAX);
        assert_eq!(u128::MAX.into_size(), i64::MAX);
        assert_eq!(i128::MAX.into_size(), i64::MAX);
        assert_eq!(i128::MIN.into_size(), i64::MIN);
    }

    #[test]
    fn check_size_refuses_saturated_sizes() {
        assert_eq!(check_size(i64::MAX - 1, "i", &SITE) as i64, i64::MAX - 1);
        assert_eq!(
            expect_panic(|| check_size(u64::MAX.into_size(), "i", &SITE)),
            "ein: size of index `i` is i64::MAX or more (at src/x.rs:4:9); sizes must be below i64::MAX \
             (unsigned values above it count as it)"
        );
    }

    #[test]
    fn internal_errors_say_so() {
        let message = expect_panic(|| internal_error(format_args!("row 3 is short")));
        assert_eq!(message, "ein: internal error: row 3 is short (this is a bug in ein; please report it)");
    }

    #[test]
    fn exact_shifts_do_not_saturate_on_the_way() {
        // `5 + MAX - MAX` is 5 whichever way it is grouped; saturating sums gave 0.
        assert_eq!(exact_shift(0, &[5, i64::MAX], &[i64::MAX]), 5);
        assert_eq!(exact_shift(3, &[], &[i64::MIN]), i64::MAX);
        assert_eq!(exact_shift(i64::MIN, &[i64::MIN], &[]), i64::MIN);
        assert_eq!(exact_shift(2, &[], &[]), 2);
        // A saturated shift leaves no interior, as its true value would.
        assert_eq!(interior(0, 10, &[(10, exact_shift(1, &[i64::MAX], &[]))]), (0, 0));
        assert_eq!(interior(0, 10, &[(10, exact_shift(-1, &[i64::MIN], &[]))]), (10, 10));
    }

    #[test]
    fn interior_positions_need_no_clamping_and_are_maximal() {
        let cases: &[&[(usize, i64)]] =
            &[&[], &[(10, 1)], &[(10, -1), (10, 1)], &[(3, 2)], &[(0, 0)], &[(7, -9)], &[(12, 3), (5, -2)]];
        for &shifts in cases {
            for offset in 0..6 {
                for count in 0..14 {
                    let (lo, hi) = interior(offset, count, shifts);
                    assert!(lo <= hi && hi <= count);
                    let fine = |position: usize| {
                        shifts.iter().all(|&(len, shift)| {
                            let at = (offset + position) as i64 + shift;
                            at >= 0 && at < len as i64
                        })
                    };
                    assert!((lo..hi).all(fine), "{shifts:?} {offset} {count}: {lo}..{hi}");
                    // Maximal: the interior is one run, so a fine position outside it would
                    // have to sit next to it.
                    if lo < hi {
                        assert!(lo == 0 || !fine(lo - 1));
                        assert!(hi == count || !fine(hi));
                    } else {
                        assert!((0..count).all(|position| !fine(position)) || shifts.is_empty() && count == 0);
                    }
                }
            }
        }
    }
}
