//! Tests of views, arrays, `AsView`, and of mutable views and `AsViewMut`, against ndarray's own
//! indexing, over every storage and stride pattern ein accepts: contiguous, transposed,
//! stepped, reversed, broadcast (zero stride, read-only), dynamic rank, empty and rank 0.

use ndarray::{arr0, arr1, s, Array2, Array3, ArrayD, ArrayViewD, Axis, Dimension, IxDyn};

use crate::{Array, AsView, AsViewMut, View, ViewMut};
use ein_testing::expect_panic;

/// Every index of `shape` in row-major order.
fn all_indices<const N: usize>(shape: [usize; N]) -> Vec<[usize; N]> {
    let count: usize = shape.iter().product();
    let mut indices = Vec::with_capacity(count);
    let mut index = [0usize; N];
    for _ in 0..count {
        indices.push(index);
        for axis in (0..N).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    indices
}

/// Checks that every way of reading `view` agrees with ndarray's indexing of `expected`.
fn check_view<const N: usize>(view: View<'_, i32, N>, expected: ArrayViewD<'_, i32>) {
    assert_eq!(&view.shape()[..], expected.shape());
    for axis in 0..N {
        assert_eq!(view.len_of(axis), expected.len_of(Axis(axis)));
        assert_eq!(view.size(axis), expected.len_of(Axis(axis)) as i64);
    }
    for index in all_indices(view.shape()) {
        let wanted = expected[&index[..]];
        assert_eq!(view.get(index), Some(wanted), "get {index:?}");
        // SAFETY: `index` comes from the view's own shape.
        assert_eq!(unsafe { view.get_unchecked(index) }, wanted, "get_unchecked {index:?}");
    }
    for axis in 0..N {
        let mut outside = [0usize; N];
        outside[axis] = view.len_of(axis);
        assert_eq!(view.get(outside), None);
    }
    let row_major: Vec<i32> = expected.iter().copied().collect();
    assert_eq!(view.iter().collect::<Vec<_>>(), row_major);
    assert_eq!(view.iter().size_hint(), (row_major.len(), Some(row_major.len())));
    let copy = view.to_array();
    assert_eq!(copy.shape(), view.shape());
    assert_eq!(copy.as_slice(), &row_major[..]);
    if let Some(elements) = view.as_slice() {
        assert_eq!(elements, &row_major[..]);
    }
}

/// Checks every sub-view at the outermost axis of a rank-2 view against ndarray.
fn check_rows(view: View<'_, i32, 2>, expected: ArrayViewD<'_, i32>) {
    for row in 0..view.len_of(0) {
        // SAFETY: row < len_of(0).
        let sub: View<'_, i32, 1> = unsafe { view.sub_unchecked([row]) };
        check_view(sub, expected.index_axis(Axis(0), row));
        // SAFETY: as above.
        let whole: View<'_, i32, 2> = unsafe { view.sub_unchecked([]) };
        check_view(whole, expected.view());
        for column in 0..view.len_of(1) {
            // SAFETY: both indices in range.
            let element: View<'_, i32, 0> = unsafe { view.sub_unchecked([row, column]) };
            assert_eq!(element.iter().collect::<Vec<_>>(), vec![expected[[row, column]]]);
        }
    }
}

fn sample_matrix() -> Array2<i32> {
    Array2::from_shape_fn((5, 4), |(row, column)| (row * 10 + column) as i32)
}

fn sample_cube() -> Array3<i32> {
    Array3::from_shape_fn((3, 4, 5), |(a, b, c)| (a * 100 + b * 10 + c) as i32)
}

#[test]
fn views_of_std_storage() {
    let data = vec![3, 1, 4, 1, 5];
    let expected = arr1(&data).into_dyn();
    check_view(AsView::as_view(&data), expected.view());
    check_view(AsView::as_view(&data[..]), expected.view());
    let fixed = [3, 1, 4, 1, 5];
    check_view(AsView::as_view(&fixed), expected.view());
    check_view(AsView::as_view(&&data), expected.view());
    let mut mutable = data.clone();
    check_view(AsView::as_view(&&mut mutable), expected.view());
    check_view(View::from_slice(&data, [5]), expected.view());
    let empty: Vec<i32> = Vec::new();
    check_view(AsView::as_view(&empty), arr1(&[]).into_dyn().view());
}

#[test]
fn views_of_ein_arrays() {
    let matrix = sample_matrix();
    let array = Array::from_vec([5, 4], matrix.iter().copied().collect());
    let expected = matrix.clone().into_dyn();
    check_view(array.view(), expected.view());
    check_view(AsView::as_view(&array), expected.view());
    check_view(AsView::as_view(&array.view()), expected.view());
    check_rows(array.view(), expected.view());
    check_view(View::from_slice(array.as_slice(), [5, 4]), expected.view());
}

#[test]
fn views_of_owned_and_borrowed_ndarrays() {
    let matrix = sample_matrix();
    let expected = matrix.clone().into_dyn();
    check_view(AsView::as_view(&matrix), expected.view());
    check_view(AsView::as_view(&matrix.view()), expected.view());
    check_view(AsView::as_view(&matrix.to_shared()), expected.view());
    check_view(AsView::as_view(&ndarray::CowArray::from(matrix.view())), expected.view());
    check_rows(AsView::as_view(&matrix), expected.view());
    let cube = sample_cube();
    check_view(AsView::as_view(&cube), cube.view().into_dyn());
}

#[test]
fn views_of_transposed_ndarrays() {
    let matrix = sample_matrix();
    let transposed = matrix.t();
    let view: View<'_, i32, 2> = AsView::as_view(&transposed);
    assert_eq!(view.as_slice(), None);
    check_view(view, transposed.into_dyn());
    check_rows(view, transposed.into_dyn());
    let cube = sample_cube();
    let permuted = cube.view().permuted_axes([2, 0, 1]);
    check_view(AsView::as_view(&permuted), permuted.into_dyn());
}

#[test]
fn views_of_stepped_ndarrays() {
    let matrix = sample_matrix();
    for stepped in [matrix.slice(s![..;2, ..]), matrix.slice(s![.., ..;3]), matrix.slice(s![1..;2, 1..3])] {
        check_view(AsView::as_view(&stepped), stepped.into_dyn());
        check_rows(AsView::as_view(&stepped), stepped.into_dyn());
    }
}

#[test]
fn views_of_reversed_ndarrays() {
    let data = arr1(&[1, 2, 3, 4, 5, 6, 7]);
    let reversed = data.slice(s![..;-1]);
    assert!(reversed.strides()[0] < 0);
    check_view(AsView::as_view(&reversed), reversed.into_dyn());
    let matrix = sample_matrix();
    for reversed in [
        matrix.slice(s![..;-1, ..]),
        matrix.slice(s![.., ..;-1]),
        matrix.slice(s![..;-2, ..;-3]),
        matrix.slice(s![..;-1, ..]).reversed_axes(),
    ] {
        check_view(AsView::as_view(&reversed), reversed.into_dyn());
        check_rows(AsView::as_view(&reversed), reversed.into_dyn());
    }
    let cube = sample_cube();
    let twisted = cube.slice(s![..;-1, 1.., ..;-2]).permuted_axes([1, 2, 0]);
    check_view(AsView::as_view(&twisted), twisted.into_dyn());
}

#[test]
fn views_of_broadcast_ndarrays() {
    let row = arr1(&[1, 2, 3]);
    let broadcast = row.broadcast((4, 3)).unwrap();
    assert_eq!(broadcast.strides()[0], 0);
    let view: View<'_, i32, 2> = AsView::as_view(&broadcast);
    assert_eq!(view.strides(), [0, 1]);
    assert_eq!(view.as_slice(), None);
    check_view(view, broadcast.into_dyn());
    check_rows(view, broadcast.into_dyn());
    let reversed_row = row.slice(s![..;-1]);
    let reversed_broadcast = reversed_row.broadcast((2, 2, 3)).unwrap();
    check_view(AsView::as_view(&reversed_broadcast), reversed_broadcast.into_dyn());
    let scalar = arr0(9);
    let everywhere = scalar.broadcast((2, 3)).unwrap();
    check_view(AsView::as_view(&everywhere), everywhere.into_dyn());
}

#[test]
fn views_of_dynamic_rank_ndarrays() {
    let matrix = sample_matrix();
    let dynamic: ArrayD<i32> = matrix.clone().into_dyn();
    let view: View<'_, i32, 2> = AsView::as_view(&dynamic);
    check_view(view, dynamic.view());
    let reversed = dynamic.slice(s![..;-1, ..;2]).into_dyn();
    let view: View<'_, i32, 2> = AsView::as_view(&reversed);
    check_view(view, reversed.view());
    let message = expect_panic(|| {
        let _: View<'_, i32, 3> = AsView::as_view(&dynamic);
    });
    assert_eq!(message, "ein: an ndarray of dynamic rank with 2 axes was given where an array with 3 axes is expected");
}

#[test]
fn views_of_empty_and_rank_zero_arrays() {
    for shape in [(0, 3), (3, 0), (0, 0)] {
        let empty = Array2::<i32>::zeros(shape);
        check_view(AsView::as_view(&empty), empty.view().into_dyn());
        let reversed = empty.slice(s![..;-1, ..;-1]);
        check_view(AsView::as_view(&reversed), reversed.into_dyn());
        let transposed = empty.t();
        check_view(AsView::as_view(&transposed), transposed.into_dyn());
    }
    let empty = Array2::<i32>::zeros((3, 0));
    let view: View<'_, i32, 2> = AsView::as_view(&empty);
    // SAFETY: row 2 < 3; the sub-view is empty and never read.
    let row: View<'_, i32, 1> = unsafe { view.sub_unchecked([2]) };
    assert_eq!(row.iter().count(), 0);
    let scalar = arr0(42);
    let view: View<'_, i32, 0> = AsView::as_view(&scalar);
    check_view(view, scalar.view().into_dyn());
    assert_eq!(view.get([]), Some(42));
    assert_eq!(view.to_array().as_slice(), &[42]);
    let dynamic_scalar = ArrayD::from_elem(IxDyn(&[]), 7);
    let view: View<'_, i32, 0> = AsView::as_view(&dynamic_scalar);
    assert_eq!(view.iter().collect::<Vec<_>>(), vec![7]);
}

#[test]
fn views_from_raw_parts_and_slices() {
    let data: Vec<i32> = (0..12).collect();
    // SAFETY: a reversed-rows view of the 3 x 4 matrix; every index stays inside `data`.
    let reversed = unsafe { View::from_raw_parts(data.as_ptr().add(8), [3, 4], [-4, 1]) };
    let expected = Array2::from_shape_vec((3, 4), data.clone()).unwrap();
    check_view(reversed, expected.slice(s![..;-1, ..]).into_dyn());
    let message = expect_panic(|| View::from_slice(&data, [5, 2]));
    assert_eq!(message, "ein: a slice of 12 elements cannot be viewed with shape [5, 2]");
    let message = expect_panic(|| View::from_slice(&data, [usize::MAX, 2]));
    assert_eq!(
        message,
        "ein: a view of shape [18446744073709551615, 2] would have more elements than memory can address (the product of its non-zero lengths exceeds isize::MAX)"
    );
}

#[test]
fn prefetch_hints_take_any_index_and_change_nothing() {
    // Contiguous, reversed, transposed and empty views; indices in range, past the end and at
    // the top of `usize` (the address arithmetic wraps, and nothing is read).
    let matrix = sample_matrix();
    let reversed = matrix.slice(s![.., ..;-1]);
    let transposed = matrix.t();
    let empty = Array2::<i32>::zeros((0, 3));
    for view in [matrix.view(), reversed.view(), transposed.view(), empty.view()] {
        let ein_view = view.as_view();
        for index in [[0, 0], [1, 2], [7, 0], [usize::MAX, usize::MAX / 2], [0, usize::MAX]] {
            for count in [0, 1, 3, 1000] {
                ein_view.prefetch_run(index, count);
            }
        }
        check_view(ein_view, view.into_dyn());
    }
}

#[test]
fn sub_unchecked_asserts_ranks() {
    let data = [1, 2, 3, 4];
    let view = View::from_slice(&data, [2, 2]);
    // SAFETY: index in range; only the rank is wrong.
    let message = expect_panic(|| unsafe { view.sub_unchecked::<1, 2>([0]) });
    assert!(message.starts_with("ein: internal error: sub-view of rank 2 taken at 1 axes of a view of rank 2"));
}

#[test]
fn views_are_send_and_sync_and_copy() {
    fn assert_send_sync_copy<X: Send + Sync + Copy>(_: X) {}
    let data = [1.0f32, 2.0];
    assert_send_sync_copy(View::from_slice(&data, [2]));
}

#[test]
fn array_basics() {
    let array = Array::from_vec([2, 3], vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(array.shape(), [2, 3]);
    assert_eq!(array.len(), 2);
    assert!(!array.is_empty());
    assert_eq!(array[[1, 2]], 6);
    assert_eq!(array.get([1, 0]), Some(&4));
    assert_eq!(array.get([2, 0]), None);
    assert_eq!(array.get([0, 3]), None);
    assert_eq!(array.clone(), array);
    assert_ne!(array, Array::from_vec([3, 2], vec![1, 2, 3, 4, 5, 6]));
    assert_eq!(array.clone().into_vec(), vec![1, 2, 3, 4, 5, 6]);
    assert!(Array::<f32, 2>::from_vec([3, 0], vec![]).is_empty());
    assert_eq!(Array::from_vec([], vec![5]).as_slice(), &[5]);
    assert_eq!(expect_panic(|| array[[0, 3]]), "ein: index [0, 3] is out of bounds for an array of shape [2, 3]");
    assert_eq!(
        expect_panic(|| Array::from_vec([2, 2], vec![1, 2, 3])),
        "ein: 3 elements cannot form an array of shape [2, 2]"
    );
    assert!(expect_panic(|| Array::from_vec([], vec![1]).len()).starts_with("ein: a rank-0 array"));
}

#[test]
fn array_debug_prints_nested_rows() {
    let array = Array::from_vec([2, 3], vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(format!("{array:?}"), "Array { shape: [2, 3], elements: [[1, 2, 3], [4, 5, 6]] }");
    assert_eq!(
        format!("{:?}", array.view()),
        "View { shape: [2, 3], strides: [3, 1], elements: [[1, 2, 3], [4, 5, 6]] }"
    );
    assert_eq!(format!("{:?}", Array::from_vec([], vec![1.5])), "Array { shape: [], elements: 1.5 }");
    assert_eq!(
        format!("{:?}", Array::<i32, 2>::from_vec([2, 0], vec![])),
        "Array { shape: [2, 0], elements: [[], []] }"
    );
}

#[test]
fn arrays_convert_to_ndarray_without_copying() {
    let array = Array::from_vec([2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let address = array.as_slice().as_ptr();
    let converted = array.into_ndarray();
    assert_eq!(converted.as_ptr(), address);
    assert_eq!(converted, ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]));
    assert!(converted.is_standard_layout());

    let vector: ndarray::Array1<i32> = Array::from_vec([3], vec![1, 2, 3]).into();
    assert_eq!(vector, arr1(&[1, 2, 3]));
    let six: ndarray::Array6<i32> = Array::from_vec([1, 2, 1, 2, 1, 2], (0..8).collect()).into();
    assert_eq!(six.shape(), &[1, 2, 1, 2, 1, 2]);
    assert_eq!(six[[0, 1, 0, 1, 0, 1]], 7);
    let scalar: ndarray::Array0<i32> = Array::from_vec([], vec![4]).into();
    assert_eq!(scalar.into_scalar(), 4);
    let empty = Array::<i32, 2>::from_vec([0, 3], vec![]).into_ndarray();
    assert_eq!(empty.raw_dim().into_pattern(), (0, 3));
}

#[test]
fn flat_rows_of_runs_rows_of_the_leading_axes_taken_as_one() {
    let data: Vec<i32> = (0..24).collect();
    let array = Array3::from_shape_vec((2, 3, 4), data).unwrap();
    let view = AsView::<i32, 3>::as_view(&array);
    let run = |view: View<'_, i32, 3>, start: usize, end: usize| {
        let flat = view.flat_rows_of(2, start, end, view.shape()[2])?;
        assert_eq!(&flat.shape()[..2], &[1, 1]);
        Some((0..flat.shape()[2]).map(|k| flat.get([0, 0, k]).expect("in range")).collect::<Vec<i32>>())
    };
    // Rows 2..5 of the six (i, j) rows cross from i = 0 to i = 1.
    assert_eq!(run(view, 2, 5), Some((8..20).collect()));
    assert_eq!(run(view, 0, 6), Some((0..24).collect()));
    assert_eq!(run(view, 6, 6), Some(Vec::new()));
    assert_eq!(run(view, 5, 7), None, "rows out of range");
    assert!(view.flat_rows_of(2, 0, 1, 3).is_none(), "rows shorter than the view's");
    assert!(view.flat_rows_of(4, 0, 1, 1).is_none(), "more row axes than the view has");
    // One axis of rows is `flat_rows` over the whole view.
    assert_eq!(view.flat_rows_of(1, 1, 2, 12).map(|flat| flat.shape()), Some([1, 1, 12]));
    // Layouts that are not one run, even where a chunk's rows would be.
    let cut = array.slice(s![.., 1.., ..]);
    assert!(AsView::<i32, 3>::as_view(&cut).flat_rows_of(2, 0, 1, 4).is_none());
    let swapped = array.view().permuted_axes([1, 0, 2]);
    assert!(AsView::<i32, 3>::as_view(&swapped).flat_rows_of(2, 0, 1, 4).is_none());
    let unit = view.unit_inner().expect("contiguous").flat_rows_of(2, 5, 6, 4).expect("one row");
    // SAFETY: index 3 is in range of the run's 4 elements.
    assert_eq!(unsafe { unit.get_unchecked([0, 0, 3]) }, 23);
}

#[test]
fn flat_rows_runs_contiguous_rows_in_order_and_rejects_other_layouts() {
    let data: Vec<i32> = (0..24).collect();
    let array = Array3::from_shape_vec((4, 3, 2), data).unwrap();
    let view = AsView::<i32, 3>::as_view(&array);
    let run = |view: View<'_, i32, 3>, start: usize, end: usize| {
        let flat = view.flat_rows(start, end, view.shape()[1] * view.shape()[2])?;
        assert_eq!(&flat.shape()[..2], &[1, 1]);
        Some((0..flat.shape()[2]).map(|k| flat.get([0, 0, k]).expect("in range")).collect::<Vec<i32>>())
    };
    assert_eq!(run(view, 1, 3), Some((6..18).collect()));
    assert_eq!(run(view, 0, 4), Some((0..24).collect()));
    assert_eq!(run(view, 2, 2), Some(Vec::new()));
    assert_eq!(run(view, 3, 5), None, "rows out of range");
    let unit = view.unit_inner().expect("contiguous").flat_rows(3, 4, 6).expect("one row");
    assert!(view.flat_rows(0, 2, 5).is_none(), "rows longer than the loop's");
    // SAFETY: index 5 is in range of the run's 6 elements.
    assert_eq!(unsafe { unit.get_unchecked([0, 0, 5]) }, 23);
    // One row of a sliced array is contiguous; several are not.
    let cut = array.slice(s![.., 1.., ..]);
    let cut = AsView::<i32, 3>::as_view(&cut);
    assert_eq!(run(cut, 2, 3), Some(vec![14, 15, 16, 17]));
    assert_eq!(run(cut, 1, 3), None);
    // Transposed, reversed and strided layouts are not runs.
    let swapped = array.view().permuted_axes([0, 2, 1]);
    assert_eq!(run(AsView::<i32, 3>::as_view(&swapped), 0, 1), None);
    let reversed = array.slice(s![..;-1, .., ..]);
    assert_eq!(run(AsView::<i32, 3>::as_view(&reversed), 0, 1), Some((18..24).collect()));
    assert_eq!(run(AsView::<i32, 3>::as_view(&reversed), 0, 2), None);
    // Axes of length 1 may have any stride.
    let single = array.slice(s![.., 1..2, ..]);
    assert_eq!(run(AsView::<i32, 3>::as_view(&single), 0, 4), None, "rows 6 apart hold 2 each");
    let column = array.slice(s![1..2, .., 0..1]);
    assert_eq!(run(AsView::<i32, 3>::as_view(&column), 0, 1), None, "stride 2 down the run");
    let tail = array.slice(s![2.., .., ..]);
    assert_eq!(run(AsView::<i32, 3>::as_view(&tail), 0, 2), Some((12..24).collect()));
}

#[test]
fn unit_inner_keeps_every_element_and_rejects_strided_last_axes() {
    let data: Vec<i32> = (0..24).collect();
    let matrix = Array3::from_shape_vec((2, 3, 4), data).unwrap();
    let contiguous = AsView::<i32, 3>::as_view(&matrix);
    let unit = contiguous.unit_inner().expect("a contiguous view");
    check_view(unit.view(), matrix.view().into_dyn());
    check_unit_reads(unit);
    // Only the last axis matters: a transposed outer pair keeps it contiguous.
    let swapped = matrix.view().permuted_axes([1, 0, 2]);
    let unit = AsView::<i32, 3>::as_view(&swapped).unit_inner().expect("last axis still contiguous");
    assert_eq!(unit.strides()[2], 1);
    check_view(unit.view(), swapped.view().into_dyn());
    check_unit_reads(unit);
    // Strided, reversed and broadcast last axes are rejected...
    let stepped = matrix.slice(s![.., .., ..;2]);
    assert!(AsView::<i32, 3>::as_view(&stepped).unit_inner().is_none());
    let reversed = matrix.slice(s![.., .., ..;-1]);
    assert!(AsView::<i32, 3>::as_view(&reversed).unit_inner().is_none());
    let row = ndarray::arr1(&[5, 6, 7]);
    let broadcast = row.broadcast((2, 3)).unwrap().reversed_axes();
    assert!(AsView::<i32, 2>::as_view(&broadcast).unit_inner().is_none());
    // ...unless it has at most one element, whose stride is never used.
    let single = matrix.slice(s![.., .., 1..2;2]);
    let unit = AsView::<i32, 3>::as_view(&single).unit_inner().expect("length 1");
    assert_eq!(unit.strides()[2], 1);
    check_view(unit.view(), single.view().into_dyn());
    check_unit_reads(unit);
    let empty = matrix.slice(s![.., .., 0..0;3]);
    let unit = AsView::<i32, 3>::as_view(&empty).unit_inner().expect("length 0");
    check_view(unit.view(), empty.view().into_dyn());
    let scalar = arr0(9);
    let unit = AsView::<i32, 0>::as_view(&scalar).unit_inner().expect("rank 0");
    assert_eq!(unit.get([]), Some(9));
    // SAFETY: a rank-0 view has its one element at `[]`.
    let element = unsafe { unit.get_unchecked([]) };
    assert_eq!(element, 9);
}

#[test]
fn unit_stride_reads_of_plain_views_agree_with_their_reads() {
    // An array's own view and its rows (what generated code reads this way)...
    let array = Array::from_vec([2, 3, 4], (0..24).collect::<Vec<i32>>());
    let view = array.view();
    for index in (0..24).map(|n| [n / 12, n / 4 % 3, n % 4]) {
        // SAFETY: the index is in range, and an array's view has last stride 1.
        assert_eq!(unsafe { view.get_unit_unchecked(index) }, array[index]);
    }
    // SAFETY: 1 < 2 and 2 < 3; a sub-view at leading indices keeps the last stride.
    let row = unsafe { view.sub_unchecked::<2, 1>([1, 2]) };
    // SAFETY: 3 < 4.
    assert_eq!(unsafe { row.get_unit_unchecked([3]) }, array[[1, 2, 3]]);
    // ...and a last axis of length 1 whose stride is not 1 (never multiplied by anything but 0).
    let data: Vec<i32> = (0..24).collect();
    // SAFETY: the largest offset, 1·12 + 2·4 + 0·5 = 20, is inside `data`, borrowed meanwhile;
    // the shape has 6 elements.
    let single = unsafe { View::from_raw_parts(data.as_ptr(), [2, 3, 1], [12, 4, 5]) };
    for index in (0..6).map(|n| [n / 3, n % 3, 0]) {
        // SAFETY: the index is in range, and the last axis has length 1.
        assert_eq!(Some(unsafe { single.get_unit_unchecked(index) }), single.get(index));
    }
}

/// A [`UnitView`]'s own reads (the last index unscaled, the one before it scaled by `PACK`
/// if that is not 0), element by element and through its planes and rows, agree with the
/// plain view's.
fn check_unit_reads<const PACK: usize>(unit: crate::view::UnitView<'_, i32, 3, PACK>) {
    let [planes, rows, columns] = unit.shape();
    for p in 0..planes {
        // SAFETY: p < planes, the view's first length.
        let plane = unsafe { unit.sub_unchecked::<1, 2>([p]) };
        for r in 0..rows {
            // SAFETY: p < planes and r < rows, the view's first two lengths.
            let row = unsafe { unit.sub_unchecked::<2, 1>([p, r]) };
            for c in 0..columns {
                let expected = unit.view().get([p, r, c]);
                // SAFETY: p, r, c are below the view's lengths, and r, c below the plane's.
                let (element, in_plane, in_row) =
                    unsafe { (unit.get_unchecked([p, r, c]), plane.get_unchecked([r, c]), row.get_unchecked([c])) };
                assert_eq!(Some(element), expected);
                assert_eq!(Some(in_plane), expected);
                assert_eq!(Some(in_row), expected);
            }
        }
    }
}

#[test]
fn packed_inner_reads_interleaved_rows_at_a_constant_stride() {
    // An interleaved image: 2 rows of 4 pixels of 3 channels.
    let image = Array3::from_shape_vec((2, 4, 3), (0..24).collect()).unwrap();
    let view = AsView::<i32, 3>::as_view(&image);
    let packed = view.packed_inner::<3>().expect("pixels 3 apart");
    check_view(packed.view(), image.view().into_dyn());
    check_unit_reads(packed);
    assert!(view.packed_inner::<4>().is_none(), "pixels are 3 apart, not 4");
    assert_eq!(packed.len_of(2), 3);
    assert_eq!(packed.len_of(1), 4);
    // Pixels 3 apart, but of 2 channels: not pixels of 3 channels.
    let two = image.slice(s![.., .., 0..2]);
    assert!(AsView::<i32, 3>::as_view(&two).packed_inner::<3>().is_none());
    assert!(AsView::<i32, 3>::as_view(&two).packed_inner::<2>().is_none());
    // Reversed or stepped pixels, a strided channel axis, or rows that are not pixels: no.
    for other in [image.slice(s![.., ..;-1, ..]), image.slice(s![.., ..;2, ..]), image.slice(s![.., .., ..;2])] {
        assert!(AsView::<i32, 3>::as_view(&other).packed_inner::<3>().is_none());
    }
    let transposed = image.view().permuted_axes([1, 0, 2]);
    assert!(AsView::<i32, 3>::as_view(&transposed).packed_inner::<3>().is_none(), "pixels 12 apart");
    // One pixel per row: its stride is never used.
    let stepped = image.slice(s![.., 1..2;2, ..]);
    check_unit_reads(AsView::<i32, 3>::as_view(&stepped).packed_inner::<3>().expect("one pixel per row"));
    // A vector has no axis before the last.
    let vector = ndarray::arr1(&[1, 2, 3]);
    assert!(AsView::<i32, 1>::as_view(&vector).packed_inner::<3>().is_some());
    assert!(AsView::<i32, 1>::as_view(&vector).packed_inner::<2>().is_none());
}

/// Checks a mutable view against `before`, a copy of the elements it should address (read
/// through ndarray beforehand): reads through `as_view` agree with it; then writes distinct new
/// values through the view with `assign`, and returns them, for the caller to find in its
/// storage (at the same indices, and nowhere else).
fn check_view_mut<const N: usize>(mut view: ViewMut<'_, i32, N>, before: &ArrayD<i32>) -> ArrayD<i32> {
    assert_eq!(&view.shape()[..], before.shape());
    assert_eq!(view.as_view().strides(), view.strides());
    check_view(view.as_view(), before.view());
    let written = before.mapv(|value| -value - 1);
    let source = Array::from_vec(view.shape(), written.iter().copied().collect());
    view.assign(&source.view());
    check_view(view.as_view(), written.view());
    // The same through a reborrow, which leaves `view` usable afterwards.
    let rewritten = before.mapv(|value| value * 2 + 1);
    let shape = view.shape();
    view.reborrow().assign(&Array::from_vec(shape, rewritten.iter().copied().collect()).view());
    check_view(view.as_view(), rewritten.view());
    view.assign(&source.view());
    written
}

#[test]
fn mutable_views_of_std_storage() {
    let original = vec![3, 1, 4, 1, 5];
    let before = arr1(&original).into_dyn();
    let after = arr1(&[-4, -2, -5, -2, -6]).into_dyn();
    let mut data = original.clone();
    assert_eq!(check_view_mut(AsViewMut::as_view_mut(&mut data), &before), after);
    assert_eq!(data, [-4, -2, -5, -2, -6]);
    let mut data = original.clone();
    check_view_mut(AsViewMut::as_view_mut(&mut data[..]), &before);
    assert_eq!(data, [-4, -2, -5, -2, -6]);
    let mut fixed = [3, 1, 4, 1, 5];
    check_view_mut(AsViewMut::as_view_mut(&mut fixed), &before);
    assert_eq!(fixed, [-4, -2, -5, -2, -6]);
    let mut data = original.clone();
    check_view_mut(AsViewMut::as_view_mut(&mut &mut data), &before);
    assert_eq!(data, [-4, -2, -5, -2, -6]);
    let mut data = original.clone();
    check_view_mut(ViewMut::from_slice(&mut data, [5]), &before);
    assert_eq!(data, [-4, -2, -5, -2, -6]);
    let mut data = original.clone();
    let mut outer = ViewMut::from_slice(&mut data, [5]);
    check_view_mut(AsViewMut::as_view_mut(&mut outer), &before);
    // `outer` is still usable after lending itself out.
    assert_eq!(outer.as_view().get([4]), Some(-6));
    assert_eq!(data, [-4, -2, -5, -2, -6]);
    let mut empty: Vec<i32> = Vec::new();
    let view: ViewMut<'_, i32, 1> = AsViewMut::as_view_mut(&mut empty);
    assert_eq!(view.shape(), [0]);
    assert_eq!(check_view_mut(view, &arr1(&[]).into_dyn()).len(), 0);
}

#[test]
fn mutable_views_of_ein_arrays() {
    let matrix = sample_matrix();
    let before = matrix.clone().into_dyn();
    let mut array = Array::from_vec([5, 4], matrix.iter().copied().collect());
    let address = array.as_slice().as_ptr();
    let written = check_view_mut(array.view_mut(), &before);
    assert_eq!(array.as_slice(), written.as_slice().unwrap());
    assert_eq!(array.as_slice().as_ptr(), address);
    assert_eq!(array[[4, 3]], -44);
    let mut array = Array::from_vec([5, 4], matrix.iter().copied().collect());
    check_view_mut(AsViewMut::as_view_mut(&mut array), &before);
    assert_eq!(array.as_slice(), written.as_slice().unwrap());
    let mut array = Array::from_vec([5, 4], matrix.iter().copied().collect());
    let mut view = array.view_mut();
    check_view_mut(AsViewMut::as_view_mut(&mut view), &before);
    assert_eq!(array.as_slice(), written.as_slice().unwrap());
}

#[test]
fn mutable_views_of_owned_and_borrowed_ndarrays() {
    let matrix = sample_matrix();
    let before = matrix.clone().into_dyn();
    let mut owned = matrix.clone();
    let address = owned.as_ptr();
    let written = check_view_mut(AsViewMut::as_view_mut(&mut owned), &before);
    assert_eq!(owned.clone().into_dyn(), written);
    assert_eq!(owned.as_ptr(), address);
    assert_eq!(owned[[2, 3]], -24);
    let mut owned = matrix.clone();
    check_view_mut(AsViewMut::as_view_mut(&mut owned.view_mut()), &before);
    assert_eq!(owned.into_dyn(), written);
    let cube = sample_cube();
    let mut cube_copy = cube.clone();
    let cube_written = check_view_mut(AsViewMut::as_view_mut(&mut cube_copy), &cube.clone().into_dyn());
    assert_eq!(cube_copy.into_dyn(), cube_written);
    assert_eq!(cube_written[[2, 3, 4]], -235);
}

#[test]
fn mutable_views_of_copy_on_write_ndarrays_write_only_their_own_copy() {
    let matrix = sample_matrix();
    let before = matrix.clone().into_dyn();
    // A shared ArcArray is unshared before it is written: the clone keeps the old elements.
    let mut shared = matrix.to_shared();
    let other = shared.clone();
    let written = check_view_mut(AsViewMut::as_view_mut(&mut shared), &before);
    assert_eq!(shared.clone().into_dyn(), written);
    assert_eq!(other, matrix);
    // Unsharing a transposed ArcArray that views all of its elements keeps their strides...
    let mut shared_transposed = matrix.to_shared().reversed_axes();
    let keep = shared_transposed.clone();
    let transposed_before = matrix.t().to_owned().into_dyn();
    let transposed_written = check_view_mut(AsViewMut::as_view_mut(&mut shared_transposed), &transposed_before);
    assert_eq!(shared_transposed.into_dyn(), transposed_written);
    assert_eq!(keep, matrix.t());
    // ...and unsharing a small, stepped part copies just that part into a new layout; the view
    // is taken with the strides of the copy.
    let mut shared_part = matrix.to_shared();
    shared_part.slice_collapse(s![..;2, 1..3]);
    let keep = shared_part.clone();
    let part_before = matrix.slice(s![..;2, 1..3]).to_owned().into_dyn();
    assert_eq!(shared_part.strides(), [8, 1]);
    let view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut shared_part);
    assert_eq!(view.strides(), [2, 1]);
    let part_written = check_view_mut(view, &part_before);
    assert_eq!(shared_part.into_dyn(), part_written);
    assert_eq!(keep, matrix.slice(s![..;2, 1..3]));
    // A CowArray borrowing a view becomes an owned copy: the borrowed array is not written.
    let source = matrix.clone();
    let mut cow = ndarray::CowArray::from(source.view());
    let cow_written = check_view_mut(AsViewMut::as_view_mut(&mut cow), &before);
    assert_eq!(cow.into_dyn(), cow_written);
    assert_eq!(source, matrix);
}

