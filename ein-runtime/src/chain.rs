//! Contractions of three arrays (`out[o…] = scale * Σ k… a[…] * b[…] * c[…]`), for generated
//! code: two pairwise contractions through `gemm.rs`, in the order that costs the fewest
//! multiply–adds for the sizes of this call.
//!
//! Contracting `p` with `q` first keeps, of their labels, those the third operand `r` or the
//! output still needs (the intermediate's axes) and sums the others; the
//! intermediate is then contracted with `r`. Its cost is the product of the sizes of the
//! labels of `p` and `q`, plus that of the labels of the intermediate and `r`. The three
//! pairings are compared at run time, because the best one depends on sizes the compiler
//! does not know: for `a[i, j] * b[j, k] * c[k, l]` with `l` small, `a (b c)` is cheaper than
//! `(a b) c` by the ratio of `k` to `l`. This is what an einsum path optimiser does for a
//! chain of three, on the actual sizes.
//!
//! Rounding: every output element is a sum of the same products as the loop nest, each
//! product grouped as the pairing dictates (`(a b) c` or `a (b c)`) and summed in the
//! GEMM's order, then multiplied by `scale` (once, at the end).
//!
//! Sizes: the output's element count, and the intermediate's, are checked before anything is
//! allocated, and the output is allocated before the intermediate is computed (an `ein: `
//! panic, before any work, if either would not fit in memory). An empty output is returned at
//! once, and an empty sum (a summed label of size 0) is `scale * 0` at once, as in the loop
//! nest, without an intermediate that could sum over a long label for nothing.

use crate::array::Array;
use crate::errors::internal_error;
use crate::gemm::{contract_into, contract_to_vec, too_large_result, Factor};
use crate::scalar::Num;
use crate::view::{element_count, View};

