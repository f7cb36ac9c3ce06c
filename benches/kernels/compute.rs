//! Compute-bound kernels: Parboil's MRI-Q (sine and cosine), Mandelbrot (a fold with a
//! complex-number record as accumulator) and k-means assignment (`argmin` of a reduction).

use std::sync::Arc;

use ein::ein;
use ndarray::Zip;
use rayon::prelude::*;

use crate::harness::{data, Check, Kernel, KernelSpec, Output, Work};

ein! {
    /// Parboil MRI-Q: Q(x) = Σₖ |φₖ|² · e^{2πi kₖ·x}, as a record of its two parts.
    pub fn mri_q(x: [f32], y: [f32], z: [f32], kx: [f32], ky: [f32], kz: [f32], phi_mag: [f32]) -> [{re: f32, im: f32}] {
        for i {
            {
                re: sum k { phi_mag[k] * cos(6.2831855 * (kx[k] * x[i] + ky[k] * y[i] + kz[k] * z[i])) },
                im: sum k { phi_mag[k] * sin(6.2831855 * (kx[k] * x[i] + ky[k] * y[i] + kz[k] * z[i])) }
            }
        }
    }

    /// Escape-time Mandelbrot with the point as a complex-number record; the select freezes
    /// escaped points; the compiler stops a point's fold once its state is frozen (a fixed point).
    pub fn mandelbrot(cre: [f64], cim: [f64], iterations: usize) -> [[i64]] {
        for y, x {
            let c = { re: cre[x], im: cim[y] };
            let result = fold t in 0..iterations, state = ({ re: 0.0, im: 0.0 }, 0) {
                let z = state.0;
                let escaped = z.re * z.re + z.im * z.im > 4.0;
                let next = { re: z.re * z.re - z.im * z.im + c.re, im: 2.0 * z.re * z.im + c.im };
                if escaped { state } else { (next, state.1 + 1) }
            };
            result.1
        }
    }

    /// The same Mandelbrot with the real and imaginary parts as separate scalars.
    pub fn mandelbrot_split(cre: [f64], cim: [f64], iterations: usize) -> [[i64]] {
        for y, x {
            let result = fold t in 0..iterations, (zr, zi, n) = (0.0, 0.0, 0) {
                let escaped = zr * zr + zi * zi > 4.0;
                if escaped { (zr, zi, n) } else { (zr * zr - zi * zi + cre[x], 2.0 * zr * zi + cim[y], n + 1) }
            };
            result.2
        }
    }

    /// k-means assignment: each point's nearest centroid (squared distance, first on ties).
    pub fn kmeans_assign(points: [[f32]], centroids: [[f32]]) -> [usize] {
        for p {
            argmin c {
                sum d {
                    let diff = points[p, d] - centroids[c, d];
                    diff * diff
                }
            }
        }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "mri-q", build: mri_q_kernel },
        KernelSpec { name: "mandelbrot", build: mandelbrot_kernel },
        KernelSpec { name: "kmeans-assign", build: kmeans_kernel },
    ]
}

const TWO_PI: f32 = std::f32::consts::TAU;

struct MriQ {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    kx: Vec<f32>,
    ky: Vec<f32>,
    kz: Vec<f32>,
    phi_mag: Vec<f32>,
}

fn mri_q_hand(input: &MriQ) -> (Vec<f32>, Vec<f32>) {
    const CHUNK: usize = 64;
    let n = input.x.len();
    let (mut re, mut im) = (vec![0.0f32; n], vec![0.0f32; n]);
    re.par_chunks_mut(CHUNK).zip(im.par_chunks_mut(CHUNK)).enumerate().for_each(|(chunk, (re, im))| {
        for (offset, (re, im)) in re.iter_mut().zip(im.iter_mut()).enumerate() {
            let i = chunk * CHUNK + offset;
            let (x, y, z) = (input.x[i], input.y[i], input.z[i]);
            let (mut q_re, mut q_im) = (0.0f32, 0.0f32);
            let samples = input.kx.iter().zip(&input.ky).zip(&input.kz).zip(&input.phi_mag);
            for (((&kx, &ky), &kz), &phi) in samples {
                let (sin, cos) = (TWO_PI * (kx * x + ky * y + kz * z)).sin_cos();
                q_re += phi * cos;
                q_im += phi * sin;
            }
            *re = q_re;
            *im = q_im;
        }
    });
    (re, im)
}