#[test]
fn mutable_views_of_transposed_ndarrays() {
    let matrix = sample_matrix();
    let mut target = matrix.clone();
    let transposed_before = matrix.t().to_owned().into_dyn();
    let mut transposed = target.view_mut().reversed_axes();
    let mut view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut transposed);
    assert_eq!(view.shape(), [4, 5]);
    assert_eq!(view.strides(), [1, 4]);
    assert!(view.as_slice_mut().is_none());
    let written = check_view_mut(view, &transposed_before);
    assert_eq!(target.t().into_dyn(), written);
    assert_eq!(target[[3, 1]], -32);
    let cube = sample_cube();
    let mut target = cube.clone();
    let permuted_before = cube.view().permuted_axes([2, 0, 1]).to_owned().into_dyn();
    let written =
        check_view_mut(AsViewMut::as_view_mut(&mut target.view_mut().permuted_axes([2, 0, 1])), &permuted_before);
    assert_eq!(target.view().permuted_axes([2, 0, 1]).into_dyn(), written);
}

#[test]
fn mutable_views_of_stepped_ndarrays_write_only_their_elements() {
    let matrix = sample_matrix();
    for (step, layout) in [s![..;2, ..], s![.., ..;2], s![1..;2, 1..3]].into_iter().enumerate() {
        let mut target = matrix.clone();
        let before = matrix.slice(layout).to_owned().into_dyn();
        let mut stepped = target.slice_mut(layout);
        let view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut stepped);
        assert_eq!(&view.shape()[..], before.shape(), "layout {step}");
        let written = check_view_mut(view, &before);
        assert_eq!(target.slice(layout).into_dyn(), written, "layout {step}");
        // Every element outside the stepped view keeps its value.
        let mut expected = matrix.clone();
        expected.slice_mut(layout).assign(&written.into_dimensionality::<ndarray::Ix2>().unwrap());
        assert_eq!(target, expected, "layout {step}");
    }
}

