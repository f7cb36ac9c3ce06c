//! Differential-testing harness: runs each `ein!` program compiled and through the reference
//! interpreter (`ein_core::interp`) on the same random inputs, in several memory layouts, and
//! asserts that both give the same answer (or both fail with the same run-time error).
//!
//! Pieces, in the order a test uses them:
//! - [`Rng`] (the workspace's test RNG, from `ein-testing`): seeded per run, so every failure
//!   is reproducible from the seed printed with it.
//! - [`Elem`]: the element types ein accepts, with random generation and conversion to
//!   interpreter [`Value`]s.
//! - [`Layout`]: how an input's elements sit in memory. Every array argument is handed to the
//!   compiled code as an ndarray `ArrayViewD` over storage that is row-major, transposed,
//!   stepped (every other element of a longer buffer), reversed (negative strides) or broadcast
//!   (a zero stride).
//! - [`array`] / [`scalar`]: argument specifications, instantiated per run into
//!   [`ArrayInput`] / [`ScalarInput`].
//! - [`Oracle`]: the program parsed and checked by `ein_core` for the interpreter; it starts a
//!   [`Run`] per (shape case, layout plan) and checks its outcome.
//!
//! The `differential!` and `differential_expr!` macros (in `main.rs`) tie these together so
//! that a test states its program once.

use std::collections::BTreeSet;
use std::fmt::{self, Debug};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

use ein_core::interp::{self, ArrayValue, Value};
use ein_core::ir::{Program, ScalarType, Type, TypeSource, Unit};
use ein_core::ops::Scalar;
use ein_testing::{panic_message, Rng};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn, Slice};

// ---------------------------------------------------------------------------------------------
// Seeds

/// FNV-1a, to turn a test name into a seed.
fn hash_name(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3))
}

// ---------------------------------------------------------------------------------------------
// Element types

/// An element type of ein arrays and scalars.
pub trait Elem: Copy + Debug + PartialEq + Send + Sync + 'static {
    const SCALAR: Scalar;
    /// The range [`array`] draws from unless told otherwise (inclusive for integers).
    const DEFAULT_RANGE: (f64, f64);
    /// A random value in `low..high` (floats) or `low..=high` (integers, bounds rounded
    /// towards the inside and clamped to the type). Booleans ignore the range.
    fn random(rng: &mut Rng, low: f64, high: f64) -> Self;
    /// Values where functions are most likely to go wrong: NaN, ±∞, ±0, the extremes, the
    /// smallest normal and subnormal values, values near 1 (floats); MIN, MAX, 0, ±1 (integers).
    fn specials() -> Vec<Self>;
    /// Whether a special value is within `bound` in magnitude (NaN and ±∞ always are).
    fn special_within(self, bound: f64) -> bool;
    fn to_value(self) -> Value;
    /// The value as this type, if it is one (for `extern fn`s run by the interpreter).
    fn from_value(value: &Value) -> Option<Self>;
}

macro_rules! float_elem {
    ($t:ty, $scalar:ident, $variant:ident) => {
        impl Elem for $t {
            const SCALAR: Scalar = Scalar::$scalar;
            const DEFAULT_RANGE: (f64, f64) = (-1.0, 1.0);
            fn random(rng: &mut Rng, low: f64, high: f64) -> Self {
                rng.uniform(low, high) as $t
            }
            fn specials() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    <$t>::MAX,
                    <$t>::MIN,
                    <$t>::MIN_POSITIVE,
                    -<$t>::MIN_POSITIVE,
                    <$t>::from_bits(1),
                    -<$t>::from_bits(3),
                    <$t>::EPSILON,
                    1.0,
                    -1.0,
                    0.5,
                    -0.5,
                    1.0 + <$t>::EPSILON,
                    1.0 - <$t>::EPSILON / 2.0,
                    2.5,
                    -2.5,
                    3.5,
                    1e10,
                    -1e10,
                    1e30,
                    -1e30,
                    100.0,
                    -88.5,
                    710.0,
                    -745.5,
                ]
            }
            fn special_within(self, bound: f64) -> bool {
                !self.is_finite() || f64::from(self).abs() <= bound
            }
            fn to_value(self) -> Value {
                Value::$variant(self)
            }
            fn from_value(value: &Value) -> Option<Self> {
                match value {
                    Value::$variant(value) => Some(*value),
                    _ => None,
                }
            }
        }
    };
}

macro_rules! int_elem {
    ($t:ty, $scalar:ident, $variant:ident, $range:expr) => {
        impl Elem for $t {
            const SCALAR: Scalar = Scalar::$scalar;
            const DEFAULT_RANGE: (f64, f64) = $range;
            fn random(rng: &mut Rng, low: f64, high: f64) -> Self {
                let low = (low.ceil() as i128).max(<$t>::MIN as i128);
                let high = (high.floor() as i128).min(<$t>::MAX as i128);
                assert!(low <= high, "empty integer range {low}..={high}");
                rng.between(low, high) as $t
            }
            #[allow(unused_comparisons)]
            fn specials() -> Vec<Self> {
                let mut values = vec![<$t>::MIN, <$t>::MAX, 0, 1, 2, 3, <$t>::MIN + 1, <$t>::MAX - 1];
                if <$t>::MIN < 0 {
                    values.extend([(0 as $t).wrapping_sub(1), (0 as $t).wrapping_sub(2), (0 as $t).wrapping_sub(7)]);
                }
                values
            }
            fn special_within(self, bound: f64) -> bool {
                (self as f64).abs() <= bound
            }
            fn to_value(self) -> Value {
                Value::$variant(self)
            }
            fn from_value(value: &Value) -> Option<Self> {
                match value {
                    Value::$variant(value) => Some(*value),
                    _ => None,
                }
            }
        }
    };
}

float_elem!(f32, F32, F32);
float_elem!(f64, F64, F64);
int_elem!(i8, I8, I8, (-9.0, 9.0));
int_elem!(i16, I16, I16, (-9.0, 9.0));
int_elem!(i32, I32, I32, (-9.0, 9.0));
int_elem!(i64, I64, I64, (-9.0, 9.0));
int_elem!(isize, Isize, Isize, (-9.0, 9.0));
int_elem!(u8, U8, U8, (0.0, 9.0));
int_elem!(u16, U16, U16, (0.0, 9.0));
int_elem!(u32, U32, U32, (0.0, 9.0));
int_elem!(u64, U64, U64, (0.0, 9.0));
int_elem!(usize, Usize, Usize, (0.0, 9.0));

