//! Iterated stencils: Rodinia's hotspot and pathfinder, and Parboil's 3-D 7-point stencil.
//! In ein each is a `fold` whose accumulator is the whole grid (what a user writes for "do
//! this step n times"); out-of-range neighbours clamp, which is also what the hand-written
//! and ndarray versions do at the edges.

use std::sync::Arc;

use ein::ein;
use ndarray::{Array1, Array2, Array3, ArrayView2, ArrayView3, Zip};
use rayon::prelude::*;

use crate::harness::{data, Check, Kernel, KernelSpec, Work};

ein! {
    /// Rodinia hotspot: `iterations` steps of the thermal simulation (5-point stencil).
    #[allow(clippy::too_many_arguments)]
    pub fn hotspot(
        temp: [[f32]],
        power: [[f32]],
        iterations: usize,
        step_div_cap: f32,
        rx_1: f32,
        ry_1: f32,
        rz_1: f32,
        ambient: f32,
    ) -> [[f32]] {
        fold t in 0..iterations, tmp = temp {
            for i, j {
                let c = tmp[i, j];
                c + step_div_cap * (power[i, j]
                    + (tmp[i + 1, j] + tmp[i - 1, j] - 2.0 * c) * ry_1
                    + (tmp[i, j + 1] + tmp[i, j - 1] - 2.0 * c) * rx_1
                    + (ambient - c) * rz_1)
            }
        }
    }

    /// Rodinia pathfinder: the cheapest path cost from the top row to each cell of the bottom
    /// row, moving down to one of three neighbours.
    pub fn pathfinder(wall: [[i32]]) -> [i32] {
        fold t in 0..wall.len() - 1, row = wall[0] {
            for j { wall[t + 1, j] + min(row[j - 1], min(row[j], row[j + 1])) }
        }
    }

    /// Parboil stencil: `iterations` Jacobi steps of the 3-D 7-point stencil.
    pub fn stencil(a: [[[f32]]], iterations: usize, c0: f32, c1: f32) -> [[[f32]]] {
        fold t in 0..iterations, u = a {
            for i in 0..a.len(), j in 0..a.shape(1), k in 0..a.shape(2) {
                c1 * (u[i + 1, j, k] + u[i - 1, j, k] + u[i, j + 1, k] + u[i, j - 1, k] + u[i, j, k + 1] + u[i, j, k - 1])
                    - c0 * u[i, j, k]
            }
        }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "hotspot", build: hotspot_kernel },
        KernelSpec { name: "pathfinder", build: pathfinder_kernel },
        KernelSpec { name: "stencil-3d", build: stencil_kernel },
    ]
}

/// Rodinia hotspot's physical constants (hotspot.c), for a 16 mm × 16 mm chip 0.5 mm thick
/// on a `rows × columns` grid.
#[derive(Clone, Copy)]
pub struct Hotspot {
    pub step_div_cap: f32,
    pub rx_1: f32,
    pub ry_1: f32,
    pub rz_1: f32,
    pub ambient: f32,
}

impl Hotspot {
    pub fn new(rows: usize, columns: usize) -> Hotspot {
        const MAX_PD: f64 = 3.0e6;
        const PRECISION: f64 = 0.001;
        const SPEC_HEAT_SI: f64 = 1.75e6;
        const K_SI: f64 = 100.0;
        const FACTOR_CHIP: f64 = 0.5;
        let (t_chip, chip_height, chip_width) = (0.0005, 0.016, 0.016);
        let grid_height = chip_height / rows as f64;
        let grid_width = chip_width / columns as f64;
        let cap = FACTOR_CHIP * SPEC_HEAT_SI * t_chip * grid_width * grid_height;
        let rx = grid_width / (2.0 * K_SI * t_chip * grid_height);
        let ry = grid_height / (2.0 * K_SI * t_chip * grid_width);
        let rz = t_chip / (K_SI * grid_height * grid_width);
        let max_slope = MAX_PD / (FACTOR_CHIP * t_chip * SPEC_HEAT_SI);
        let step = PRECISION / max_slope;
        Hotspot {
            step_div_cap: (step / cap) as f32,
            rx_1: (1.0 / rx) as f32,
            ry_1: (1.0 / ry) as f32,
            rz_1: (1.0 / rz) as f32,
            ambient: 80.0,
        }
    }