#[test]
fn mutable_views_of_reversed_ndarrays() {
    let matrix = sample_matrix();
    let mut target = matrix.clone();
    let mut reversed = target.view_mut();
    reversed.invert_axis(Axis(0));
    let view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut reversed);
    assert_eq!(view.strides(), [-4, 1]);
    let written = check_view_mut(view, &matrix.slice(s![..;-1, ..]).to_owned().into_dyn());
    assert_eq!(target.slice(s![..;-1, ..]).into_dyn(), written);
    assert_eq!(target[[0, 0]], -1);
    assert_eq!(target[[4, 3]], -44);
    for layout in [s![.., ..;-1], s![..;-2, ..;-3]] {
        let mut target = matrix.clone();
        let before = matrix.slice(layout).to_owned().into_dyn();
        let written = check_view_mut(AsViewMut::as_view_mut(&mut target.slice_mut(layout)), &before);
        assert_eq!(target.slice(layout).into_dyn(), written);
        let mut expected = matrix.clone();
        expected.slice_mut(layout).assign(&written.into_dimensionality::<ndarray::Ix2>().unwrap());
        assert_eq!(target, expected);
    }
    let cube = sample_cube();
    let mut target = cube.clone();
    let before = cube.slice(s![..;-1, 1.., ..;-2]).permuted_axes([1, 2, 0]).to_owned().into_dyn();
    let mut twisted = target.slice_mut(s![..;-1, 1.., ..;-2]).permuted_axes([1, 2, 0]);
    let written = check_view_mut(AsViewMut::as_view_mut(&mut twisted), &before);
    assert_eq!(target.slice(s![..;-1, 1.., ..;-2]).permuted_axes([1, 2, 0]).into_dyn(), written);
}