fn mri_q_kernel(quick: bool) -> Kernel {
    let (points, samples): (usize, usize) = if quick { (2048, 256) } else { (32768, 3072) };
    let input = Arc::new(MriQ {
        x: data::uniform_f32(41, points, -0.5, 0.5),
        y: data::uniform_f32(42, points, -0.5, 0.5),
        z: data::uniform_f32(43, points, -0.5, 0.5),
        kx: data::uniform_f32(44, samples, -8.0, 8.0),
        ky: data::uniform_f32(45, samples, -8.0, 8.0),
        kz: data::uniform_f32(46, samples, -8.0, 8.0),
        phi_mag: data::uniform_f32(47, samples, 0.0, 1.0),
    });
    let (first, second) = (Arc::clone(&input), input);
    Kernel::new("mri-q", format!("numX {points}, numK {samples} f32"), Work::Items((points * samples) as f64, "term"), Check::Close(1e-4))
        .note("rate: (x, k) terms per second, each one sine and one cosine; hand calls libm's `sin_cos`; no crate variant (ndarray would be `par_azip!` around the same loop)")
        .variant("ein", move || {
            let q = &*first;
            mri_q(&q.x, &q.y, &q.z, &q.kx, &q.ky, &q.kz, &q.phi_mag)
        })
        .variant("hand", move || mri_q_hand(&second))
}

/// What a good engineer writes: each pixel iterates until it escapes, then stops.
fn mandelbrot_hand(cre: &[f64], cim: &[f64], iterations: usize) -> Vec<i64> {
    let width = cre.len();
    let mut out = vec![0i64; width * cim.len()];
    if width == 0 {
        return out;
    }
    out.par_chunks_mut(width).zip(cim.par_iter()).for_each(|(row, &ci)| {
        for (out, &cr) in row.iter_mut().zip(cre) {
            let (mut zr, mut zi, mut count) = (0.0f64, 0.0f64, 0usize);
            while count < iterations && zr * zr + zi * zi <= 4.0 {
                let next_re = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = next_re;
                count += 1;
            }
            *out = count as i64;
        }
    });
    out
}

/// ein's algorithm by hand: every pixel runs all iterations, escaped ones frozen by a select.
fn mandelbrot_hand_no_exit(cre: &[f64], cim: &[f64], iterations: usize) -> Vec<i64> {
    let width = cre.len();
    let mut out = vec![0i64; width * cim.len()];
    if width == 0 {
        return out;
    }
    out.par_chunks_mut(width).zip(cim.par_iter()).for_each(|(row, &ci)| {
        for (out, &cr) in row.iter_mut().zip(cre) {
            let (mut zr, mut zi, mut count) = (0.0f64, 0.0f64, 0i64);
            for _ in 0..iterations {
                let escaped = zr * zr + zi * zi > 4.0;
                let (next_re, next_im) = (zr * zr - zi * zi + cr, 2.0 * zr * zi + ci);
                if !escaped {
                    zr = next_re;
                    zi = next_im;
                    count += 1;
                }
            }
            *out = count;
        }
    });
    out
}

fn mandelbrot_kernel(quick: bool) -> Kernel {
    let (n, iterations): (usize, usize) = if quick { (128, 64) } else { (1024, 256) };
    let cre = Arc::new(data::linspace(n, -2.0, 0.6));
    let cim = Arc::new(data::linspace(n, -1.2, 1.2));
    let (r1, i1) = (Arc::clone(&cre), Arc::clone(&cim));
    let (r2, i2) = (Arc::clone(&cre), Arc::clone(&cim));
    let (r3, i3) = (Arc::clone(&cre), Arc::clone(&cim));
    Kernel::new("mandelbrot", format!("{n}² f64 × {iterations} it"), Work::Items((n * n * iterations) as f64, "it"), Check::MostlyEqual { share: 1e-3 })
        .note("rate: nominal iterations (pixels × iterations) per second; hand stops each pixel when it escapes; ein writes a fold whose select freezes escaped points, and the compiler stops the loop at that fixed point; hand-no-exit runs every iteration by hand; ein-split is ein with separate re/im scalars instead of a record, so the two must run alike: records cost nothing")
        .variant("ein", move || mandelbrot(&*r1, &*i1, iterations))
        .variant("ein-split", move || mandelbrot_split(&*r2, &*i2, iterations))
        .variant("hand", move || mandelbrot_hand(&r3, &i3, iterations))
        .variant("hand-no-exit", move || mandelbrot_hand_no_exit(&cre, &cim, iterations))
}