/// Which label indexes each axis of the three operands, and how many labels are output axes
/// (the first ones): the static part of a chain, written by generated code as a constant.
#[derive(Clone, Copy, Debug)]
pub struct ChainSpec {
    /// Labels `0..outputs` are the output axes, in order; the others are summed.
    pub outputs: usize,
    /// `operands[n][d]` is the label of axis `d` of operand `n`.
    pub operands: [&'static [usize]; 3],
}

/// The three ways to pair the operands: `(p, q, r)` contracts `p` with `q` first.
const PAIRINGS: [(usize, usize, usize); 3] = [(0, 1, 2), (1, 2, 0), (0, 2, 1)];

/// `scale * Σ a * b * c` as an array with one axis per output label. `output` gives the
/// output labels' sizes, `summed` the summed labels' sizes (outermost sum first).
#[allow(clippy::too_many_arguments)]
pub fn contract_chain<T: Num, const A: usize, const B: usize, const C: usize, const N: usize>(
    spec: &ChainSpec,
    output: [usize; N],
    summed: &[usize],
    scale: Option<T>,
    a: View<'_, T, A>,
    b: View<'_, T, B>,
    c: View<'_, T, C>,
) -> Array<T, N> {
    if spec.outputs != N {
        internal_error(format_args!("a chain with {} output labels makes an array of rank {N}", spec.outputs));
    }
    let sizes: Vec<usize> = output.iter().chain(summed).copied().collect();
    for labels in spec.operands {
        if let Some(&label) = labels.iter().find(|&&label| label >= sizes.len()) {
            internal_error(format_args!("label {label} of a chain of {} labels", sizes.len()));
        }
    }
    let count = match element_count(&output) {
        Some(0) => return Array::from_vec(output, Vec::new()),
        Some(count) => count,
        None => too_large_result("the result of this chain of contractions", &output),
    };
    // The result's memory first: one that cannot be had is refused before any work.
    let mut out = crate::memory::output_vec(count);
    if summed.contains(&0) {
        // A sum over an empty range: `scale * 0` everywhere, as the loop nest gives, without
        // an intermediate that might sum over a long label for nothing.
        let zero = scale.map_or(T::ZERO, |scale| scale.mul(T::ZERO));
        out.resize(count, zero);
        return Array::from_vec(output, out);
    }
    let (a_shape, b_shape, c_shape) = (a.shape(), b.shape(), c.shape());
    let (a_strides, b_strides, c_strides) = (a.strides(), b.strides(), c.strides());
    let factors = [
        Factor { ptr: a.as_ptr(), shape: &a_shape, strides: &a_strides, labels: spec.operands[0] },
        Factor { ptr: b.as_ptr(), shape: &b_shape, strides: &b_strides, labels: spec.operands[1] },
        Factor { ptr: c.as_ptr(), shape: &c_shape, strides: &c_strides, labels: spec.operands[2] },
    ];
    let (p, q, r) = cheapest_pairing(spec, &sizes);
    let kept = kept_labels(spec, p, q, r);

    // First `p q` over the labels of both, the kept ones as its output axes.
    let first_labels: Vec<usize> = kept.iter().copied().chain(summed_by_first(spec, p, q, &kept)).collect();
    let first_sizes: Vec<usize> = first_labels.iter().map(|&label| sizes[label]).collect();
    let renumber = |labels: &[usize], order: &[usize]| -> Vec<usize> {
        labels
            .iter()
            .map(|label| match order.iter().position(|other| other == label) {
                Some(position) => position,
                None => internal_error(format_args!("label {label} of a chain is not in {order:?}")),
            })
            .collect()
    };
    let (p_labels, q_labels) = (renumber(factors[p].labels, &first_labels), renumber(factors[q].labels, &first_labels));
    // SAFETY: the factors are the views' own pointers, shapes and strides (elements readable
    // while the views are borrowed, here until the function returns; shapes that obey the
    // views' rule).
    let intermediate = unsafe {
        contract_to_vec(
            kept.len(),
            &first_sizes,
            None,
            Factor { labels: &p_labels, ..factors[p] },
            Factor { labels: &q_labels, ..factors[q] },
            "an intermediate result of this chain of contractions",
        )
    };

    // Then the intermediate (row-major over the kept labels) with `r`, over every label left.
    let mut second_labels: Vec<usize> = (0..spec.outputs).collect();
    for label in spec.outputs..sizes.len() {
        if kept.contains(&label) || factors[r].labels.contains(&label) {
            second_labels.push(label);
        }
    }
    let second_sizes: Vec<usize> = second_labels.iter().map(|&label| sizes[label]).collect();
    let intermediate_shape: Vec<usize> = kept.iter().map(|&label| sizes[label]).collect();
    let mut intermediate_strides = vec![0isize; kept.len()];
    // The intermediate exists, so its lengths multiply to at most isize::MAX (contract_to_vec
    // checked its shape): no product below wraps.
    let mut step = 1isize;
    for (stride, &length) in intermediate_strides.iter_mut().zip(&intermediate_shape).rev() {
        *stride = step;
        step = step.wrapping_mul(length as isize);
    }
    let (kept_labels, r_labels) = (renumber(&kept, &second_labels), renumber(factors[r].labels, &second_labels));
    let intermediate = Factor {
        ptr: intermediate.as_ptr(),
        shape: &intermediate_shape,
        strides: &intermediate_strides,
        labels: &kept_labels,
    };
    // SAFETY: the intermediate is a row-major array of `intermediate_shape` (whose element
    // count contract_to_vec checked), alive until the call returns; `r` is as above.
    let out = unsafe {
        contract_into(spec.outputs, &second_sizes, scale, intermediate, Factor { labels: &r_labels, ..factors[r] }, out)
    };
    Array::from_vec(output, out)
}

/// The pairing with the fewest multiply–adds (the first of equals), in floating point so that
/// huge sizes cannot overflow the comparison.
fn cheapest_pairing(spec: &ChainSpec, sizes: &[usize]) -> (usize, usize, usize) {
    let product = |labels: &mut dyn Iterator<Item = usize>| labels.map(|label| sizes[label] as f64).product::<f64>();
    let cost = |&(p, q, r): &(usize, usize, usize)| {
        let kept = kept_labels(spec, p, q, r);
        let first = product(&mut union(spec.operands[p], spec.operands[q]).into_iter());
        let second = product(&mut union(&kept, spec.operands[r]).into_iter());
        first + second
    };
    let mut best = PAIRINGS[0];
    for pairing in &PAIRINGS[1..] {
        if cost(pairing) < cost(&best) {
            best = *pairing;
        }
    }
    best
}

/// The labels of `p` and `q` that outlive their contraction (output labels and labels of
/// `r`): those of `p` in its axis order, then the others of `q` in its axis order, so that
/// for `b[j, k] c[k, l]` the intermediate is `[j, l]`, the GEMM's natural row-major output.
fn kept_labels(spec: &ChainSpec, p: usize, q: usize, r: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for &label in spec.operands[p].iter().chain(spec.operands[q]) {
        if (label < spec.outputs || spec.operands[r].contains(&label)) && !kept.contains(&label) {
            kept.push(label);
        }
    }
    kept
}

/// The labels of `p` and `q` summed by their contraction, in label order.
fn summed_by_first(spec: &ChainSpec, p: usize, q: usize, kept: &[usize]) -> Vec<usize> {
    union(spec.operands[p], spec.operands[q]).into_iter().filter(|label| !kept.contains(label)).collect()
}

/// The labels in either list, each once, in label order.
fn union(left: &[usize], right: &[usize]) -> Vec<usize> {
    let mut labels: Vec<usize> = left.iter().chain(right).copied().collect();
    labels.sort_unstable();
    labels.dedup();
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::as_view::AsView;
    use crate::test_support::{numbers, size};
    use ein_testing::expect_panic;

    /// `Σ_{j,k} a[i, j] b[j, k] c[k, l]` by the loop nest.
    fn chain_by_loops(a: &[f64], b: &[f64], c: &[f64], [i, j, k, l]: [usize; 4]) -> Vec<f64> {
        let mut out = vec![0.0; i * l];
        for row in 0..i {
            for column in 0..l {
                let mut sum = 0.0;
                for middle in 0..j {
                    for inner in 0..k {
                        sum += a[row * j + middle] * b[middle * k + inner] * c[inner * l + column];
                    }
                }
                out[row * l + column] = sum;
            }
        }
        out
    }

    const MATRIX_CHAIN: ChainSpec = ChainSpec { outputs: 2, operands: [&[0, 2], &[2, 3], &[3, 1]] };

    #[test]
    fn the_cheapest_pairing_follows_the_sizes() {
        // [i, l, j, k]: a is i × j, b is j × k, c is k × l.
        assert_eq!(cheapest_pairing(&MATRIX_CHAIN, &[1000, 4, 1000, 1000]), (1, 2, 0), "a (b c) when l is small");
        assert_eq!(cheapest_pairing(&MATRIX_CHAIN, &[4, 1000, 1000, 1000]), (0, 1, 2), "(a b) c when i is small");
        assert_eq!(cheapest_pairing(&MATRIX_CHAIN, &[10, 10, 10, 10]), (0, 1, 2), "the first of equals");
    }

    #[test]
    fn matrix_chains_match_the_loops_in_every_order_and_edge_size() {
        for [i, j, k, l] in [
            [3, 4, 5, 2],
            [size(60, 9), 50, 40, 2],
            [2, 40, 50, size(60, 9)],
            [1, 1, 1, 1],
            [0, 3, 2, 4],
            [3, 0, 2, 4],
            [3, 2, 0, 4],
        ] {
            let (a, b, c) = (numbers(i * j, 1), numbers(j * k, 2), numbers(k * l, 3));
            let expected = chain_by_loops(&a, &b, &c, [i, j, k, l]);
            let views = (View::from_slice(&a, [i, j]), View::from_slice(&b, [j, k]), View::from_slice(&c, [k, l]));
            let result = contract_chain(&MATRIX_CHAIN, [i, l], &[j, k], Some(0.5), views.0, views.1, views.2);
            assert_eq!(result.shape(), [i, l]);
            for (position, (got, want)) in result.as_slice().iter().zip(&expected).enumerate() {
                assert!(
                    (got - 0.5 * want).abs() <= 1e-9 * (1.0 + want.abs()),
                    "{i}×{j}×{k}×{l} at {position}: {got} vs {want}"
                );
            }
        }
    }

    /// A view of `shape` whose every element is the one element of `one` (all strides 0).
    fn broadcast<const N: usize>(one: &[f64; 1], shape: [usize; N]) -> View<'_, f64, N> {
        // SAFETY: with zero strides every in-range index addresses `one[0]`, borrowed for the
        // view's lifetime; the shapes used here obey the views' rule (checked in debug builds).
        unsafe { View::from_raw_parts(one.as_ptr(), shape, [0; N]) }
    }