#[test]
fn mutable_views_of_dynamic_rank_ndarrays() {
    let matrix = sample_matrix();
    let mut dynamic: ArrayD<i32> = matrix.clone().into_dyn();
    let view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut dynamic);
    let written = check_view_mut(view, &matrix.clone().into_dyn());
    assert_eq!(dynamic, written);
    let mut dynamic: ArrayD<i32> = matrix.clone().into_dyn();
    let mut stepped = dynamic.slice_mut(s![..;-1, ..;2]).into_dyn();
    let view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut stepped);
    let written = check_view_mut(view, &matrix.slice(s![..;-1, ..;2]).to_owned().into_dyn());
    assert_eq!(dynamic.slice(s![..;-1, ..;2]).into_dyn(), written);
    let message = expect_panic(move || {
        let _: ViewMut<'_, i32, 3> = AsViewMut::as_view_mut(&mut dynamic);
    });
    assert_eq!(message, "ein: an ndarray of dynamic rank with 2 axes was given where an array with 3 axes is expected");
    let mut scalar = ArrayD::from_elem(IxDyn(&[]), 7);
    let message = expect_panic(move || {
        let _: ViewMut<'_, i32, 1> = AsViewMut::as_view_mut(&mut scalar);
    });
    assert_eq!(message, "ein: an ndarray of dynamic rank with 0 axes was given where an array with 1 axis is expected");
}