impl Elem for bool {
    const SCALAR: Scalar = Scalar::Bool;
    const DEFAULT_RANGE: (f64, f64) = (0.0, 1.0);
    fn random(rng: &mut Rng, _low: f64, _high: f64) -> Self {
        rng.next_u64() & 1 == 1
    }
    fn specials() -> Vec<Self> {
        vec![false, true]
    }
    fn special_within(self, _bound: f64) -> bool {
        true
    }
    fn to_value(self) -> Value {
        Value::Bool(self)
    }
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Bool(value) => Some(*value),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Layouts

/// How an array argument is laid out in memory. Its logical contents are always random; only
/// the strides and the storage around them change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major and contiguous.
    Standard,
    /// Stored with the axes reversed (column-major for rank 2) and viewed through
    /// `reversed_axes`, like `a.t()`.
    Transposed,
    /// Stored with the last two axes swapped and viewed through `swap_axes`: a stack of
    /// transposed matrices (`Transposed` for rank 2, `Standard` below). Every other case runs
    /// it in place of `Transposed` (`LayoutPlan::all`).
    StackTransposed,
    /// Stored with every axis twice as long and viewed with step 2: the skipped elements are
    /// garbage that a wrong stride would read.
    Stepped,
    /// Viewed with step -1 on every axis: negative strides.
    Reversed,
    /// Axis 0 has stride 0: one stored row broadcast to every row.
    Broadcast,
}

impl Layout {
    /// The four layouts every test runs every case in, uniformly for all arguments.
    pub const UNIFORM: [Layout; 4] = [Layout::Standard, Layout::Transposed, Layout::Stepped, Layout::Reversed];
    /// Every layout, for the mixed plan.
    pub const ALL: [Layout; 5] =
        [Layout::Standard, Layout::Transposed, Layout::Stepped, Layout::Reversed, Layout::Broadcast];
}

/// Which layout each array argument of one run gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutPlan {
    /// Every array argument in the same layout.
    Uniform(Layout),
    /// Argument `k` gets `Layout::ALL[(k + offset) % 5]`: arguments in different layouts,
    /// including broadcast (zero-stride) ones.
    Mixed(usize),
}

impl LayoutPlan {
    /// The plans every case runs under: the four uniform layouts, then one mixed plan. Odd
    /// cases run stacks of transposes where even ones run every axis reversed: the two differ
    /// from rank 3 on, where each has its own copy of a function (`passes::by_columns`).
    pub fn all(case_index: usize) -> Vec<LayoutPlan> {
        let uniform = Layout::UNIFORM.iter().map(|&layout| match layout {
            Layout::Transposed if case_index % 2 == 1 => Layout::StackTransposed,
            layout => layout,
        });
        let mut plans: Vec<LayoutPlan> = uniform.map(LayoutPlan::Uniform).collect();
        plans.push(LayoutPlan::Mixed(case_index));
        plans
    }

    fn layout_of(self, argument: usize) -> Layout {
        match self {
            LayoutPlan::Uniform(layout) => layout,
            LayoutPlan::Mixed(offset) => Layout::ALL[(argument + offset) % Layout::ALL.len()],
        }
    }
}

/// Random storage for an array of logical shape `shape` in `layout`; [`view_in_layout`] turns
/// it into the view the compiled code sees.
fn storage_for<T: Elem>(shape: &[usize], layout: Layout, rng: &mut Rng, draw: Draw) -> ArrayD<T> {
    let storage_shape: Vec<usize> = match layout {
        Layout::Standard | Layout::Reversed => shape.to_vec(),
        Layout::Transposed => shape.iter().rev().copied().collect(),
        Layout::StackTransposed => {
            let mut storage = shape.to_vec();
            if storage.len() >= 2 {
                let rank = storage.len();
                storage.swap(rank - 2, rank - 1);
            }
            storage
        }
        Layout::Stepped => shape.iter().map(|&length| 2 * length).collect(),
        Layout::Broadcast => {
            let mut storage = shape.to_vec();
            if let Some(first) = storage.first_mut() {
                *first = (*first).min(1);
            }
            storage
        }
    };
    let specials: Vec<T> = match draw.specials {
        Some(bound) => T::specials().into_iter().filter(|value| value.special_within(bound)).collect(),
        None => Vec::new(),
    };
    let (low, high) = draw.range;
    ArrayD::from_shape_fn(IxDyn(&storage_shape), |_| {
        if !specials.is_empty() && rng.percent(40) {
            *rng.pick(&specials)
        } else {
            T::random(rng, low, high)
        }
    })
}

/// How an array's elements are drawn: uniformly from `range`, and, with `specials`, 40% of
/// them from the type's special values (those within that magnitude, NaN and ±∞ always).
#[derive(Clone, Copy, Debug)]
pub struct Draw {
    range: (f64, f64),
    specials: Option<f64>,
}

fn view_in_layout<'a, T>(storage: &'a ArrayD<T>, shape: &[usize], layout: Layout) -> ArrayViewD<'a, T> {
    let view = match layout {
        Layout::Broadcast => match storage.broadcast(IxDyn(shape)) {
            Some(broadcast) => broadcast,
            None => panic!("cannot broadcast storage of shape {:?} to {shape:?}", storage.shape()),
        },
        _ => arranged(storage.view(), layout),
    };
    assert_eq!(view.shape(), shape, "layout {layout:?} built the wrong shape");
    view
}

/// The mutable counterpart of [`view_in_layout`], for an `#[into]` function's `out`.
fn view_mut_in_layout<'a, T>(storage: &'a mut ArrayD<T>, shape: &[usize], layout: Layout) -> ArrayViewMutD<'a, T> {
    let view = arranged(storage.view_mut(), layout);
    assert_eq!(view.shape(), shape, "layout {layout:?} built the wrong shape");
    view
}

/// A view of the whole storage (of [`storage_for`]) arranged as `layout` says; not broadcast.
fn arranged<S: ndarray::RawData>(
    mut view: ndarray::ArrayBase<S, IxDyn>,
    layout: Layout,
) -> ndarray::ArrayBase<S, IxDyn> {
    match layout {
        Layout::Standard => view,
        Layout::Transposed => view.reversed_axes(),
        Layout::StackTransposed => {
            let rank = view.ndim();
            if rank >= 2 {
                view.swap_axes(rank - 2, rank - 1);
            }
            view
        }
        Layout::Stepped => {
            view.slice_each_axis_inplace(|_| Slice::new(0, None, 2));
            view
        }
        Layout::Reversed => {
            view.slice_each_axis_inplace(|_| Slice::new(0, None, -1));
            view
        }
        Layout::Broadcast => panic!("a broadcast layout is made by `broadcast`, and an `out` cannot be one"),
    }
}

impl LayoutPlan {
    /// The layout of an `#[into]` function's `out` under this plan (the uniform layout, or one
    /// chosen by the mixed plan's offset; never broadcast, as `out` is written).
    pub fn out_layout(self) -> Layout {
        match self {
            LayoutPlan::Uniform(layout) => layout,
            LayoutPlan::Mixed(offset) => Layout::UNIFORM[offset % Layout::UNIFORM.len()],
        }
    }
}

