use ein::ein;

ein! {
    fn pdist(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } }
    }
    pub fn nearest(a: [[f64]], b: [[f64]]) -> [usize] { let d = pdsit(a, b); for i { argmin j { d[i, j] } } }
}

fn main() {}