#[test]
fn mutable_views_of_empty_and_rank_zero_arrays() {
    for shape in [(0, 3), (3, 0), (0, 0)] {
        let mut empty = Array2::<i32>::zeros(shape);
        let before = empty.clone().into_dyn();
        check_view_mut(AsViewMut::as_view_mut(&mut empty), &before);
        let mut view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut empty);
        assert_eq!(view.as_slice_mut().map(|elements| elements.len()), Some(0));
        check_view_mut(AsViewMut::as_view_mut(&mut empty.view_mut().reversed_axes()), &before.t().to_owned());
    }
    let mut scalar = arr0(42);
    let written = check_view_mut(AsViewMut::as_view_mut(&mut scalar), &arr0(42).into_dyn());
    assert_eq!(written, arr0(-43).into_dyn());
    assert_eq!(scalar.into_scalar(), -43);
    let mut dynamic_scalar = ArrayD::from_elem(IxDyn(&[]), 7);
    let mut view: ViewMut<'_, i32, 0> = AsViewMut::as_view_mut(&mut dynamic_scalar);
    assert_eq!(view.as_slice_mut(), Some(&mut [7][..]));
    view.assign(&View::from_slice(&[8], []));
    assert_eq!(dynamic_scalar[IxDyn(&[])], 8);
    let mut array = Array::from_vec([], vec![1.5]);
    array.view_mut().assign(&View::from_slice(&[2.5], []));
    assert_eq!(array.as_slice(), &[2.5]);
}