/// Runs an `#[into]` function: `write` gets an `out` of `like`'s shape in `layout`, over storage
/// holding random values (so an element it leaves unwritten shows as a wrong answer), and the
/// values `out` holds afterwards are returned. Panics if `write` changed storage outside `out`
/// (the gaps between a stepped layout's elements).
pub fn written_into<T: Elem, const N: usize>(
    like: &ein::Array<T, N>,
    layout: Layout,
    write: impl FnOnce(&mut ArrayViewMutD<'_, T>),
) -> ein::Array<T, N> {
    let shape = like.shape();
    let draw = Draw { range: T::DEFAULT_RANGE, specials: None };
    let mut storage = storage_for::<T>(&shape, layout, &mut Rng::new(0x5EED_0077), draw);
    let before = storage.clone();
    let mut out = view_mut_in_layout(&mut storage, &shape, layout);
    write(&mut out);
    let written = ein::AsView::<T, N>::as_view(&out).to_array();
    if layout == Layout::Stepped {
        for ((index, now), then) in storage.indexed_iter().zip(before.iter()) {
            let in_gap = ndarray::Dimension::as_array_view(&index).iter().any(|&position| position % 2 == 1);
            assert!(!in_gap || now == then, "an `#[into]` function wrote at {index:?}, outside `out`");
        }
    }
    written
}

/// The interpreter's value of an ndarray view: its elements in logical row-major order.
pub fn view_to_value<T: Elem>(view: &ArrayViewD<'_, T>) -> Value {
    Value::Array(ArrayValue { shape: view.shape().to_vec(), elements: view.iter().map(|&x| x.to_value()).collect() })
}

// ---------------------------------------------------------------------------------------------
// Argument specifications and their instances

/// An array argument of the given logical shape, with random elements.
pub fn array<T: Elem>(shape: impl AsRef<[usize]>) -> ArraySpec<T> {
    ArraySpec {
        shape: shape.as_ref().to_vec(),
        draw: Draw { range: T::DEFAULT_RANGE, specials: None },
        _elem: std::marker::PhantomData,
    }
}

/// A scalar argument with a fixed value.
pub fn scalar<T: Elem>(value: T) -> ScalarSpec<T> {
    ScalarSpec { value }
}

pub struct ArraySpec<T> {
    shape: Vec<usize>,
    draw: Draw,
    _elem: std::marker::PhantomData<T>,
}

impl<T: Elem> ArraySpec<T> {
    /// Draw elements from `low..high` (floats) or `low..=high` (integers) instead of the
    /// type's default range.
    pub fn within(mut self, low: f64, high: f64) -> Self {
        self.draw.range = (low, high);
        self
    }

    /// Draw 40% of the elements from the type's special values ([`Elem::specials`]), the rest
    /// from the range.
    pub fn specials(self) -> Self {
        self.specials_within(f64::INFINITY)
    }

    /// [`ArraySpec::specials`], but only the special values of magnitude at most `bound` (and
    /// NaN and ±∞): for functions accurate only on a bounded range.
    pub fn specials_within(mut self, bound: f64) -> Self {
        self.draw.specials = Some(bound);
        self
    }

    /// Random storage in the layout the run's plan gives this argument.
    pub fn instantiate(&self, run: &mut Run<'_>, name: &'static str) -> ArrayInput<T> {
        let layout = run.plan.layout_of(run.array_count);
        run.array_count += 1;
        let storage = storage_for::<T>(&self.shape, layout, &mut run.rng, self.draw);
        run.inputs.push(format!("{name}: {}{:?} {layout:?}", T::SCALAR, self.shape));
        ArrayInput { name, storage, shape: self.shape.clone(), layout }
    }
}

pub struct ScalarSpec<T> {
    value: T,
}

impl<T: Elem> ScalarSpec<T> {
    pub fn instantiate(&self, run: &mut Run<'_>, name: &'static str) -> ScalarInput<T> {
        run.inputs.push(format!("{name}: {} = {:?}", T::SCALAR, self.value));
        ScalarInput { name, value: self.value }
    }
}

/// The storage of one array argument.
pub struct ArrayInput<T> {
    name: &'static str,
    storage: ArrayD<T>,
    shape: Vec<usize>,
    layout: Layout,
}

impl<T: Elem> ArrayInput<T> {
    /// The argument as the compiled code sees it.
    pub fn arg(&self) -> ArrayArg<'_, T> {
        ArrayArg { name: self.name, view: view_in_layout(&self.storage, &self.shape, self.layout) }
    }
}

/// A view of one array argument in its layout.
pub struct ArrayArg<'a, T> {
    name: &'static str,
    view: ArrayViewD<'a, T>,
}

impl<'a, T: Elem> ArrayArg<'a, T> {
    /// What a compiled item-form function receives.
    pub fn pass(&self) -> &ArrayViewD<'a, T> {
        &self.view
    }

    /// What an expression-form `ein!` captures: the view itself.
    pub fn local(&self) -> ArrayViewD<'a, T> {
        self.view.clone()
    }

    pub fn input(&self) -> NamedValue {
        NamedValue { name: self.name, value: view_to_value(&self.view), elem: T::SCALAR }
    }
}

#[derive(Clone, Copy)]
pub struct ScalarInput<T> {
    name: &'static str,
    value: T,
}

impl<T: Elem> ScalarInput<T> {
    pub fn arg(&self) -> ScalarInput<T> {
        *self
    }

    pub fn pass(&self) -> T {
        self.value
    }

    pub fn local(&self) -> T {
        self.value
    }

    pub fn input(&self) -> NamedValue {
        NamedValue { name: self.name, value: self.value.to_value(), elem: T::SCALAR }
    }
}

/// An argument for the interpreter, with its name (matched against the program's parameters)
/// and element type (for the expression form's type arguments).
pub struct NamedValue {
    name: &'static str,
    value: Value,
    elem: Scalar,
}

impl NamedValue {
    /// An argument built by hand (for inputs that are not ndarray views).
    pub fn new(name: &'static str, value: Value, elem: Scalar) -> NamedValue {
        NamedValue { name, value, elem }
    }
}

// ---------------------------------------------------------------------------------------------
// Compiled results as interpreter values

/// A result of compiled ein code, converted to the interpreter's representation.
pub trait ToValue {
    fn to_value(&self) -> Value;
    /// The scalar type of every leaf of the type, in order (an array's are its element's):
    /// what rustc chose for the element types the program leaves to the use site.
    fn leaf_scalars(out: &mut Vec<Scalar>);
}

macro_rules! scalar_to_value {
    ($($t:ty),*) => {
        $(impl ToValue for $t {
            fn to_value(&self) -> Value {
                Elem::to_value(*self)
            }
            fn leaf_scalars(out: &mut Vec<Scalar>) {
                out.push(<$t as Elem>::SCALAR);
            }
        })*
    };
}