    /// One cell's new temperature from its own, its neighbours' and its power.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn cell(&self, center: f32, north: f32, south: f32, west: f32, east: f32, power: f32) -> f32 {
        center
            + self.step_div_cap
                * (power
                    + (south + north - 2.0 * center) * self.ry_1
                    + (east + west - 2.0 * center) * self.rx_1
                    + (self.ambient - center) * self.rz_1)
    }
}

/// One hotspot step into `next`, rows in parallel, the interior of each row vectorised.
pub fn hotspot_step(
    constants: &Hotspot,
    current: &[f32],
    power: &[f32],
    next: &mut [f32],
    rows: usize,
    columns: usize,
) {
    next.par_chunks_mut(columns).enumerate().for_each(|(i, out)| {
        let row = |r: usize| &current[r * columns..(r + 1) * columns];
        let (north, center, south) = (row(i.saturating_sub(1)), row(i), row((i + 1).min(rows - 1)));
        let power = &power[i * columns..(i + 1) * columns];
        let last = columns - 1;
        out[0] = constants.cell(center[0], north[0], south[0], center[0], center[1.min(last)], power[0]);
        if last > 0 {
            out[last] =
                constants.cell(center[last], north[last], south[last], center[last - 1], center[last], power[last]);
        }
        if columns > 2 {
            let interior = out[1..last]
                .iter_mut()
                .zip(center.windows(3))
                .zip(&north[1..last])
                .zip(&south[1..last])
                .zip(&power[1..last]);
            for ((((out, window), &north), &south), &power) in interior {
                *out = constants.cell(window[1], north, south, window[0], window[2], power);
            }
        }
    });
}

pub fn hotspot_hand(
    constants: &Hotspot,
    temp: &[f32],
    power: &[f32],
    rows: usize,
    columns: usize,
    iterations: usize,
) -> Vec<f32> {
    let mut current = temp.to_vec();
    if current.is_empty() {
        return current;
    }
    let mut next = vec![0.0f32; temp.len()];
    for _ in 0..iterations {
        hotspot_step(constants, &current, power, &mut next, rows, columns);
        std::mem::swap(&mut current, &mut next);
    }
    current
}

fn hotspot_ndarray(
    constants: &Hotspot,
    temp: ArrayView2<f32>,
    power: ArrayView2<f32>,
    iterations: usize,
) -> Array2<f32> {
    let (rows, columns) = temp.dim();
    let mut current = temp.to_owned();
    let mut next = Array2::<f32>::zeros((rows, columns));
    for _ in 0..iterations {
        let grid = current.view();
        Zip::indexed(&mut next).and(&power).par_for_each(|(i, j), out, &power| {
            let (up, down) = (i.saturating_sub(1), (i + 1).min(rows - 1));
            let (left, right) = (j.saturating_sub(1), (j + 1).min(columns - 1));
            *out =
                constants.cell(grid[[i, j]], grid[[up, j]], grid[[down, j]], grid[[i, left]], grid[[i, right]], power);
        });
        std::mem::swap(&mut current, &mut next);
    }
    current
}