#[test]
fn mutable_views_from_raw_parts_and_slices() {
    let mut data: Vec<i32> = (0..12).collect();
    let expected = Array2::from_shape_vec((3, 4), data.clone()).unwrap();
    // SAFETY: a reversed-rows view of the 3 x 4 matrix; every index addresses its own element
    // of `data`, which nothing else touches while the view lives.
    let reversed = unsafe { ViewMut::from_raw_parts(data.as_mut_ptr().add(8), [3, 4], [-4, 1]) };
    let written = check_view_mut(reversed, &expected.slice(s![..;-1, ..]).to_owned().into_dyn());
    let stored = Array2::from_shape_vec((3, 4), data.clone()).unwrap();
    assert_eq!(stored.slice(s![..;-1, ..]).into_dyn(), written);
    assert_eq!(data[..4], [-1, -2, -3, -4]);
    let message = expect_panic(move || ViewMut::from_slice(&mut data, [5, 2]).shape());
    assert_eq!(message, "ein: a slice of 12 elements cannot be viewed with shape [5, 2]");
    let message = expect_panic(|| ViewMut::from_slice(&mut [1, 2], [usize::MAX, 2]).shape());
    assert!(message.starts_with("ein: a mutable view of shape [18446744073709551615, 2] would have more elements"));
}

#[test]
fn as_slice_mut_follows_the_contiguity_rules_of_as_slice() {
    /// A mutable view of `data` at `offset` with `shape` and `strides`, its slice if it has one,
    /// and whether `View::as_slice` agrees.
    fn slice_of<const N: usize>(
        data: &mut [i32],
        offset: usize,
        shape: [usize; N],
        strides: [isize; N],
    ) -> Option<Vec<i32>> {
        // SAFETY: every caller picks an offset, shape and strides whose in-range indices
        // address distinct elements of `data`.
        let mut view = unsafe { ViewMut::from_raw_parts(data.as_mut_ptr().add(offset), shape, strides) };
        let read = view.as_view().as_slice().map(<[i32]>::to_vec);
        let slice = view.as_slice_mut().map(|elements| {
            // Writes through the slice land in the view's elements.
            elements.iter_mut().for_each(|element| *element += 100);
            elements.to_vec()
        });
        assert_eq!(slice.is_some(), read.is_some());
        if let (Some(slice), Some(read)) = (&slice, &read) {
            assert_eq!(slice, &read.iter().map(|value| value + 100).collect::<Vec<_>>());
            assert_eq!(view.as_view().iter().collect::<Vec<_>>(), *slice);
        }
        // The consuming form agrees.
        assert_eq!(view.into_slice_mut().map(|elements| elements.to_vec()), slice);
        slice
    }
    let mut data: Vec<i32> = (0..24).collect();
    // Row-major over all or part of the data: a slice of the elements, in order.
    assert_eq!(slice_of(&mut data, 0, [2, 3, 4], [12, 4, 1]), Some((100..124).collect()));
    assert_eq!(slice_of(&mut data, 4, [2, 4], [4, 1]), Some((204..212).collect()));
    assert_eq!(data[..4], [100, 101, 102, 103]);
    assert_eq!(data[4..12], [204, 205, 206, 207, 208, 209, 210, 211]);
    let mut data: Vec<i32> = (0..24).collect();
    // Transposed, stepped, reversed, or rows with gaps: none.
    assert_eq!(slice_of(&mut data, 0, [4, 3], [1, 4]), None);
    assert_eq!(slice_of(&mut data, 0, [3, 4], [4, 2]), None);
    assert_eq!(slice_of(&mut data, 8, [3, 4], [-4, 1]), None);
    assert_eq!(slice_of(&mut data, 11, [12], [-1]), None);
    assert_eq!(slice_of(&mut data, 0, [3, 4], [8, 1]), None);
    assert_eq!(data, (0..24).collect::<Vec<_>>());
    // Axes of length 1 may have any stride...
    assert_eq!(slice_of(&mut data, 3, [1, 4], [999, 1]), Some(vec![103, 104, 105, 106]));
    assert_eq!(slice_of(&mut data, 10, [3, 1], [1, -7]), Some(vec![110, 111, 112]));
    assert_eq!(slice_of(&mut data, 20, [1, 1, 2, 1], [-5, 3, 1, 0]), Some(vec![120, 121]));
    // ...but a column of a wider matrix is still strided.
    assert_eq!(slice_of(&mut data, 0, [3, 1], [4, 1]), None);
    // Empty views are always slices, whatever their strides.
    assert_eq!(slice_of(&mut data, 0, [0, 3], [-5, 7]), Some(vec![]));
    assert_eq!(slice_of(&mut data, 0, [4, 0], [1, 4]), Some(vec![]));
    // Rank 0 is its one element.
    assert_eq!(slice_of(&mut data, 23, [], []), Some(vec![123]));
    // The same through ndarray storage.
    let mut matrix = sample_matrix();
    let mut view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut matrix);
    assert_eq!(view.as_slice_mut().map(|elements| elements.len()), Some(20));
    let mut row = matrix.slice_mut(s![2..3, ..]);
    let mut view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut row);
    assert_eq!(view.as_slice_mut().map(|elements| elements.to_vec()), Some(vec![20, 21, 22, 23]));
    let mut column = matrix.slice_mut(s![.., 1..2]);
    assert!(AsViewMut::<i32, 2>::as_view_mut(&mut column).as_slice_mut().is_none());
    let mut vector = arr1(&[1, 2, 3]).insert_axis(Axis(1));
    let mut view: ViewMut<'_, i32, 2> = AsViewMut::as_view_mut(&mut vector);
    assert_eq!(view.shape(), [3, 1]);
    assert_eq!(view.as_slice_mut().map(|elements| elements.to_vec()), Some(vec![1, 2, 3]));
}

/// A rank-2 layout of a 3 x 4 matrix in a backing store: the store's length, the position of
/// element [0, 0] in it, and the strides.
#[derive(Clone, Copy, Debug)]
struct Layout {
    len: usize,
    origin: usize,
    strides: [isize; 2],
}

impl Layout {
    /// The store position of element `[row, column]`.
    fn position(self, row: usize, column: usize) -> usize {
        (self.origin as isize + row as isize * self.strides[0] + column as isize * self.strides[1]) as usize
    }
}

/// Every layout `assign` must handle, for a 3 x 4 matrix: row-major, transposed, reversed on
/// either or both axes, stepped with gaps, and stepped, reversed and transposed at once.
const LAYOUTS: [Layout; 7] = [
    Layout { len: 12, origin: 0, strides: [4, 1] },
    Layout { len: 12, origin: 0, strides: [1, 3] },
    Layout { len: 12, origin: 8, strides: [-4, 1] },
    Layout { len: 12, origin: 3, strides: [4, -1] },
    Layout { len: 12, origin: 11, strides: [-4, -1] },
    Layout { len: 24, origin: 1, strides: [8, 2] },
    Layout { len: 24, origin: 18, strides: [2, -6] },
];