scalar_to_value!(f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool);

impl<T: Elem, const N: usize> ToValue for ein::Array<T, N> {
    fn to_value(&self) -> Value {
        let shape = self.shape().to_vec();
        let elements: Vec<Value> = self.as_slice().iter().map(|&x| x.to_value()).collect();
        Value::Array(ArrayValue { shape, elements })
    }
    fn leaf_scalars(out: &mut Vec<Scalar>) {
        out.push(T::SCALAR);
    }
}

macro_rules! tuple_to_value {
    ($($name:ident),+) => {
        impl<$($name: ToValue),+> ToValue for ($($name,)+) {
            #[allow(non_snake_case)]
            fn to_value(&self) -> Value {
                let ($($name,)+) = self;
                Value::Tuple(vec![$($name.to_value()),+])
            }
            fn leaf_scalars(out: &mut Vec<Scalar>) {
                $($name::leaf_scalars(out);)+
            }
        }
    };
}

tuple_to_value!(A);
tuple_to_value!(A, B);
tuple_to_value!(A, B, C);
tuple_to_value!(A, B, C, D);
tuple_to_value!(A, B, C, D, E);
tuple_to_value!(A, B, C, D, E, F);
tuple_to_value!(A, B, C, D, E, F, G);
tuple_to_value!(A, B, C, D, E, F, G, H);
tuple_to_value!(A, B, C, D, E, F, G, H, I);
tuple_to_value!(A, B, C, D, E, F, G, H, I, J);
tuple_to_value!(A, B, C, D, E, F, G, H, I, J, K);
tuple_to_value!(A, B, C, D, E, F, G, H, I, J, K, L);

/// Turns compiled output into the interpreter's shape of the same value: ein returns an array
/// of tuples or records as a tuple of arrays (one per field, recursively); the interpreter
/// returns one array of tuples.
pub fn structure_of_arrays_to_value(value: Value, ty: &Type) -> Result<Value, String> {
    match ty {
        Type::Array { elem, rank } if matches!(**elem, Type::Tuple { .. }) => {
            let Type::Tuple { fields, .. } = &**elem else { unreachable!() };
            let Value::Tuple(columns) = value else {
                return Err(format!(
                    "expected a tuple of {} arrays for an array of {}, got {}",
                    fields.len(),
                    elem_name(elem),
                    value.describe()
                ));
            };
            if columns.len() != fields.len() {
                return Err(format!("expected {} columns, got {}", fields.len(), columns.len()));
            }
            let mut arrays = Vec::new();
            for (column, field) in columns.into_iter().zip(fields) {
                match structure_of_arrays_to_value(column, &Type::Array { elem: Box::new(field.clone()), rank: *rank })?
                {
                    Value::Array(array) => arrays.push(array),
                    other => return Err(format!("a column is {}, not an array", other.describe())),
                }
            }
            let shape = arrays[0].shape.clone();
            if let Some(odd) = arrays.iter().find(|array| array.shape != shape) {
                return Err(format!("columns have different shapes: {:?} and {:?}", shape, odd.shape));
            }
            let count = arrays[0].elements.len();
            let elements = (0..count)
                .map(|k| Value::Tuple(arrays.iter().map(|array| array.elements[k].clone()).collect()))
                .collect();
            Ok(Value::Array(ArrayValue { shape, elements }))
        }
        Type::Tuple { fields, .. } => {
            let Value::Tuple(items) = value else {
                return Err(format!("expected a tuple of {}, got {}", fields.len(), value.describe()));
            };
            if items.len() != fields.len() {
                return Err(format!("expected a tuple of {}, got a tuple of {}", fields.len(), items.len()));
            }
            let items = items
                .into_iter()
                .zip(fields)
                .map(|(item, field)| structure_of_arrays_to_value(item, field))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Tuple(items))
        }
        _ => Ok(value),
    }
}

fn elem_name(ty: &Type) -> String {
    match ty {
        Type::Tuple { names, .. } if !names.is_empty() => format!("records {{{}}}", names.join(", ")),
        _ => "tuples".to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison and reporting

/// Where two values first differ, for the failure message.
pub fn first_difference(expected: &Value, actual: &Value, rel_tol: f64) -> String {
    match (expected, actual) {
        (Value::Array(left), Value::Array(right)) if left.shape != right.shape => {
            format!("shapes differ: interpreter {:?}, compiled {:?}", left.shape, right.shape)
        }
        (Value::Array(left), Value::Array(right)) => {
            let position = left.elements.iter().zip(&right.elements).position(|(l, r)| !l.approx_eq(r, rel_tol));
            match position {
                Some(position) => format!(
                    "element {:?} (row-major #{position}) differs: interpreter {:?}, compiled {:?}",
                    multi_index(position, &left.shape),
                    left.elements[position],
                    right.elements[position]
                ),
                None => "arrays differ in length".to_string(),
            }
        }
        (Value::Tuple(left), Value::Tuple(right)) if left.len() == right.len() => {
            let position = left.iter().zip(right).position(|(l, r)| !l.approx_eq(r, rel_tol));
            match position {
                Some(position) => {
                    format!("field {position}: {}", first_difference(&left[position], &right[position], rel_tol))
                }
                None => "tuples differ".to_string(),
            }
        }
        _ => format!("interpreter {}, compiled {}", abbreviate(expected), abbreviate(actual)),
    }
}

fn multi_index(mut position: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for axis in (0..shape.len()).rev() {
        index[axis] = position % shape[axis];
        position /= shape[axis];
    }
    index
}

/// `Debug` of a value, cut short for messages.
fn abbreviate(value: &Value) -> String {
    let text = format!("{value:?}");
    if text.chars().count() > 600 {
        format!("{}… ({})", text.chars().take(600).collect::<String>(), value.describe())
    } else {
        text
    }
}

thread_local! {
    /// Set while this thread runs code whose panics are expected and reported by the caller.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `code`, turning a panic into its message. The default panic hook stays silent for
/// panics on this thread meanwhile (the caller reports them); panics on rayon's worker threads
/// are still printed, then propagated to this thread and caught here too.
pub fn catch_quietly<R>(code: impl FnOnce() -> R) -> Result<R, String> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|quiet| quiet.get()) {
                default(info);
            }
        }));
    });
    let previous = QUIET.with(|quiet| quiet.replace(true));
    let result = catch_unwind(AssertUnwindSafe(code));
    QUIET.with(|quiet| quiet.set(previous));
    result.map_err(|payload| panic_message(&*payload))
}

