//! `#[grad]` companions against central finite differences of the compiled primal, in f64, at
//! random points where the functions are smooth: for a few random coordinates of every float
//! parameter, (f(x + h) - f(x - h)) / 2h must match the gradient's component.

use ein::Array;
use ein_testing::Rng;
use ndarray::ArrayView2;

ein::ein! {
    #[grad(logistic_grad)]
    fn logistic(x: [[f64]], y: [f64], w: [f64], lambda: f64) -> f64 {
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        -sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) } / (y.len() as f64)
            + lambda * sum k { w[k] * w[k] }
    }

    #[grad(mlp_grad)]
    fn mlp(x: [[f64]], labels: [usize], w1: [[f64]], b1: [f64], w2: [[f64]]) -> f64 {
        let h = for b, j { tanh(sum k { x[b, k] * w1[k, j] } + b1[j]) };
        let logits = for b, c { sum j { h[b, j] * w2[j, c] } };
        sum b {
            let m = max c { logits[b, c] };
            m + ln(sum c { exp(logits[b, c] - m) }) - logits[b, labels[b]]
        }
    }

    #[grad(diffusion_grad)]
    fn diffusion(temp: [[f64]], power: [[f64]], target: [[f64]], steps: usize, k: f64) -> f64 {
        let out = fold t in 0..steps, g = temp {
            for i, j {
                let c = g[i, j];
                c + k * (power[i, j] * c + g[i + 1, j] + g[i - 1, j] + g[i, j + 1] + g[i, j - 1] - 4.0 * c)
            }
        };
        sum i, j { (out[i, j] - target[i, j]) * (out[i, j] - target[i, j]) }
    }

    #[grad(recurrence_grad)]
    fn recurrence(x: [f64], a: f64) -> f64 {
        let s = scan t in 0..x.len(), s = 0.0 { a * s + sin(x[t]) };
        sum t { s[t] * s[t] }
    }

    // Horner's rule per bucket: an accum mixing `*=` and `+=`, applied serially.
    #[grad(buckets_grad)]
    fn buckets(bucket: [usize], x: [f64], c: [f64], h0: [f64]) -> f64 {
        let h = accum h = h0 { for k { h[bucket[k]] *= x[k]; h[bucket[k]] += c[k] } };
        sum b { sin(h[b]) }
    }
}

fn uniform(rng: &mut Rng, len: usize, low: f64, high: f64) -> Vec<f64> {
    (0..len).map(|_| low + (high - low) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).collect()
}

fn view(data: &[f64], rows: usize, columns: usize) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((rows, columns), data).expect("as many values as the shape")
}

/// Compares `gradient[p]` with central differences of `value` in up to four random
/// coordinates of each parameter `p` of `params`.
fn check(name: &str, params: &[Vec<f64>], gradient: &[Vec<f64>], value: impl Fn(&[Vec<f64>]) -> f64) {
    let mut rng = Rng::new(0x00F1_D1FF);
    assert_eq!(params.len(), gradient.len(), "{name}: one gradient per parameter");
    for (p, (param, grad)) in params.iter().zip(gradient).enumerate() {
        assert_eq!(param.len(), grad.len(), "{name}: parameter {p}'s gradient has its shape");
        for _ in 0..4.min(param.len()) {
            let k = rng.below(param.len());
            let h = 1e-5 * param[k].abs().max(1.0);
            let mut moved = params.to_vec();
            moved[p][k] = param[k] + h;
            let above = value(&moved);
            moved[p][k] = param[k] - h;
            let below = value(&moved);
            let difference = (above - below) / (2.0 * h);
            let scale = grad.iter().fold(1e-3_f64, |scale, g| scale.max(g.abs()));
            assert!(
                (difference - grad[k]).abs() <= 1e-5 * scale + 1e-4 * grad[k].abs(),
                "{name}: parameter {p}, element {k}: gradient {} but central difference {difference}",
                grad[k]
            );
        }
    }
}

fn flat<const N: usize>(array: Array<f64, N>) -> Vec<f64> {
    array.into_vec()
}

#[test]
fn logistic_gradient_matches_central_differences() {
    let (n, d) = (40, 5);
    let mut rng = Rng::new(1);
    let y = uniform(&mut rng, n, 0.0, 1.0).into_iter().map(|u| if u < 0.5 { 0.0 } else { 1.0 }).collect();
    let params = vec![uniform(&mut rng, n * d, -1.0, 1.0), y, uniform(&mut rng, d, -0.5, 0.5), vec![0.3]];
    let value = |p: &[Vec<f64>]| logistic(&view(&p[0], n, d), &p[1], &p[2], p[3][0]);
    let (loss, dx, dy, dw, dlambda) = logistic_grad(&view(&params[0], n, d), &params[1], &params[2], params[3][0]);
    let primal = value(&params);
    assert!((loss - primal).abs() <= 1e-12 * primal.abs().max(1.0), "the gradient's value {loss}, the loss {primal}");
    check("logistic", &params, &[flat(dx), flat(dy), flat(dw), vec![dlambda]], value);
}

