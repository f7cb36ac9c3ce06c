//! Tests of views, arrays and `AsView` against ndarray's own indexing, over every storage and
//! stride pattern ein accepts: contiguous, transposed, stepped, reversed, broadcast (zero
//! stride), dynamic rank, empty and rank 0.

use ndarray::{arr0, arr1, s, Array2, Array3, ArrayD, ArrayViewD, Axis, Dimension, IxDyn};

use crate::test_support::panic_message;
use crate::{Array, AsView, View};

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
    let message = panic_message(|| {
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
    let message = panic_message(|| View::from_slice(&data, [5, 2]));
    assert_eq!(message, "ein: a slice of 12 elements cannot be viewed with shape [5, 2]");
    let message = panic_message(|| View::from_slice(&data, [usize::MAX, 2]));
    assert!(message.starts_with("ein: a slice of 12 elements"));
}

#[test]
fn sub_unchecked_asserts_ranks() {
    let data = [1, 2, 3, 4];
    let view = View::from_slice(&data, [2, 2]);
    // SAFETY: index in range; only the rank is wrong.
    let message = panic_message(|| unsafe { view.sub_unchecked::<1, 2>([0]) });
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
    assert_eq!(panic_message(|| array[[0, 3]]), "ein: index [0, 3] is out of bounds for an array of shape [2, 3]");
    assert_eq!(
        panic_message(|| Array::from_vec([2, 2], vec![1, 2, 3])),
        "ein: 3 elements cannot form an array of shape [2, 2]"
    );
    assert!(panic_message(|| Array::from_vec([], vec![1]).len()).starts_with("ein: a rank-0 array"));
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
fn unit_inner_keeps_every_element_and_rejects_strided_last_axes() {
    let data: Vec<i32> = (0..24).collect();
    let matrix = Array3::from_shape_vec((2, 3, 4), data).unwrap();
    let contiguous = AsView::<i32, 3>::as_view(&matrix);
    let unit = contiguous.unit_inner().expect("a contiguous view");
    check_view(unit, matrix.view().into_dyn());
    // Only the last axis matters: a transposed outer pair keeps it contiguous.
    let swapped = matrix.view().permuted_axes([1, 0, 2]);
    let unit = AsView::<i32, 3>::as_view(&swapped).unit_inner().expect("last axis still contiguous");
    assert_eq!(unit.strides()[2], 1);
    check_view(unit, swapped.view().into_dyn());
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
    check_view(unit, single.view().into_dyn());
    let empty = matrix.slice(s![.., .., 0..0;3]);
    let unit = AsView::<i32, 3>::as_view(&empty).unit_inner().expect("length 0");
    check_view(unit, empty.view().into_dyn());
    let scalar = arr0(9);
    let unit = AsView::<i32, 0>::as_view(&scalar).unit_inner().expect("rank 0");
    assert_eq!(unit.get([]), Some(9));
}