/// A run-time error message of compiled code without the `ein: ` prefix and the
/// ` (at file:line:column)` site, so it can be compared with the interpreter's.
pub fn strip_site(message: &str) -> String {
    let message = message.strip_prefix("ein: ").unwrap_or(message);
    let Some(start) = message.find(" (at ") else { return message.to_string() };
    match message[start..].find(')') {
        Some(length) => format!("{}{}", &message[..start], &message[start + length + 1..]),
        None => message.to_string(),
    }
}

/// The kind of a run-time error and what it is about, for comparing the interpreter's errors
/// with compiled code's: the message up to its first `` `name` `` ("size mismatch for index
/// `k`", "read from empty axis 0 of `a`"), or all of it when it names nothing. The rest
/// (sizes, wording) is checked by the dedicated tests in `errors.rs`.
pub fn error_kind(message: &str) -> &str {
    let mut ticks = message.match_indices('`').map(|(position, _)| position);
    match (ticks.next(), ticks.next()) {
        (Some(_), Some(end)) => &message[..=end],
        _ => message,
    }
}

// ---------------------------------------------------------------------------------------------
// The oracle

/// Registers the Rust function `function` of one argument as the interpreter's `extern fn
/// name`: the same function the compiled code calls, on the interpreter's values.
pub fn extern1<A: Elem, R: Elem>(
    name: &'static str,
    function: fn(A) -> R,
) -> impl FnOnce(interp::Externs) -> interp::Externs {
    move |externs| {
        externs.with_signature(name, vec![A::SCALAR], R::SCALAR, move |args| match args {
            [a] => A::from_value(a).map_or(Value::Tuple(Vec::new()), |a| function(a).to_value()),
            _ => Value::Tuple(Vec::new()),
        })
    }
}

/// [`extern1`] for a function of two arguments.
pub fn extern3<A: Elem, B: Elem, C: Elem, R: Elem>(
    name: &'static str,
    function: fn(A, B, C) -> R,
) -> impl FnOnce(interp::Externs) -> interp::Externs {
    move |externs| {
        externs.with_signature(name, vec![A::SCALAR, B::SCALAR, C::SCALAR], R::SCALAR, move |args| match args {
            [a, b, c] => match (A::from_value(a), B::from_value(b), C::from_value(c)) {
                (Some(a), Some(b), Some(c)) => function(a, b, c).to_value(),
                _ => Value::Tuple(Vec::new()),
            },
            _ => Value::Tuple(Vec::new()),
        })
    }
}

pub fn extern2<A: Elem, B: Elem, R: Elem>(
    name: &'static str,
    function: fn(A, B) -> R,
) -> impl FnOnce(interp::Externs) -> interp::Externs {
    move |externs| {
        externs.with_signature(name, vec![A::SCALAR, B::SCALAR], R::SCALAR, move |args| match args {
            [a, b] => match (A::from_value(a), B::from_value(b)) {
                (Some(a), Some(b)) => function(a, b).to_value(),
                _ => Value::Tuple(Vec::new()),
            },
            _ => Value::Tuple(Vec::new()),
        })
    }
}

/// How the program was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Item,
    Expression,
}

/// One program, checked by `ein_core` for the interpreter, and the bookkeeping of a test.
pub struct Oracle {
    test: &'static str,
    source: String,
    program: Program,
    /// For a derivative companion ([`Oracle::jvp`], [`Oracle::vjp`]): the primal program,
    /// whose dual numbers (`interp::run_dual`) the companion's interpreted answer must agree
    /// with, and which companion it is.
    primal: Option<(Program, Derivative)>,
    /// The Rust functions of the program's `extern fn`s, for the interpreter.
    externs: interp::Externs,
    /// Relative tolerance for floats: loose when any f32 is involved (the compiled code
    /// reassociates sums).
    f32_involved: bool,
    /// Shape cases that ran to completion in both (rather than failing in both).
    succeeded: Mutex<BTreeSet<usize>>,
    runs: Mutex<usize>,
    /// Whether the program is an item-form function (only those have derivative companions).
    item: bool,
    /// For a primal with a float parameter: its `#[jvp]` and `#[vjp]` companions, built once
    /// ([`Oracle::derivatives`]); `None` when it has no float parameter, a type parameter, or
    /// calls an `extern fn` without a declared derivative.
    derivatives: OnceLock<Option<(Program, Program)>>,
    /// Shape cases whose derivatives were checked (once each, in the interpreter).
    differentiated: Mutex<BTreeSet<usize>>,
}

impl Oracle {
    /// Parses and checks `source` (the program's tokens, stringified) exactly as the macro does.
    pub fn new(test: &'static str, source: &str, form: Form) -> Oracle {
        let tokens: proc_macro2::TokenStream = match source.parse() {
            Ok(tokens) => tokens,
            Err(error) => panic!("test `{test}`: the program does not tokenise: {error}\n{source}"),
        };
        let units: Vec<Unit> = match ein_core::syntax::parse_input(tokens).and_then(ein_core::check::check_input) {
            Ok(units) => units,
            Err(error) => panic!("test `{test}`: ein_core rejects the program: {error}\n{source}"),
        };
        assert_eq!(units.len(), 1, "test `{test}`: expected one program");
        let unit = units.into_iter().next().unwrap_or_else(|| unreachable!());
        let actual_form = match unit.form {
            ein_core::ir::Form::Expression => Form::Expression,
            ein_core::ir::Form::Function(_) => Form::Item,
        };
        assert_eq!(actual_form, form, "test `{test}`: the program parsed in the other form");
        let program = unit.program;
        let f32_involved = program.vars.iter().any(|var| mentions_f32(&var.ty)) || mentions_f32(&program.body.ty);
        Oracle {
            test,
            source: source.to_string(),
            program,
            primal: None,
            externs: interp::Externs::default(),
            f32_involved,
            succeeded: Mutex::new(BTreeSet::new()),
            runs: Mutex::new(0),
            item: form == Form::Item,
            derivatives: OnceLock::new(),
            differentiated: Mutex::new(BTreeSet::new()),
        }
    }

    /// The `#[jvp]` and `#[vjp]` companions of a primal item-form program with a float
    /// parameter and no type parameter, built by `ein_core::ad` as the macro builds them. A
    /// program that cannot be differentiated fails the test, unless what stops it is an
    /// `extern fn` without a declared derivative (which the user must supply).
    fn derivatives(&self) -> Option<&(Program, Program)> {
        let build = || {
            let program = &self.program;
            let wrt: Vec<_> =
                program.params.iter().copied().filter(|param| has_float(&program.var(*param).ty)).collect();
            if self.primal.is_some() || !self.item || wrt.is_empty() || !program.type_params.is_empty() {
                return None;
            }
            let companions = ein_core::ad::jvp_program(program)
                .and_then(|jvp| Ok((jvp, ein_core::ad::vjp_program(program, false, &wrt)?)));
            match companions {
                Ok(companions) => Some(companions),
                // Programs ein documents as not differentiable (yet): Rust functions without a
                // declared derivative, scans of array states.
                Err(error)
                    if error.to_string().contains("declare its derivative")
                        || error.to_string().contains("has no derivative yet") =>
                {
                    None
                }
                Err(error) => panic!("test `{}`: the program cannot be differentiated: {error}", self.test),
            }
        };
        self.derivatives.get_or_init(build).as_ref()
    }

