//! Everything generated code calls, behind one door: the facade re-exports this module as
//! `::ein::__private`, and generated code names items only through that absolute path.

pub use rayon;

pub use crate::accum::{
    accum, accum_copies, accum_groups, accum_history, accum_position, in_copies, AccumError, AccumPlan, AccumSink,
};
pub use crate::array::Array;
pub use crate::as_view::{AsView, AsViewMut};
pub use crate::build::{
    check_out, fill_chunks, fill_pieces, jammed_chunk_rows, write_into, Buffer, Column, Columns, CopyInto, Destination,
    Fill, Out, Push, Slot, GRAIN, TILE_HEIGHT,
};
pub use crate::chain::{contract_chain, ChainSpec};
pub use crate::dispatch::{
    choose_simd, reset_simd, simd_copy, wide_simd, widest_on_this_cpu, widest_simd, SimdCopy, DEFAULT_COPY,
    DEFAULT_MATH_COPY,
};
pub use crate::errors::{
    captured_int, check_same_size, check_size, clamp_index, empty_arg_reduction, exact_shift, interior, shape_len,
    size_or_zero, wrap_modulus, IntoSize, Site,
};
pub use crate::filter::{filter, Kept, FILTER_CHUNK};
pub use crate::gemm::{choose_tiled_gemm, contract, contraction_is_small, ContractionSpec, SMALL_CONTRACTION};
pub use crate::reduce::{arg_range, fold_values, lane_blocks_end, reduce, Accumulate, Lanes, LANE_BLOCK, REDUCE_CHUNK};
pub use crate::scalar::{
    highest, int_div, int_rem, lowest, marker_of, marker_of_view, one, result_of, typed_closure0, typed_closure1,
    typed_closure2, typed_closure3, typed_closure4, typed_closure5, typed_closure6, typed_closure7, typed_closure8,
    zero, CastTo, Element, Float, Int, Num, Signed,
};
pub use crate::scan::{scan, SCAN_BLOCK};
pub use crate::tape::Tape;
pub use crate::view::{columns_first, stacked_columns_first, IntoView, Layout, UnitView, View};
pub use crate::view_mut::ViewMut;