fn hotspot_kernel(quick: bool) -> Kernel {
    let (n, iterations): (usize, usize) = if quick { (256, 20) } else { (1024, 20) };
    let temp = Arc::new(data::uniform_f32(31, n * n, 320.0, 340.0));
    let power = Arc::new(data::uniform_f32(32, n * n, 0.0, 0.005));
    let constants = Hotspot::new(n, n);
    let shape = (n, n);
    let (t1, p1) = (Arc::clone(&temp), Arc::clone(&power));
    let (t2, p2) = (Arc::clone(&temp), Arc::clone(&power));
    let Hotspot { step_div_cap, rx_1, ry_1, rz_1, ambient } = constants;
    Kernel::new("hotspot", format!("{n}² f32 × {iterations} it"), Work::Bytes(12.0 * (n * n * iterations) as f64), Check::Close(1e-5))
        .note("ein is a `fold` over the iterations with the grid as accumulator (each step writes into the grid of the step before last: two buffers, as ping-pong); hand and ndarray ping-pong two buffers; ndarray is `Zip::indexed(..).par_for_each` with indexed neighbour reads; the working set (three 1024² f32 grids, 12 MB) fits in a large L3, so the share of STREAM can pass 100%")
        .variant("ein", move || hotspot(&data::view(&t1, shape), &data::view(&p1, shape), iterations, step_div_cap, rx_1, ry_1, rz_1, ambient))
        .variant("hand", move || hotspot_hand(&constants, &t2, &p2, n, n, iterations))
        .variant("ndarray", move || hotspot_ndarray(&constants, data::view(&temp, shape), data::view(&power, shape), iterations))
}

/// One pathfinder row: `next[j] = wall_row[j] + min(previous[j-1..=j+1])`, clamped at the
/// sides, in chunks of columns; the interior of each chunk vectorised.
fn pathfinder_step(previous: &[i32], wall_row: &[i32], next: &mut [i32]) {
    const CHUNK: usize = 4096;
    let columns = previous.len();
    next.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, out)| {
        let start = chunk * CHUNK;
        let end = start + out.len();
        let (low, high) = (start.max(1), end.min(columns - 1));
        let clamped = |j: usize| {
            let left = previous[j.saturating_sub(1)];
            let right = previous[(j + 1).min(columns - 1)];
            wall_row[j] + left.min(previous[j]).min(right)
        };
        if low >= high {
            for (offset, out) in out.iter_mut().enumerate() {
                *out = clamped(start + offset);
            }
            return;
        }
        for j in start..low {
            out[j - start] = clamped(j);
        }
        let interior = out[low - start..high - start]
            .iter_mut()
            .zip(&wall_row[low..high])
            .zip(previous[low - 1..high + 1].windows(3));
        for ((out, &wall), window) in interior {
            *out = wall + window[0].min(window[1]).min(window[2]);
        }
        for j in high..end {
            out[j - start] = clamped(j);
        }
    });
}

fn pathfinder_hand(wall: &[i32], rows: usize, columns: usize) -> Vec<i32> {
    let mut previous = wall[..columns].to_vec();
    let mut next = vec![0i32; columns];
    for t in 1..rows {
        pathfinder_step(&previous, &wall[t * columns..(t + 1) * columns], &mut next);
        std::mem::swap(&mut previous, &mut next);
    }
    previous
}

fn pathfinder_ndarray(wall: ArrayView2<i32>) -> Array1<i32> {
    let columns = wall.ncols();
    let mut previous = wall.row(0).to_owned();
    let mut next = Array1::<i32>::zeros(columns);
    for row in wall.rows().into_iter().skip(1) {
        let costs = previous.view();
        Zip::indexed(&mut next).and(&row).par_for_each(|j, out, &wall| {
            *out = wall + costs[j.saturating_sub(1)].min(costs[j]).min(costs[(j + 1).min(columns - 1)]);
        });
        std::mem::swap(&mut previous, &mut next);
    }
    previous
}

fn pathfinder_kernel(quick: bool) -> Kernel {
    let (rows, columns): (usize, usize) = if quick { (20, 10_000) } else { (100, 100_000) };
    let wall = Arc::new(data::uniform_i32(33, rows * columns, 0, 10));
    let shape = (rows, columns);
    let (w1, w2) = (Arc::clone(&wall), Arc::clone(&wall));
    Kernel::new("pathfinder", format!("{columns} cols × {rows} rows i32"), Work::Bytes(8.0 * (rows * columns) as f64), Check::Close(0.0))
        .note("ein is a `fold` over the rows with the cost row as accumulator; one parallel loop per row, so every row is a synchronisation point")
        .variant("ein", move || pathfinder(&data::view(&w1, shape)))
        .variant("hand", move || pathfinder_hand(&w2, rows, columns))
        .variant("ndarray", move || pathfinder_ndarray(data::view(&wall, shape)))
}