/// Nearest centroid per point; the centroids are transposed first (dimension-major) so the
/// inner loop runs over the centroids and vectorises. Sums over dimensions in order.
fn kmeans_hand(points: &[f32], centroids: &[f32], dimensions: usize, clusters: usize) -> Vec<usize> {
    const CHUNK: usize = 1024;
    let mut by_dimension = vec![0.0f32; dimensions * clusters];
    for c in 0..clusters {
        for d in 0..dimensions {
            by_dimension[d * clusters + c] = centroids[c * dimensions + d];
        }
    }
    let count = points.len().checked_div(dimensions).unwrap_or(0);
    let mut out = vec![0usize; count];
    out.par_chunks_mut(CHUNK).enumerate().for_each_init(
        || vec![0.0f32; clusters],
        |distances, (chunk, out)| {
            let chunk_points = points[chunk * CHUNK * dimensions..].chunks_exact(dimensions);
            for (out, point) in out.iter_mut().zip(chunk_points) {
                distances.fill(0.0);
                for (&coordinate, centroid_coordinates) in point.iter().zip(by_dimension.chunks_exact(clusters)) {
                    for (distance, &centroid) in distances.iter_mut().zip(centroid_coordinates) {
                        let diff = coordinate - centroid;
                        *distance += diff * diff;
                    }
                }
                let mut best = 0;
                for (c, &distance) in distances.iter().enumerate().skip(1) {
                    if distance < distances[best] {
                        best = c;
                    }
                }
                *out = best;
            }
        },
    );
    out
}

fn kmeans_kernel(quick: bool) -> Kernel {
    let (count, dimensions, clusters): (usize, usize, usize) = if quick { (1 << 14, 8, 16) } else { (1 << 20, 8, 16) };
    let points = Arc::new(data::uniform_f32(51, count * dimensions, 0.0, 1.0));
    let centroids = Arc::new(data::uniform_f32(52, clusters * dimensions, 0.0, 1.0));
    let points_shape = (count, dimensions);
    let centroids_shape = (clusters, dimensions);
    let (p1, c1) = (Arc::clone(&points), Arc::clone(&centroids));
    let (p2, c2) = (Arc::clone(&points), Arc::clone(&centroids));
    let (p3, c3) = (Arc::clone(&points), Arc::clone(&centroids));
    // A different centroid is acceptable only where the two distances tie within rounding.
    let judge = move |reference: &Output, candidate: &Output| -> Result<f64, String> {
        let (Some(reference), Some(candidate)) = (reference.as_usize(), candidate.as_usize()) else {
            return Err("k-means outputs must be usize arrays".to_string());
        };
        if reference.len() != candidate.len() {
            return Err(format!("lengths differ: {} and {}", reference.len(), candidate.len()));
        }
        let distance = |point: usize, cluster: usize| -> f64 {
            (0..dimensions)
                .map(|d| {
                    let diff = f64::from(p3[point * dimensions + d]) - f64::from(c3[cluster * dimensions + d]);
                    diff * diff
                })
                .sum()
        };
        let mut worst: f64 = 0.0;
        for (point, (&r, &c)) in reference.iter().zip(candidate).enumerate() {
            if r == c {
                continue;
            }
            if c >= clusters {
                return Err(format!("point {point}: centroid {c} does not exist"));
            }
            let (dr, dc) = (distance(point, r), distance(point, c));
            let gap = (dr - dc).abs() / dr.max(dc).max(f64::MIN_POSITIVE);
            worst = worst.max(gap);
            if gap > 1e-5 {
                return Err(format!(
                    "point {point}: reference centroid {r} (distance {dr}), this variant {c} (distance {dc})"
                ));
            }
        }
        Ok(worst)
    };
    Kernel::new(
        "kmeans-assign",
        format!("2^{} pts × {dimensions} dims × {clusters} centroids f32", count.trailing_zeros()),
        Work::Flops(3.0 * (count * dimensions * clusters) as f64),
        Check::Custom(Box::new(judge)),
    )
    .note("ndarray: `Zip::from(points.rows()).par_map_collect` of `min_by` over the centroid rows, each distance a `Zip::fold`")
    .variant("ein", move || kmeans_assign(&data::view(&p1, points_shape), &data::view(&c1, centroids_shape)))
    .variant("hand", move || kmeans_hand(&p2, &c2, dimensions, clusters))
    .variant("ndarray", move || {
        let centroids = data::view(&centroids, centroids_shape);
        Zip::from(data::view(&points, points_shape).rows()).par_map_collect(|point| {
            centroids
                .rows()
                .into_iter()
                .map(|centroid| Zip::from(&point).and(&centroid).fold(0.0f32, |total, &a, &b| total + (a - b) * (a - b)))
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(0, |(index, _)| index)
        })
    })
}