#[test]
fn assign_copies_between_every_pair_of_layouts() {
    const UNTOUCHED: i32 = -7;
    let value = |row: usize, column: usize| (row * 100 + column + 1) as i32;
    for source_layout in LAYOUTS {
        let mut source_store = vec![-1; source_layout.len];
        for (row, column) in (0..3).flat_map(|row| (0..4).map(move |column| (row, column))) {
            source_store[source_layout.position(row, column)] = value(row, column);
        }
        // SAFETY: every layout's in-range indices address distinct positions of its store.
        let source = unsafe {
            View::from_raw_parts(source_store.as_ptr().add(source_layout.origin), [3, 4], source_layout.strides)
        };
        for target_layout in LAYOUTS {
            let mut target_store = vec![UNTOUCHED; target_layout.len];
            // SAFETY: as above; nothing else touches `target_store` while the view lives.
            let mut target = unsafe {
                ViewMut::from_raw_parts(
                    target_store.as_mut_ptr().add(target_layout.origin),
                    [3, 4],
                    target_layout.strides,
                )
            };
            target.assign(&source);
            let mut expected = vec![UNTOUCHED; target_layout.len];
            for (row, column) in (0..3).flat_map(|row| (0..4).map(move |column| (row, column))) {
                expected[target_layout.position(row, column)] = value(row, column);
            }
            assert_eq!(target_store, expected, "from {source_layout:?} into {target_layout:?}");
        }
    }
}

#[test]
fn assign_handles_rank_one_zero_and_empty_views_and_rejects_other_shapes() {
    let data = [1, 2, 3, 4, 5, 6];
    // SAFETY: every other element, backwards.
    let reversed_odd = unsafe { View::from_raw_parts(data.as_ptr().add(5), [3], [-2]) };
    let mut target = [0; 3];
    ViewMut::from_slice(&mut target, [3]).assign(&reversed_odd);
    assert_eq!(target, [6, 4, 2]);
    let mut spaced = [0; 5];
    // SAFETY: elements 0, 2 and 4 of `spaced`.
    unsafe { ViewMut::from_raw_parts(spaced.as_mut_ptr(), [3], [2]) }.assign(&View::from_slice(&data[..3], [3]));
    assert_eq!(spaced, [1, 0, 2, 0, 3]);
    let mut scalar = [0];
    ViewMut::from_slice(&mut scalar, []).assign(&View::from_slice(&data[4..5], []));
    assert_eq!(scalar, [5]);
    let mut nothing: [i32; 0] = [];
    // SAFETY: an empty view addresses no element.
    unsafe { ViewMut::from_raw_parts(nothing.as_mut_ptr(), [0, 4], [1, -3]) }.assign(&View::from_slice(&[], [0, 4]));
    let message = expect_panic(|| {
        let mut target = [0; 6];
        ViewMut::from_slice(&mut target, [3, 2]).assign(&View::from_slice(&data, [2, 3]));
    });
    assert_eq!(
        message,
        "ein: internal error: a view of shape [2, 3] assigned to a mutable view of shape [3, 2] (this is a bug in ein; please report it)"
    );
}

#[test]
fn mutable_views_are_send_and_sync_and_debug() {
    fn assert_send_sync<X: Send + Sync>(_: &X) {}
    let mut data = [1.0f32, 2.0, 3.0, 4.0];
    let view = ViewMut::from_slice(&mut data, [2, 2]);
    assert_send_sync(&view);
    assert_eq!(format!("{view:?}"), "ViewMut { shape: [2, 2], strides: [2, 1], elements: [[1.0, 2.0], [3.0, 4.0]] }");
}

/// ndarray's rule, at every door a shape comes in by: the product of the non-zero lengths is
/// at most isize::MAX. Before it, `[1 << 63, 0]` passed (0 elements), and gave a size of
/// -2^63 as an i64 and loops of 2^63 steps.
#[test]
fn shapes_whose_non_zero_lengths_multiply_past_isize_max_are_refused_where_they_enter() {
    let rule =
        "would have more elements than memory can address (the product of its non-zero lengths exceeds isize::MAX)";
    let message = expect_panic(|| Array::<i32, 2>::from_vec([1 << 63, 0], Vec::new()));
    assert_eq!(message, format!("ein: an array of shape [9223372036854775808, 0] {rule}"));
    let message = expect_panic(|| View::<i32, 2>::from_slice(&[], [1 << 63, 0]));
    assert_eq!(message, format!("ein: a view of shape [9223372036854775808, 0] {rule}"));
    let message = expect_panic(|| ViewMut::<i32, 3>::from_slice(&mut [], [0, 1 << 32, 1 << 31]).shape());
    assert_eq!(message, format!("ein: a mutable view of shape [0, 4294967296, 2147483648] {rule}"));
    // Through AsView and AsViewMut: a Vec of zero-sized elements may be longer than isize::MAX.
    let mut units = vec![(); usize::MAX];
    let message = expect_panic(|| AsView::<(), 1>::as_view(&units).shape());
    assert_eq!(message, format!("ein: a view of shape [18446744073709551615] {rule}"));
    let message = expect_panic(std::panic::AssertUnwindSafe(|| AsViewMut::<(), 1>::as_view_mut(&mut units).shape()));
    assert_eq!(message, format!("ein: a mutable view of shape [18446744073709551615] {rule}"));
    // At the limit: fine, and the size of the long axis is exact as an i64.
    let view = View::<i32, 2>::from_slice(&[], [isize::MAX as usize, 0]);
    assert_eq!(view.size(0), i64::MAX);
    assert_eq!((view.element_count(), view.iter().count(), view.as_slice()), (0, 0, Some(&[][..])));
    assert_eq!(Array::<i32, 3>::from_vec([0, 1 << 31, 1 << 31], Vec::new()).shape(), [0, 1 << 31, 1 << 31]);
    let units = vec![(); isize::MAX as usize];
    assert_eq!(AsView::<(), 1>::as_view(&units).size(0), i64::MAX);
}

#[test]
#[cfg_attr(miri, ignore = "an allocation Miri cannot make stops Miri instead of failing")]
fn copying_a_broadcast_view_larger_than_memory_panics_instead_of_aborting() {
    let one = [7i64];
    // SAFETY: zero strides: every in-range index addresses `one[0]`; 2^62 elements obey the rule.
    let view = unsafe { View::from_raw_parts(one.as_ptr(), [1 << 31, 1 << 31], [0, 0]) };
    assert_eq!(view.get([(1 << 31) - 1, 5]), Some(7));
    assert_eq!(view.iter().size_hint(), (1 << 62, Some(1 << 62)));
    let message = expect_panic(|| view.to_array());
    assert!(message.starts_with("ein: cannot allocate 4611686018427387904 elements"), "{message}");
}

/// The checked build (`--cfg ein_checked`) turns an out-of-range unchecked read, undefined
/// behaviour otherwise, into a panic naming the index and the shape.
#[cfg(ein_checked)]
#[test]
fn the_checked_build_checks_unchecked_reads() {
    let data = [1, 2, 3, 4, 5, 6];
    let view = View::from_slice(&data, [2, 3]);
    // SAFETY: out of range on purpose: the checked build panics before reading.
    let message = expect_panic(|| unsafe { view.get_unchecked([1, 3]) });
    assert_eq!(message, "ein: checked build: index [1, 3] is out of range for a view of shape [2, 3]");
    // SAFETY: as above.
    let message = expect_panic(|| unsafe { view.sub_unchecked::<1, 1>([2]) });
    assert_eq!(message, "ein: checked build: sub-view index [2] is out of range for a view of shape [2, 3]");
    // SAFETY: in range: no panic.
    assert_eq!(unsafe { view.get_unchecked([1, 2]) }, 6);
}