    /// The oracle of the program's forward-mode companion (`#[jvp]`, built by `ein_core::ad`
    /// exactly as the macro builds it): its parameters are the program's then `d_…` for each
    /// one with a float part. Every run is also checked against the primal's dual numbers.
    pub fn jvp(mut self) -> Oracle {
        let companion = match ein_core::ad::jvp_program(&self.program) {
            Ok(companion) => companion,
            Err(error) => panic!("test `{}`: the program cannot be differentiated: {error}", self.test),
        };
        self.primal = Some((std::mem::replace(&mut self.program, companion), Derivative::Jvp));
        self
    }

    /// The oracle of the program's reverse-mode companion (`#[vjp]`, or with `grad` the
    /// `#[grad]` one), built by `ein_core::ad` as the macro builds it: its parameters are the
    /// program's then (for `vjp`) the cotangent of the result; it returns the value and one
    /// adjoint per parameter with a float part. Every run also checks it is the transpose of
    /// the primal's dual numbers: ⟨adjoints, t⟩ = ⟨cotangent, tangent(t)⟩ for random `t`.
    pub fn vjp(mut self, grad: bool) -> Oracle {
        let wrt: Vec<_> =
            self.program.params.iter().copied().filter(|param| has_float(&self.program.var(*param).ty)).collect();
        let companion = match ein_core::ad::vjp_program(&self.program, grad, &wrt) {
            Ok(companion) => companion,
            Err(error) => panic!("test `{}`: the program cannot be differentiated: {error}", self.test),
        };
        self.primal = Some((std::mem::replace(&mut self.program, companion), Derivative::Vjp { grad }));
        self
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Gives the interpreter the Rust functions the program's `extern fn`s name (the same ones
    /// the compiled code calls; see [`extern1`]).
    pub fn with_externs(mut self, register: impl FnOnce(interp::Externs) -> interp::Externs) -> Oracle {
        self.externs = register(std::mem::take(&mut self.externs));
        self
    }

    /// Starts one run: shape case `case_index` (with its size variables) under `plan`.
    pub fn start(&self, case_index: usize, sizes: &[(&'static str, usize)], plan: LayoutPlan) -> Run<'_> {
        let plan_number = match plan {
            // A stack of transposes draws the elements its case would draw transposed.
            LayoutPlan::Uniform(Layout::StackTransposed) => 1,
            LayoutPlan::Uniform(layout) => Layout::UNIFORM.iter().position(|&l| l == layout).unwrap_or(0) as u64,
            LayoutPlan::Mixed(_) => 7,
        };
        let seed = hash_name(self.test) ^ ((case_index as u64) << 40) ^ (plan_number << 56);
        Run {
            oracle: self,
            case_index,
            sizes: sizes.iter().map(|(name, size)| format!("{name} = {size}")).collect::<Vec<_>>().join(", "),
            plan,
            seed,
            rng: Rng::new(seed),
            array_count: 0,
            inputs: Vec::new(),
            result_scalars: Default::default(),
        }
    }

    /// Fails the test unless at least `minimum` shape cases ran to completion (so that cases
    /// where both sides fail can never make a test pass vacuously). Returns the number of runs.
    pub fn finish(&self, minimum: usize) -> usize {
        let succeeded = self.succeeded.lock().unwrap_or_else(|poison| poison.into_inner()).clone();
        let runs = *self.runs.lock().unwrap_or_else(|poison| poison.into_inner());
        assert!(
            succeeded.len() >= minimum,
            "test `{}`: only the cases {succeeded:?} completed without a run-time error; at least {minimum} must\n{}",
            self.test,
            self.source
        );
        let differentiated = self.differentiated.lock().unwrap_or_else(|poison| poison.into_inner()).len();
        eprintln!(
            "test `{}`: {runs} runs agreed ({} shape cases completed; derivatives checked on {differentiated})",
            self.test,
            succeeded.len()
        );
        runs
    }

    fn tolerance(&self) -> f64 {
        if self.f32_involved {
            1e-4
        } else {
            1e-9
        }
    }
}

/// Tangents agree where the value and the dual numbers' tangent are finite: at a NaN or
/// infinite value there is no derivative, and IEEE arithmetic gives several defensible answers
/// (dual numbers leave out the tangent of an empty sum, a structural zero, where the companion
/// computes `0 / 0`).
fn tangents_agree(value: &Value, expected: &Value, got: &Value, rel_tol: f64) -> bool {
    let undefined = |value: f64, tangent: f64| !value.is_finite() || !tangent.is_finite();
    match (value, expected, got) {
        (Value::F64(value), Value::F64(expected), Value::F64(_)) if undefined(*value, *expected) => true,
        (Value::F32(value), Value::F32(expected), Value::F32(_))
            if undefined(f64::from(*value), f64::from(*expected)) =>
        {
            true
        }
        (Value::Tuple(values), Value::Tuple(expected), Value::Tuple(got)) => {
            values.len() == got.len()
                && expected.len() == got.len()
                && values.iter().zip(expected).zip(got).all(|((v, e), g)| tangents_agree(v, e, g, rel_tol))
        }
        (Value::Array(values), Value::Array(expected), Value::Array(got)) => {
            expected.shape == got.shape
                && values
                    .elements
                    .iter()
                    .zip(&expected.elements)
                    .zip(&got.elements)
                    .all(|((v, e), g)| tangents_agree(v, e, g, rel_tol))
        }
        (_, expected, got) => expected.approx_eq(got, rel_tol),
    }
}

/// Which derivative companion an oracle checks.
#[derive(Clone, Copy, Debug)]
pub enum Derivative {
    Jvp,
    Vjp { grad: bool },
}

fn has_float(ty: &Type) -> bool {
    match ty {
        Type::Scalar(scalar) => matches!(scalar, ScalarType::Known(Scalar::F32 | Scalar::F64)),
        Type::Array { elem, .. } => has_float(elem),
        Type::Tuple { fields, .. } => fields.iter().any(has_float),
    }
}

/// A value of `like`'s type and shape with random floats in [-1, 1] (other scalars kept).
fn random_like(like: &Value, rng: &mut Rng) -> Value {
    match like {
        Value::F64(_) => Value::F64(rng.uniform(-1.0, 1.0)),
        Value::F32(_) => Value::F32(rng.uniform(-1.0, 1.0) as f32),
        Value::Tuple(fields) => Value::Tuple(fields.iter().map(|field| random_like(field, rng)).collect()),
        Value::Array(array) => Value::Array(ArrayValue {
            shape: array.shape.clone(),
            elements: array.elements.iter().map(|element| random_like(element, rng)).collect(),
        }),
        other => other.clone(),
    }
}

/// ⟨a, b⟩ over float leaves with the sum of the terms' magnitudes; `None` if a term is not
/// finite.
fn inner_product(a: &Value, b: &Value) -> Option<(f64, f64)> {
    let term = |x: f64| x.is_finite().then_some((x, x.abs()));
    match (a, b) {
        (Value::F64(x), Value::F64(y)) => term(x * y),
        (Value::F32(x), Value::F32(y)) => term(f64::from(*x) * f64::from(*y)),
        (Value::Tuple(xs), Value::Tuple(ys)) => inner_products(xs, ys),
        (Value::Array(xs), Value::Array(ys)) if xs.shape == ys.shape => inner_products(&xs.elements, &ys.elements),
        (Value::Array(_) | Value::Tuple(_), _) | (_, Value::Array(_) | Value::Tuple(_)) => None,
        _ => Some((0.0, 0.0)),
    }
}

fn inner_products(xs: &[Value], ys: &[Value]) -> Option<(f64, f64)> {
    if xs.len() != ys.len() {
        return None;
    }
    xs.iter().zip(ys).try_fold((0.0, 0.0), |(sum, size), (x, y)| {
        let (term, magnitude) = inner_product(x, y)?;
        Some((sum + term, size + magnitude))
    })
}

fn mentions_f32(ty: &Type) -> bool {
    match ty {
        Type::Scalar(scalar) => *scalar == ScalarType::Known(Scalar::F32),
        Type::Array { elem, .. } => mentions_f32(elem),
        Type::Tuple { fields, .. } => fields.iter().any(mentions_f32),
    }
}

/// One execution of a program on one set of inputs, compiled and interpreted.
pub struct Run<'o> {
    oracle: &'o Oracle,
    case_index: usize,
    sizes: String,
    plan: LayoutPlan,
    seed: u64,
    rng: Rng,
    array_count: usize,
    /// Descriptions of the arguments, for failure messages.
    inputs: Vec<String>,
    /// The leaf scalar types of the compiled result's Rust type ([`ToValue::leaf_scalars`]).
    result_scalars: std::cell::RefCell<Vec<Scalar>>,
}

/// What the compiled code did: its result as a value, or its panic message.
pub type Outcome = Result<Value, String>;

/// The scalar leaves of a type, in the order of [`ToValue::leaf_scalars`].
fn leaf_types(ty: &Type, out: &mut Vec<ScalarType>) {
    match ty {
        Type::Scalar(scalar) => out.push(*scalar),
        Type::Array { elem, .. } => leaf_types(elem, out),
        Type::Tuple { fields, .. } => fields.iter().for_each(|field| leaf_types(field, out)),
    }
}

impl Run<'_> {
    /// The companion (interpreted) must give the primal's dual numbers: `args` are the
    /// primal's arguments then the tangents.
    fn check_against_duals(&self, primal: &Program, companion: &Program, args: &[Value]) {
        let (primal_args, tangents) = args.split_at(primal.params.len());
        let duals = interp::run_dual(primal, primal_args.to_vec(), tangents.to_vec(), &self.oracle.externs);
        let companion = interp::run_with_externs(companion, args.to_vec(), &[], &self.oracle.externs);
        let rel_tol = self.oracle.tolerance().max(1e-7);
        match (duals, companion) {
            (Ok((value, tangent)), Ok(pair)) => {
                let agree = match &pair {
                    Value::Tuple(parts) if parts.len() == 2 => {
                        value.approx_eq(&parts[0], rel_tol) && tangents_agree(&value, &tangent, &parts[1], rel_tol)
                    }
                    _ => false,
                };
                let expected = Value::Tuple(vec![value, tangent]);
                if !agree {
                    self.fail(&format!(
                        "the companion disagrees with dual numbers: {}\nduals:     {}\ncompanion: {}",
                        first_difference(&expected, &pair, rel_tol),
                        abbreviate(&expected),
                        abbreviate(&pair)
                    ));
                }
            }
            (Err(_), Err(_)) => {}
            (duals, companion) => self.fail(&format!("dual numbers give {duals:?}, the companion {companion:?}")),
        }
    }

    /// The reverse-mode companion (interpreted) is the transpose of the primal's dual numbers:
    /// `args` are the primal's arguments then (unless `grad`) the cotangent.
    fn check_transpose(&self, primal: &Program, companion: &Program, args: &[Value], grad: bool) {
        let primal_args = &args[..primal.params.len()];
        let companion = interp::run_with_externs(companion, args.to_vec(), &[], &self.oracle.externs);
        let Ok(Value::Tuple(outputs)) = companion else { return };
        let mut rng = Rng::new(self.seed ^ 0x7A11_5E5E);
        let tangents: Vec<Value> = primal
            .params
            .iter()
            .zip(primal_args)
            .filter(|(param, _)| has_float(&primal.var(**param).ty))
            .map(|(_, arg)| random_like(arg, &mut rng))
            .collect();
        let Ok((value, tangent)) =
            interp::run_dual(primal, primal_args.to_vec(), tangents.clone(), &self.oracle.externs)
        else {
            self.fail("the companion succeeds where the primal's dual numbers fail");
        };
        let cotangent = if grad { Value::F64(1.0) } else { args[args.len() - 1].clone() };
        let cotangent = match (&value, cotangent) {
            (Value::F32(_), Value::F64(one)) => Value::F32(one as f32),
            (_, cotangent) => cotangent,
        };
        let (Some(right), Some(left)) = (inner_product(&cotangent, &tangent), inner_products(&outputs[1..], &tangents))
        else {
            return; // an infinite or NaN term: no derivative to compare
        };
        let rel_tol = self.oracle.tolerance().max(1e-7) * 10.0;
        let scale = right.1.max(left.1).max(1.0);
        if (left.0 - right.0).abs() > rel_tol * scale {
            self.fail(&format!(
                "the companion is not the transpose of dual numbers: ⟨adjoints, t⟩ = {} but ⟨cotangent, jvp(t)⟩ = {}\n\
                 adjoints: {}\ntangents: {tangents:?}",
                left.0,
                right.0,
                abbreviate(&Value::Tuple(outputs[1..].to_vec()))
            ));
        }
    }

    /// Every differential-test program with a float parameter is differentiated too, and its
    /// companions checked in the interpreter, once per shape case: the `#[jvp]` one against
    /// the dual numbers at random tangents, the `#[vjp]` one as their transpose at a random
    /// cotangent. (Compiled companions are tested by the `jvp` and `vjp` modules.)
    fn check_derivatives(&self, args: &[Value]) {
        let Some((jvp, vjp)) = self.oracle.derivatives() else { return };
        if !self.oracle.differentiated.lock().unwrap_or_else(|poison| poison.into_inner()).insert(self.case_index) {
            return;
        }
        let program = &self.oracle.program;
        let mut rng = Rng::new(self.seed ^ 0xD1FF_7A9E);
        let tangents = program
            .params
            .iter()
            .zip(args)
            .filter(|(param, _)| has_float(&program.var(**param).ty))
            .map(|(_, arg)| random_like(arg, &mut rng));
        let with_tangents: Vec<Value> = args.iter().cloned().chain(tangents).collect();
        self.check_against_duals(program, jvp, &with_tangents);
        let Ok(value) = interp::run_with_externs(program, args.to_vec(), &[], &self.oracle.externs) else {
            return;
        };
        let with_cotangent: Vec<Value> = args.iter().cloned().chain([random_like(&value, &mut rng)]).collect();
        self.check_transpose(program, vjp, &with_cotangent, false);
    }

    /// Runs compiled code, catching a panic (whose message goes into the outcome rather than
    /// to stderr).
    pub fn compiled<R: ToValue>(&self, code: impl FnOnce() -> R) -> Outcome {
        R::leaf_scalars(&mut self.result_scalars.borrow_mut());
        catch_quietly(code).map(|result| result.to_value())
    }

    /// Runs the interpreter on `inputs` (matched to the program's parameters by name) and
    /// asserts that it agrees with the compiled `outcome`.
    pub fn check(&self, outcome: Outcome, inputs: Vec<NamedValue>) {
        let program = &self.oracle.program;
        let mut args = Vec::new();
        for &param in &program.params {
            let name = &program.var(param).name;
            match inputs.iter().find(|input| input.name == name) {
                Some(input) => args.push(input.value.clone()),
                None => self.fail(&format!("the program's parameter `{name}` has no argument in the test")),
            }
        }
        if inputs.len() != program.params.len() {
            self.fail(&format!(
                "the test declares {} arguments, the program takes {}",
                inputs.len(),
                program.params.len()
            ));
        }
        let mut type_args = Vec::new();
        let mut result_leaves = Vec::new();
        leaf_types(&program.body.ty, &mut result_leaves);
        for (position, parameter) in program.type_params.iter().enumerate() {
            let witness = match parameter.source {
                TypeSource::Capture(witness) => witness,
                // Literals typed by the use site: rustc's choice shows in the result's type or
                // in the parameter types of the Rust function they are passed to; a Rust
                // function's result has the type it is registered with.
                TypeSource::UseSite | TypeSource::CallResult(_) => {
                    let param = ScalarType::Param(position);
                    let leaf = result_leaves.iter().position(|&leaf| leaf == param);
                    let from_result = leaf.and_then(|leaf| self.result_scalars.borrow().get(leaf).copied());
                    let from_call = program.rust_calls.iter().enumerate().find_map(|(site, call)| {
                        let (params, ret) = self.oracle.externs.signature(&call.name.to_string())?;
                        if parameter.source == TypeSource::CallResult(site) {
                            return Some(ret);
                        }
                        call.params.iter().position(|&scalar| scalar == param).and_then(|at| params.get(at).copied())
                    });
                    match from_call.or(from_result) {
                        Some(scalar) => type_args.push(scalar),
                        None => self.fail(&format!("nothing in the test decides type parameter {position}")),
                    }
                    continue;
                }
            };
            let name = &program.var(witness).name;
            match inputs.iter().find(|input| input.name == name) {
                Some(input) => type_args.push(input.elem),
                None => self.fail(&format!("no argument `{name}` decides a type parameter")),
            }
        }
        let oracle = self.oracle;
        match &oracle.primal {
            Some((primal, Derivative::Jvp)) => self.check_against_duals(primal, &oracle.program, &args),
            Some((primal, Derivative::Vjp { grad })) => self.check_transpose(primal, &oracle.program, &args, *grad),
            None => self.check_derivatives(&args),
        }
        let expected = interp::run_with_externs(program, args, &type_args, &self.oracle.externs);
        // The expression form's element types are rustc's: an f32 input makes them f32.
        let f32_input = inputs.iter().any(|input| input.elem == Scalar::F32);
        let rel_tol = if f32_input { 1e-4 } else { self.oracle.tolerance() };
        match (expected, outcome) {
            (Ok(expected), Ok(actual)) => {
                let actual = match structure_of_arrays_to_value(actual, &program.body.ty) {
                    Ok(actual) => actual,
                    Err(problem) => self.fail(&format!("the compiled result has the wrong structure: {problem}")),
                };
                if !expected.approx_eq(&actual, rel_tol) {
                    self.fail(&format!(
                        "results differ (rel tol {rel_tol:e}): {}\ninterpreter: {}\ncompiled:    {}",
                        first_difference(&expected, &actual, rel_tol),
                        abbreviate(&expected),
                        abbreviate(&actual)
                    ));
                }
                self.oracle.succeeded.lock().unwrap_or_else(|poison| poison.into_inner()).insert(self.case_index);
            }
            (Err(error), Err(panic)) => {
                if error.message.starts_with("internal error") {
                    self.fail(&format!("the interpreter reports an {error}"));
                }
                if !panic.starts_with("ein: ") {
                    self.fail(&format!(
                        "both fail, but the compiled code's panic is not an ein run-time error: {panic}\n\
                         interpreter: {error}"
                    ));
                }
                if error_kind(&strip_site(&panic)) != error_kind(&error.message) {
                    self.fail(&format!("both fail, with different errors\ninterpreter: {error}\ncompiled:    {panic}"));
                }
            }
            (Ok(expected), Err(panic)) => {
                self.fail(&format!("the compiled code panicked: {panic}\ninterpreter: {}", abbreviate(&expected)))
            }
            (Err(error), Ok(actual)) => self.fail(&format!(
                "the interpreter fails with \"{error}\" but the compiled code returned {}",
                abbreviate(&actual)
            )),
        }
        *self.oracle.runs.lock().unwrap_or_else(|poison| poison.into_inner()) += 1;
    }

    /// Records the description of an argument built by the test itself (for failure messages).
    pub fn describe_input(&mut self, description: String) {
        self.inputs.push(description);
    }

    /// Panics with everything needed to reproduce this run.
    pub fn fail(&self, problem: &str) -> ! {
        panic!("{self}\n{problem}")
    }
}

impl fmt::Display for Run<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(formatter, "differential test `{}` failed", self.oracle.test)?;
        writeln!(formatter, "program: {}", self.oracle.source)?;
        writeln!(formatter, "case #{}: {}", self.case_index, self.sizes)?;
        writeln!(formatter, "layout plan: {:?}; seed {:#018x}", self.plan, self.seed)?;
        write!(formatter, "inputs: {}", self.inputs.join("; "))
    }
}