    #[test]
    #[cfg_attr(miri, ignore = "an allocation Miri cannot make stops Miri instead of failing")]
    fn a_result_or_intermediate_too_large_for_memory_panics_and_an_empty_one_is_returned_at_once() {
        let (i, l) = (274177usize, 67280421310721usize);
        let one = [1.0];
        let message = expect_panic(|| {
            let (a, b, c) = (broadcast(&one, [i, 1]), broadcast(&one, [1, 1]), broadcast(&one, [1, l]));
            contract_chain(&MATRIX_CHAIN, [i, l], &[1, 1], None, a, b, c)
        });
        assert_eq!(
            message,
            "ein: the result of this chain of contractions would have 274177 × 67280421310721 elements, more than memory can hold"
        );
        // An output of no elements needs no intermediate, however long its other axis.
        let huge = 1usize << 62;
        let (a, b, c) = (broadcast(&one, [huge, 1]), broadcast(&one, [1, 1 << 40]), broadcast(&one, [1 << 40, 0]));
        let result = contract_chain(&MATRIX_CHAIN, [huge, 0], &[1, 1 << 40], None, a, b, c);
        assert_eq!(result.shape(), [huge, 0]);
        // An intermediate that cannot be had, though every operand and the output can: the
        // trace Σ_i,j,k a[i, j] b[j, k] c[k, i] of three 2^31 × 2^31 matrices, where every
        // pairing keeps two labels of 2^31 (2^62 elements, 2^65 bytes).
        let trace = ChainSpec { outputs: 0, operands: [&[0, 1], &[1, 2], &[2, 0]] };
        let side = 1usize << 31;
        let message = expect_panic(|| {
            let (a, b, c) =
                (broadcast(&one, [side, side]), broadcast(&one, [side, side]), broadcast(&one, [side, side]));
            contract_chain(&trace, [], &[side, side, side], None, a, b, c)
        });
        assert!(message.starts_with("ein: cannot allocate 4611686018427387904 elements"), "{message}");
    }