#[test]
fn mlp_gradient_matches_central_differences() {
    let (n, inputs, hidden, classes) = (8, 6, 5, 3);
    let mut rng = Rng::new(2);
    let labels: Vec<usize> = (0..n).map(|_| rng.below(classes)).collect();
    let params = vec![
        uniform(&mut rng, n * inputs, -1.0, 1.0),
        uniform(&mut rng, inputs * hidden, -0.5, 0.5),
        uniform(&mut rng, hidden, -0.1, 0.1),
        uniform(&mut rng, hidden * classes, -0.5, 0.5),
    ];
    let value = |p: &[Vec<f64>]| {
        mlp(&view(&p[0], n, inputs), &labels, &view(&p[1], inputs, hidden), &p[2], &view(&p[3], hidden, classes))
    };
    let (_, dx, dw1, db1, dw2) = mlp_grad(
        &view(&params[0], n, inputs),
        &labels,
        &view(&params[1], inputs, hidden),
        &params[2],
        &view(&params[3], hidden, classes),
    );
    check("mlp", &params, &[flat(dx), flat(dw1), flat(db1), flat(dw2)], value);
}

#[test]
fn diffusion_fold_gradient_matches_central_differences() {
    let (h, w, steps) = (6, 7, 4);
    let mut rng = Rng::new(3);
    let params = vec![
        uniform(&mut rng, h * w, 0.0, 1.0),
        uniform(&mut rng, h * w, -0.5, 0.5),
        uniform(&mut rng, h * w, 0.0, 1.0),
        vec![0.1],
    ];
    let value = |p: &[Vec<f64>]| diffusion(&view(&p[0], h, w), &view(&p[1], h, w), &view(&p[2], h, w), steps, p[3][0]);
    let (_, dtemp, dpower, dtarget, dk) =
        diffusion_grad(&view(&params[0], h, w), &view(&params[1], h, w), &view(&params[2], h, w), steps, params[3][0]);
    check("diffusion", &params, &[flat(dtemp), flat(dpower), flat(dtarget), vec![dk]], value);
}

#[test]
fn scan_recurrence_gradient_matches_central_differences() {
    let mut rng = Rng::new(4);
    let params = vec![uniform(&mut rng, 30, -2.0, 2.0), vec![0.7]];
    let value = |p: &[Vec<f64>]| recurrence(&p[0], p[1][0]);
    let (_, dx, da) = recurrence_grad(&params[0], params[1][0]);
    check("recurrence", &params, &[flat(dx), vec![da]], value);
}

#[test]
fn mixed_accum_gradient_matches_central_differences() {
    let mut rng = Rng::new(5);
    let bucket: Vec<usize> = (0..40).map(|_| rng.below(6)).collect();
    let params =
        vec![uniform(&mut rng, 40, -1.5, 1.5), uniform(&mut rng, 40, -1.0, 1.0), uniform(&mut rng, 6, -1.0, 1.0)];
    let value = |p: &[Vec<f64>]| buckets(&bucket, &p[0], &p[1], &p[2]);
    let (_, dx, dc, dh0) = buckets_grad(&bucket, &params[0], &params[1], &params[2]);
    check("buckets", &params, &[flat(dx), flat(dc), flat(dh0)], value);
}

ein::ein! {
    #[grad(loss_grad, wrt(w))]
    pub fn loss(x: [[f64]], y: [f64], w: [f64]) -> f64 {
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        -sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) } / (y.len() as f64)
    }
}

/// The README's gradient-descent example, as written there: it must fit separable data.
#[test]
fn readme_gradient_descent_fits_a_model() {
    let (n, d) = (200, 3);
    let mut rng = Rng::new(5);
    let x = ndarray::Array2::from_shape_vec((n, d), uniform(&mut rng, n * d, -1.0, 1.0)).expect("shape");
    let truth = [1.5, -2.0, 0.5];
    let y: Vec<f64> =
        x.rows().into_iter().map(|row| if row.dot(&ndarray::arr1(&truth)) > 0.0 { 1.0 } else { 0.0 }).collect();
    let initial = loss(&x, &y, &vec![0.0; d]);

    let mut w = vec![0.0; x.ncols()];
    for _ in 0..200 {
        let (_value, dw) = loss_grad(&x, &y, &w); // the loss, and its gradient by w
        for (w, g) in w.iter_mut().zip(dw.as_slice()) {
            *w -= 0.5 * g;
        }
    }

    let fitted = loss(&x, &y, &w);
    assert!(fitted < 0.5 * initial, "the loss went from {initial} to {fitted}");
    let agree = x.rows().into_iter().zip(&y).filter(|(row, &y)| (row.dot(&ndarray::arr1(&w)) > 0.0) == (y > 0.5));
    assert!(agree.count() >= n * 9 / 10, "the fitted weights {w:?} classify the data");
}
