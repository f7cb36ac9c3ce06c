//! Inputs of every supported storage type — `Vec`, slices, Rust arrays, `ein::Array`,
//! `ein::View`, owned and fixed-rank ndarray arrays — in both forms, checked against the
//! interpreter (the layouts of ndarray views are covered by every differential test).

use crate::harness::{Form, LayoutPlan, NamedValue, Oracle};
use ein_core::interp::{ArrayValue, Value};
use ein_core::ops::Scalar;

program! {
    weighted: fn(a: [[f64]], w: [f64], scale: f64) -> [f64] {
        for i { sum j { a[i, j] * w[j] } * scale }
    }
}

fn vector_value(values: &[f64]) -> Value {
    Value::Array(ArrayValue::vector(values.iter().map(|&x| Value::F64(x)).collect()))
}

fn matrix_value(rows: usize, cols: usize, values: &[f64]) -> Value {
    Value::Array(ArrayValue::from_fn([rows, cols], |index| Value::F64(values[index[0] * cols + index[1]])))
}

#[test]
fn item_form_accepts_every_storage() {
    let oracle = Oracle::new("item_form_accepts_every_storage", weighted::SOURCE, Form::Item);
    let data: Vec<f64> = (0..12).map(|k| f64::from(k) * 0.25 - 1.0).collect();
    let weights = [0.5, -1.0, 2.0, 0.25];
    let einarray = ein::Array::from_vec([3, 4], data.clone());
    let fixed = ndarray::Array2::from_shape_vec((3, 4), data.clone()).expect("3 × 4");
    let inputs = || {
        vec![
            NamedValue::new("a", matrix_value(3, 4, &data), Scalar::F64),
            NamedValue::new("w", vector_value(&weights), Scalar::F64),
            NamedValue::new("scale", Value::F64(1.5), Scalar::F64),
        ]
    };
    let trial = oracle.start(0, &[("rows", 3), ("cols", 4)], LayoutPlan::Uniform(crate::harness::Layout::Standard));
    let weights_vec = weights.to_vec();
    trial.check(trial.compiled(|| weighted::run(&einarray, &weights_vec, 1.5)), inputs());
    trial.check(trial.compiled(|| weighted::run(&einarray.view(), &weights[..], 1.5)), inputs());
    trial.check(trial.compiled(|| weighted::run(&fixed, &weights, 1.5)), inputs());
    trial.check(trial.compiled(|| weighted::run(&fixed.view(), &ndarray::arr1(&weights), 1.5)), inputs());
    // Transposed twice is the original again, through a non-standard layout.
    let transposed = ndarray::Array2::from_shape_vec((4, 3), data.clone()).expect("4 × 3");
    let a_from_columns = transposed.t();
    let columns_value = Value::Array(ArrayValue::from_fn([3, 4], |index| Value::F64(data[index[1] * 3 + index[0]])));
    trial.check(
        trial.compiled(|| weighted::run(&a_from_columns, &weights_vec, 1.5)),
        vec![
            NamedValue::new("a", columns_value, Scalar::F64),
            NamedValue::new("w", vector_value(&weights), Scalar::F64),
            NamedValue::new("scale", Value::F64(1.5), Scalar::F64),
        ],
    );
    oracle.finish(1);
}

#[test]
fn expression_form_captures_every_storage() {
    let source = stringify!(for i { sum j { a[i, j] * w[j] } * scale });
    let oracle = Oracle::new("expression_form_captures_every_storage", source, Form::Expression);
    let data: Vec<f32> = (0..12).map(|k| k as f32 * 0.25 - 1.0).collect();
    let weights = vec![0.5f32, -1.0, 2.0, 0.25];
    let scale = 1.5f32;
    let inputs = || {
        vec![
            NamedValue::new(
                "a",
                Value::Array(ArrayValue::from_fn([3, 4], |index| Value::F32(data[index[0] * 4 + index[1]]))),
                Scalar::F32,
            ),
            NamedValue::new(
                "w",
                Value::Array(ArrayValue::vector(weights.iter().map(|&x| Value::F32(x)).collect())),
                Scalar::F32,
            ),
            NamedValue::new("scale", Value::F32(scale), Scalar::F32),
        ]
    };
    let trial = oracle.start(0, &[("rows", 3), ("cols", 4)], LayoutPlan::Uniform(crate::harness::Layout::Standard));
    {
        let a = ein::Array::from_vec([3, 4], data.clone());
        let w = &weights;
        trial.check(trial.compiled(|| ein::ein!(for i { sum j { a[i, j] * w[j] } * scale })), inputs());
    }
    {
        let a = ndarray::Array2::from_shape_vec((3, 4), data.clone()).expect("3 × 4");
        let w = &weights[..];
        trial.check(trial.compiled(|| ein::ein!(for i { sum j { a[i, j] * w[j] } * scale })), inputs());
    }
    {
        let owned = ein::Array::from_vec([3, 4], data.clone());
        let a = owned.view();
        let w = [0.5f32, -1.0, 2.0, 0.25];
        trial.check(trial.compiled(|| ein::ein!(for i { sum j { a[i, j] * w[j] } * scale })), inputs());
    }
    oracle.finish(1);
}
