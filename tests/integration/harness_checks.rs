//! Tests of the test harness itself: the layouts really have the strides they promise, and a
//! disagreement of any kind (values, shapes, structure, errors) really fails a run.

use crate::harness::{
    array, catch_quietly, error_kind, strip_site, structure_of_arrays_to_value, Form, Layout, LayoutPlan, Oracle,
};
use ein_core::interp::{ArrayValue, Value};
use ein_core::ir::Type;
use ein_core::ops::Scalar;

const DOUBLE: &str = "fn run(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] * 2.0 } }";

/// Instantiates `a: [2, 3]` under `plan` and returns its strides and its interpreter value.
fn strides_under(plan: LayoutPlan) -> (Vec<isize>, Vec<usize>) {
    let oracle = Oracle::new("strides", DOUBLE, Form::Item);
    let mut trial = oracle.start(0, &[("m", 2), ("n", 3)], plan);
    let input = array::<f64>([2, 3]).instantiate(&mut trial, "a");
    let arg = input.arg();
    (arg.pass().strides().to_vec(), arg.pass().shape().to_vec())
}

#[test]
fn layouts_have_the_promised_strides() {
    assert_eq!(strides_under(LayoutPlan::Uniform(Layout::Standard)), (vec![3, 1], vec![2, 3]));
    assert_eq!(strides_under(LayoutPlan::Uniform(Layout::Transposed)), (vec![1, 2], vec![2, 3]));
    assert_eq!(strides_under(LayoutPlan::Uniform(Layout::Stepped)), (vec![12, 2], vec![2, 3]));
    assert_eq!(strides_under(LayoutPlan::Uniform(Layout::Reversed)), (vec![-3, -1], vec![2, 3]));
    // The mixed plan with offset 4 gives the first argument the broadcast layout.
    assert_eq!(strides_under(LayoutPlan::Mixed(4)), (vec![0, 1], vec![2, 3]));
    // A stack of transposes: a transposed matrix, and from rank 3 on only the last two axes
    // swapped; odd cases run it in place of every axis reversed.
    assert_eq!(strides_under(LayoutPlan::Uniform(Layout::StackTransposed)), (vec![1, 2], vec![2, 3]));
    let oracle = Oracle::new("strides", "fn run(a: [[[f64]]]) -> [[[f64]]] { for c, i, j { a[c, i, j] } }", Form::Item);
    let mut trial = oracle.start(0, &[("m", 2)], LayoutPlan::Uniform(Layout::StackTransposed));
    let input = array::<f64>([2, 3, 4]).instantiate(&mut trial, "a");
    assert_eq!((input.arg().pass().strides(), input.arg().pass().shape()), (&[12, 1, 3][..], &[2, 3, 4][..]));
    assert!(LayoutPlan::all(1).contains(&LayoutPlan::Uniform(Layout::StackTransposed)));
    assert!(LayoutPlan::all(2).contains(&LayoutPlan::Uniform(Layout::Transposed)));
}

/// Runs the interpreter's check on `outcome` for `a` = a random 2 × 3 array and returns the
/// failure message (or None if the check passed).
fn failure_of(source: &str, outcome: impl FnOnce(&Value) -> Result<Value, String>) -> Option<String> {
    let oracle = Oracle::new("harness_self_test", source, Form::Item);
    let mut trial = oracle.start(0, &[("m", 2), ("n", 3)], LayoutPlan::Uniform(Layout::Standard));
    let input = array::<f64>([2, 3]).instantiate(&mut trial, "a");
    let arg = input.arg();
    let named = arg.input();
    let value = crate::harness::view_to_value(arg.pass());
    let outcome = outcome(&value);
    catch_quietly(|| trial.check(outcome, vec![named])).err()
}

fn doubled(value: &Value) -> Value {
    match value {
        Value::Array(array) => Value::Array(ArrayValue {
            shape: array.shape.clone(),
            elements: array
                .elements
                .iter()
                .map(|element| match element {
                    Value::F64(x) => Value::F64(x * 2.0),
                    other => other.clone(),
                })
                .collect(),
        }),
        other => other.clone(),
    }
}

#[test]
fn agreement_passes() {
    assert_eq!(failure_of(DOUBLE, |value| Ok(doubled(value))), None);
}

#[test]
fn a_wrong_element_fails() {
    let failure = failure_of(DOUBLE, |value| {
        let mut wrong = doubled(value);
        if let Value::Array(array) = &mut wrong {
            array.elements[4] = Value::F64(1.0e-6 + if let Value::F64(x) = array.elements[4] { x } else { 0.0 });
        }
        Ok(wrong)
    });
    let failure = failure.expect("a difference of 1e-6 must fail at f64 tolerance");
    assert!(failure.contains("element [1, 1]") && failure.contains("seed"), "{failure}");
}

#[test]
fn a_wrong_shape_fails() {
    let failure = failure_of(DOUBLE, |value| match doubled(value) {
        Value::Array(array) => Ok(Value::Array(ArrayValue { shape: vec![3, 2], elements: array.elements })),
        other => Ok(other),
    });
    assert!(failure.expect("must fail").contains("shapes differ"));
}