#[test]
fn a_tape_keeps_its_states_in_order_and_refuses_a_changed_shape() {
    let site = crate::errors::Site { file: "tape.ein", line: 3, column: 7 };
    let first = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let initial = View::from_slice(&first, [2, 3]);
    let mut tape = crate::tape::Tape::new(&initial, 2);
    tape.push(&initial, &site);
    // A transposed (strided) state of the same shape is copied row-major.
    let second = [10.0f32, 40.0, 20.0, 50.0, 30.0, 60.0];
    let columns = View::from_slice(&second, [3, 2]);
    // SAFETY: the transpose of a 3 × 2 row-major view addresses the same six elements.
    let transposed = unsafe { View::from_raw_parts(second.as_ptr(), [2, 3], [1, 2]) };
    assert_eq!(columns.element_count(), transposed.element_count());
    tape.push(&transposed, &site);
    let states = tape.finish::<3>();
    assert_eq!(states.shape(), [2, 2, 3]);
    assert_eq!(states.as_slice(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
    // A state of another shape: a panic naming both shapes and the site.
    let mut tape = crate::tape::Tape::new(&initial, 2);
    let message = expect_panic(|| tape.push(&columns, &site));
    assert!(message.contains("changed shape from [2, 3] to [3, 2]"), "{message}");
    assert!(message.contains("tape.ein:3:7"), "{message}");
}

/// The serial loop of `h = [1, 10]; for i in 0..3 { h[i % 2] *= 2; h[0] += i }` as a history's
/// body: two updates per iteration.
fn history_body(
    reversed: bool,
) -> impl FnOnce(&mut [f64], &mut Vec<f64>, &mut [usize]) -> Result<(), crate::accum::AccumError> {
    move |data, found, sizes| {
        sizes[0] = 3;
        let iterations: Vec<usize> = if reversed { (0..3).rev().collect() } else { (0..3).collect() };
        for i in iterations {
            let updates = [(i % 2, true), (0, false)];
            let order: Vec<&(usize, bool)> =
                if reversed { updates.iter().rev().collect() } else { updates.iter().collect() };
            for &(at, multiply) in order {
                let position = crate::accum::accum_position(at as i64, data.len(), 0)?;
                found.push(data[position]);
                if multiply {
                    data[position] *= 2.0;
                } else {
                    data[position] += i as f64;
                }
            }
        }
        Ok(())
    }
}

#[test]
fn an_accum_history_records_what_each_update_found_in_forward_order() {
    let site = crate::errors::Site { file: "history.ein", line: 1, column: 1 };
    let start = || Array::from_vec([2], vec![1.0f64, 10.0]);
    let forward: Array<f64, 2> = crate::accum::accum_history(start(), "h", &site, false, 2, history_body(false));
    assert_eq!(forward.shape(), [3, 2]);
    // h0: 1 → ·2 = 2 → +0 = 2 → (i = 1: h1 10 → 20) +1 = 3 → ·2 = 6 → +2.
    assert_eq!(forward.as_slice(), &[1.0, 2.0, 10.0, 2.0, 3.0, 6.0]);
    // Backwards: (i = 2: +2 finds 1, ·2 finds 3), (i = 1: +1 finds 6, h1 ·2 finds 10), (i = 0:
    // +0 finds 7, ·2 finds 7), laid out by iteration and update in the forward order.
    let backward: Array<f64, 2> = crate::accum::accum_history(start(), "h", &site, true, 2, history_body(true));
    assert_eq!(backward.shape(), [3, 2]);
    assert_eq!(backward.as_slice(), &[7.0, 7.0, 10.0, 6.0, 3.0, 1.0]);
    // An update out of range: a panic naming the target and the site.
    let message = expect_panic(|| {
        crate::accum::accum_history::<f64, 1, 2>(
            Array::from_vec([1], vec![1.0]),
            "h",
            &site,
            false,
            2,
            history_body(false),
        )
    });
    assert!(message.contains("out of range for axis 0 of `h` (size 1)"), "{message}");
    assert!(message.contains("history.ein:1:1"), "{message}");
}

#[test]
fn flat_tail_runs_contiguous_trailing_axes_and_rejects_other_layouts() {
    let data: Vec<i32> = (0..24).collect();
    let array = Array3::from_shape_vec((2, 3, 4), data).unwrap();
    let tail = |view: View<'_, i32, 3>, lens: [usize; 2]| {
        let flat = view.flat_tail(lens)?;
        assert_eq!(flat.shape(), [view.shape()[0], 1, lens[0] * lens[1]]);
        let rows = (0..flat.shape()[0]).map(|p| (0..flat.shape()[2]).map(move |k| (p, k)));
        Some(rows.flatten().map(|(p, k)| flat.get([p, 0, k]).expect("in range")).collect::<Vec<i32>>())
    };
    let view = AsView::<i32, 3>::as_view(&array);
    assert_eq!(tail(view, [3, 4]), Some((0..24).collect()));
    assert_eq!(tail(view, [4, 3]), None, "other lengths");
    // Rows of a sliced array: the tail of each is contiguous, the leading axis strided.
    let cut = array.slice(s![..;-1, .., ..]);
    assert_eq!(tail(AsView::<i32, 3>::as_view(&cut), [3, 4]), Some((12..24).chain(0..12).collect()));
    let narrow = array.slice(s![.., .., 1..3]);
    assert_eq!(tail(AsView::<i32, 3>::as_view(&narrow), [3, 2]), None, "rows 4 apart hold 2 each");
    let swapped = array.view().permuted_axes([0, 2, 1]);
    assert_eq!(tail(AsView::<i32, 3>::as_view(&swapped), [4, 3]), None);
    // An axis of length 1 may have any stride; an empty tail has no elements whatever the strides.
    let single = array.slice(s![.., 1..2, ..]);
    assert_eq!(tail(AsView::<i32, 3>::as_view(&single), [1, 4]), Some(vec![4, 5, 6, 7, 16, 17, 18, 19]));
    let empty = array.slice(s![.., 0..0, ..;2]);
    assert_eq!(tail(AsView::<i32, 3>::as_view(&empty), [0, 2]), Some(Vec::new()));
    let unit = view.unit_inner().expect("contiguous").flat_tail([3, 4]).expect("contiguous tail");
    // SAFETY: [1, 0, 11] is in range of the shape [2, 1, 12].
    assert_eq!(unsafe { unit.get_unchecked([1, 0, 11]) }, 23);
    assert!(view.flat_tail([2, 3, 4]).is_some() && view.flat_tail([]).is_none());
}

#[test]
fn layouts_name_the_contiguous_axis_and_swapped_stacks_read_back() {
    use crate::view::{columns_first, stacked_columns_first, Layout};
    let stack = Array3::from_shape_fn((2, 3, 4), |(c, i, j)| (c * 100 + i * 10 + j) as i32);
    let layout = |view: ndarray::ArrayView3<'_, i32>| AsView::<i32, 3>::as_view(&view).layout();
    assert_eq!(layout(stack.view()), Layout::Rows);
    assert_eq!(layout(stack.view().reversed_axes()), Layout::Columns);
    let transposes = stack.view().permuted_axes([0, 2, 1]);
    assert_eq!(layout(transposes), Layout::StackedColumns);
    // One matrix of a stack is still a stack, and so are every other row of each; every
    // other column (the contiguous axis, stepped) is not.
    assert_eq!(layout(stack.slice(s![..1, .., ..]).permuted_axes([0, 2, 1])), Layout::StackedColumns);
    assert_eq!(layout(stack.slice(s![.., ..;2, ..]).permuted_axes([0, 2, 1])), Layout::StackedColumns);
    assert_eq!(layout(stack.slice(s![.., .., ..;2]).permuted_axes([0, 2, 1])), Layout::Other);
    // A matrix never is one.
    let matrix = Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as i32);
    assert_eq!(AsView::<i32, 2>::as_view(&matrix.t()).layout(), Layout::Columns);
    assert!(stacked_columns_first(&[Layout::StackedColumns, Layout::Other]));
    assert!(!stacked_columns_first(&[Layout::StackedColumns, Layout::Rows]));
    assert!(!columns_first(&[Layout::StackedColumns]));
    // Swapped back, the stack is row-major and reads the same elements.
    let swapped = AsView::<i32, 3>::as_view(&transposes).swapped_last_axes();
    assert_eq!(swapped.layout(), Layout::Rows);
    check_view(swapped, stack.view().into_dyn());
    check_view(AsView::<i32, 1>::as_view(&[1, 2][..]).swapped_last_axes(), arr1(&[1, 2]).view().into_dyn());
}
