//! `coco-oracle NUM DEN N`: `N` samples of OpenDP 0.16's exact discrete Laplace sampler
//! at scale `NUM/DEN`, one per line, for coco's two-sample test against its own sampler
//! (`tests/library/noise_sampler.rs`, `agrees_with_opendp_sampler`).
//!
//! OpenDP draws from its own generator (rand 0.8's `thread_rng`), so runs differ.

use std::io::{BufWriter, Write};
use std::ops::Div;

/// `n/d` in whatever rational type OpenDP asks for (dashu's `RBig`), without naming it.
fn ratio<T: From<u64> + Div<Output = T>>(n: u64, d: u64) -> T {
    T::from(n) / T::from(d)
}

fn to_i64<T: TryInto<i64>>(x: T) -> i64 {
    x.try_into().ok().expect("OpenDP sample beyond i64")
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("NUM DEN N: whole numbers"))
        .collect();
    let [num, den, n] = args[..] else {
        panic!("usage: coco-oracle NUM DEN N");
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for _ in 0..n {
        let x = to_i64(
            opendp::traits::samplers::sample_discrete_laplace(ratio(num, den))
                .expect("OpenDP samples"),
        );
        writeln!(out, "{x}").unwrap();
    }
    out.flush().unwrap();
}