#[test]
fn a_compiled_panic_or_an_interpreter_error_alone_fails() {
    let failure = failure_of(DOUBLE, |_| Err("ein: read from empty axis 0 of `a` (at x.rs:1:1)".to_string()));
    assert!(failure.expect("must fail").contains("the compiled code panicked"));
    // An empty read happens in the interpreter (a clamped read of an empty axis), but the
    // "compiled" side returns a value.
    let oracle =
        Oracle::new("harness_self_test", "fn run(a: [f64], n: usize) -> [f64] { for i in 0..n { a[i] } }", Form::Item);
    let trial = oracle.start(0, &[], LayoutPlan::Uniform(Layout::Standard));
    let inputs = vec![
        crate::harness::NamedValue::new("a", Value::Array(ArrayValue::vector(Vec::new())), Scalar::F64),
        crate::harness::NamedValue::new("n", Value::Usize(1), Scalar::Usize),
    ];
    let outcome = Ok(Value::Array(ArrayValue::vector(vec![Value::F64(0.0)])));
    let failure = catch_quietly(|| trial.check(outcome, inputs)).err();
    assert!(failure.expect("must fail").contains("the interpreter fails"));
}

#[test]
fn different_errors_fail_and_equal_ones_pass() {
    let oracle =
        Oracle::new("harness_self_test", "fn run(a: [f64], n: usize) -> [f64] { for i in 0..n { a[i] } }", Form::Item);
    let trial = oracle.start(0, &[], LayoutPlan::Uniform(Layout::Standard));
    let inputs = || {
        vec![
            crate::harness::NamedValue::new("a", Value::Array(ArrayValue::vector(Vec::new())), Scalar::F64),
            crate::harness::NamedValue::new("n", Value::Usize(1), Scalar::Usize),
        ]
    };
    let same = Err("ein: read from empty axis 0 of `a` (at tests/x.rs:3:4)".to_string());
    assert_eq!(catch_quietly(|| trial.check(same, inputs())).err(), None);
    let other = Err("ein: integer division by zero".to_string());
    assert!(catch_quietly(|| trial.check(other, inputs())).is_err());
    let not_ein = Err("index out of bounds: the len is 0 but the index is 0".to_string());
    assert!(catch_quietly(|| trial.check(not_ein, inputs())).is_err());
}

#[test]
fn f32_tolerance_is_relative_1e_4() {
    let source = "fn run(a: [[f32]]) -> f32 { sum i, j { a[i, j] } }";
    let oracle = Oracle::new("harness_self_test", source, Form::Item);
    let trial = oracle.start(0, &[], LayoutPlan::Uniform(Layout::Standard));
    let inputs = || {
        vec![crate::harness::NamedValue::new(
            "a",
            Value::Array(ArrayValue { shape: vec![1, 2], elements: vec![Value::F32(100.0), Value::F32(0.5)] }),
            Scalar::F32,
        )]
    };
    assert_eq!(catch_quietly(|| trial.check(Ok(Value::F32(100.505)), inputs())).err(), None);
    assert!(catch_quietly(|| trial.check(Ok(Value::F32(100.6)), inputs())).is_err());
}

#[test]
fn structure_of_arrays_becomes_an_array_of_records() {
    let ty = Type::array(
        Type::Tuple {
            fields: vec![Type::scalar(Scalar::F64), Type::scalar(Scalar::Bool)],
            names: vec!["re".into(), "ok".into()],
        },
        1,
    );
    let columns = Value::Tuple(vec![
        Value::Array(ArrayValue::vector(vec![Value::F64(1.0), Value::F64(2.0)])),
        Value::Array(ArrayValue::vector(vec![Value::Bool(true), Value::Bool(false)])),
    ]);
    let rows = structure_of_arrays_to_value(columns, &ty).expect("converts");
    let expected = Value::Array(ArrayValue::vector(vec![
        Value::Tuple(vec![Value::F64(1.0), Value::Bool(true)]),
        Value::Tuple(vec![Value::F64(2.0), Value::Bool(false)]),
    ]));
    assert_eq!(rows, expected);
    let ragged = Value::Tuple(vec![
        Value::Array(ArrayValue::vector(vec![Value::F64(1.0)])),
        Value::Array(ArrayValue::vector(vec![Value::Bool(true), Value::Bool(false)])),
    ]);
    assert!(structure_of_arrays_to_value(ragged, &ty).is_err());
}

#[test]
fn error_messages_compare_by_kind() {
    let compiled =
        "ein: size mismatch for index `k` (at tests/a.rs:1:2): axis 1 of `a` has 1 element but axis 0 of `b` has 4";
    assert_eq!(
        strip_site(compiled),
        "size mismatch for index `k`: axis 1 of `a` has 1 element but axis 0 of `b` has 4"
    );
    assert_eq!(error_kind(&strip_site(compiled)), "size mismatch for index `k`");
    assert_eq!(error_kind("integer division by zero"), "integer division by zero");
}