/// One 7-point step, rows of the innermost axis in parallel, their interior vectorised.
fn stencil_step(current: &[f32], next: &mut [f32], shape: [usize; 3], c0: f32, c1: f32) {
    let [planes, rows, columns] = shape;
    next.par_chunks_mut(columns).enumerate().for_each(|(row_index, out)| {
        let (i, j) = (row_index / rows, row_index % rows);
        let row = |i: usize, j: usize| &current[(i * rows + j) * columns..(i * rows + j + 1) * columns];
        let center = row(i, j);
        let up = row((i + 1).min(planes - 1), j);
        let down = row(i.saturating_sub(1), j);
        let north = row(i, (j + 1).min(rows - 1));
        let south = row(i, j.saturating_sub(1));
        let cell = |k: usize, east: f32, west: f32| {
            c1 * (up[k] + down[k] + north[k] + south[k] + east + west) - c0 * center[k]
        };
        let last = columns - 1;
        out[0] = cell(0, center[1.min(last)], center[0]);
        if last > 0 {
            out[last] = cell(last, center[last], center[last - 1]);
        }
        if columns > 2 {
            let interior = out[1..last]
                .iter_mut()
                .zip(center.windows(3))
                .zip(&up[1..last])
                .zip(&down[1..last])
                .zip(&north[1..last])
                .zip(&south[1..last]);
            for (((((out, window), &up), &down), &north), &south) in interior {
                *out = c1 * (up + down + north + south + window[2] + window[0]) - c0 * window[1];
            }
        }
    });
}

fn stencil_hand(a: &[f32], shape: [usize; 3], iterations: usize, c0: f32, c1: f32) -> Vec<f32> {
    let mut current = a.to_vec();
    if current.is_empty() {
        return current;
    }
    let mut next = vec![0.0f32; a.len()];
    for _ in 0..iterations {
        stencil_step(&current, &mut next, shape, c0, c1);
        std::mem::swap(&mut current, &mut next);
    }
    current
}

fn stencil_ndarray(a: ArrayView3<f32>, iterations: usize, c0: f32, c1: f32) -> Array3<f32> {
    let (planes, rows, columns) = a.dim();
    let mut current = a.to_owned();
    let mut next = Array3::<f32>::zeros(a.raw_dim());
    for _ in 0..iterations {
        let grid = current.view();
        Zip::indexed(&mut next).par_for_each(|(i, j, k), out| {
            let neighbours = grid[[(i + 1).min(planes - 1), j, k]]
                + grid[[i.saturating_sub(1), j, k]]
                + grid[[i, (j + 1).min(rows - 1), k]]
                + grid[[i, j.saturating_sub(1), k]]
                + grid[[i, j, (k + 1).min(columns - 1)]]
                + grid[[i, j, k.saturating_sub(1)]];
            *out = c1 * neighbours - c0 * grid[[i, j, k]];
        });
        std::mem::swap(&mut current, &mut next);
    }
    current
}

fn stencil_kernel(quick: bool) -> Kernel {
    let (n, iterations): (usize, usize) = if quick { (32, 10) } else { (128, 10) };
    let a = Arc::new(data::uniform_f32(34, n * n * n, 0.0, 1.0));
    // Parboil's coefficients.
    let (c0, c1) = (1.0f32 / 6.0, 1.0f32 / 6.0 / 6.0);
    let shape = (n, n, n);
    let (a1, a2) = (Arc::clone(&a), Arc::clone(&a));
    Kernel::new("stencil-3d", format!("{n}³ f32 × {iterations} it"), Work::Bytes(8.0 * (n * n * n * iterations) as f64), Check::Close(1e-5))
        .note("edges clamp (Parboil keeps the boundary fixed instead); two 128³ grids fit in L3, so the share of STREAM can pass 100%")
        .variant("ein", move || stencil(&data::view(&a1, shape), iterations, c0, c1))
        .variant("hand", move || stencil_hand(&a2, [n, n, n], iterations, c0, c1))
        .variant("ndarray", move || stencil_ndarray(data::view(&a, shape), iterations, c0, c1))
}
