//! Code shaped like what the `ein!` code generator emits, to prove that the runtime's
//! signatures let rustc infer element types and closure signatures without annotations.

use ein_runtime::private as __private;

#[test]
fn buffer_element_type_is_inferred_from_pushes() {
    let a = vec![1.0f32, 2.0, 3.0];
    let result = {
        let a_view = __private::AsView::as_view(&a);
        let n = a_view.len_of(0);
        let mut buffer = __private::Buffer::new(n);
        __private::fill_chunks(&mut buffer, n, 1, 1, 1, |start, end, out| {
            __private::Fill::fill(out, end - start, |position, slot| {
                let i = (start + position) as i64;
                // SAFETY: i < n.
                let x = unsafe { a_view.get_unchecked([i as usize]) };
                __private::Push::push(slot, __private::Num::mul(x, x));
            });
        });
        buffer.into_array([n])
    };
    assert_eq!(result.as_slice(), &[1.0, 4.0, 9.0]);
}

#[test]
fn tuple_buffers_with_inferred_types() {
    let a = ndarray::arr2(&[[1i64, 5, 3], [7, 2, 9]]);
    let (maxima, positions) = {
        let a_view = __private::AsView::as_view(&a);
        let rows = a_view.len_of(0);
        let mut columns = (__private::Buffer::new(rows), __private::Buffer::new(rows));
        __private::fill_chunks(&mut columns, rows, 1, 1, a_view.len_of(1), |start, end, outs| {
            for i in start..end {
                // SAFETY: i < rows.
                let row: __private::View<'_, _, 1> = unsafe { a_view.sub_unchecked([i]) };
                let marker = __private::marker_of_view(&row);
                let best = __private::reduce(
                    row.len_of(0),
                    |start, end| {
                        let mut best = (__private::lowest(marker), usize::MAX);
                        for k in start..end {
                            // SAFETY: k < len.
                            let value = unsafe { row.get_unchecked([k]) };
                            if value > best.0 {
                                best = (value, k);
                            }
                        }
                        best
                    },
                    |left, right| if right.0 > left.0 { right } else { left },
                );
                __private::Push::push(outs, best);
            }
        });
        let (maxima, positions) = columns;
        (maxima.into_array([rows]), positions.into_array([rows]))
    };
    assert_eq!(maxima.as_slice(), &[5, 9]);
    assert_eq!(positions.as_slice(), &[1, 2]);
}

#[test]
fn copy_into_with_inferred_types() {
    let a = ndarray::arr2(&[[1i32, 2], [3, 4]]);
    let transposed = a.t();
    let result = {
        let view = __private::AsView::as_view(&transposed);
        let mut buffer = __private::Buffer::new(4);
        __private::fill_chunks(&mut buffer, 1, 4, 1, 4, |_, _, out| {
            __private::CopyInto::copy_into(&view, out);
        });
        buffer.into_array(view.shape())
    };
    assert_eq!(result.as_slice(), &[1, 3, 2, 4]);
}

#[test]
fn sizes_and_sites() {
    let n: u32 = 3;
    let site = __private::Site { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() };
    let size = __private::check_size(__private::IntoSize::into_size(n), "i", &site);
    assert_eq!(size, 3);
    let index = __private::clamp_index(size as i64, size, "a", 0, &site);
    assert_eq!(index, 2);
    let cast: f64 = __private::CastTo::cast_to(index);
    assert_eq!(cast, 2.0);
    let total = __private::reduce(
        size,
        |start, end| (start..end).fold(0.0f64, |sum, k| sum + __private::Float::sqrt(k as f64)),
        |l, r| l + r,
    );
    assert!(total > 2.4);
}

#[test]
fn lane_reductions_infer_their_types() {
    let a = vec![1.5f32, 2.5, 3.0];
    let view = __private::AsView::as_view(&a);
    let marker = __private::marker_of_view(&view);
    let total = __private::reduce(
        view.len_of(0),
        |start, end| {
            __private::Accumulate::fold_range(end - start, __private::zero(marker), __private::Num::add, |step| {
                // SAFETY: start + step < end <= len.
                unsafe { view.get_unchecked([start + step]) }
            })
        },
        __private::Num::add,
    );
    assert_eq!(total, 7.0);
    let best = __private::Accumulate::fold_range(view.len_of(0), __private::lowest(marker), __private::Num::max, |k| {
        // SAFETY: k < len.
        unsafe { view.get_unchecked([k]) }
    });
    assert_eq!(best, 3.0);
    let unit = view.unit_inner();
    assert!(unit.is_some());
}