    #[test]
    fn a_label_beyond_the_sizes_is_an_internal_error() {
        let spec = ChainSpec { outputs: 1, operands: [&[0, 1], &[1], &[2]] };
        let data = [1.0f64; 4];
        let message = expect_panic(|| {
            let (a, b) = (View::from_slice(&data, [2, 2]), View::from_slice(&data[..2], [2]));
            contract_chain(&spec, [2], &[2], None, a, b, b)
        });
        assert!(message.starts_with("ein: internal error: label 2 of a chain of 2 labels"), "{message}");
    }

    #[test]
    fn a_label_in_all_three_and_a_transposed_operand() {
        // out[i] = Σ_k a[i, k] b[k] c[k], with a stored transposed.
        let (m, k) = (7, 5);
        let a_t = numbers(k * m, 4);
        let (b, c) = (numbers(k, 5), numbers(k, 6));
        let stored = ndarray::Array2::from_shape_vec((k, m), a_t.clone()).expect("k × m values");
        let a = stored.t();
        let spec = ChainSpec { outputs: 1, operands: [&[0, 1], &[1], &[1]] };
        let result = contract_chain(&spec, [m], &[k], None, AsView::<f64, 2>::as_view(&a), b.as_view(), c.as_view());
        for row in 0..m {
            let expected: f64 = (0..k).map(|inner| a_t[inner * m + row] * b[inner] * c[inner]).sum();
            assert!((result.as_slice()[row] - expected).abs() < 1e-12);
        }
    }
}
