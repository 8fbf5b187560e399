//! OpenDP 0.16's exact samplers as a program, one sample per line, for coco's two-sample
//! tests against its own samplers:
//!
//! * `coco-oracle NUM DEN N`: `N` samples of `sample_discrete_laplace` at scale
//!   `NUM/DEN` (`tests/library/noise_sampler.rs`, `agrees_with_opendp_sampler`);
//! * `coco-oracle gaussian NUM DEN N`: `N` samples of `sample_discrete_gaussian` at
//!   σ = `NUM/DEN` (OpenDP takes the scale σ, so σ² = NUM²/DEN²;
//!   `tests/library/gaussian_sampler.rs`, `agrees_with_opendp_sampler`).
//!
//! OpenDP draws from its own generator (rand 0.8's `thread_rng`), so runs differ.

use std::io::{BufWriter, Write};
use std::ops::Div;

use opendp::traits::samplers::{sample_discrete_gaussian, sample_discrete_laplace};

/// `n/d` in whatever rational type OpenDP asks for (dashu's `RBig`), without naming it.
fn ratio<T: From<u64> + Div<Output = T>>(n: u64, d: u64) -> T {
    T::from(n) / T::from(d)
}

fn to_i64<T: TryInto<i64>>(x: T) -> i64 {
    x.try_into().ok().expect("OpenDP sample beyond i64")
}

const USAGE: &str = "usage: coco-oracle [gaussian] NUM DEN N";

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let gaussian = args.first().is_some_and(|a| a == "gaussian");
    if gaussian {
        args.remove(0);
    }
    let numbers: Vec<u64> = args
        .iter()
        .map(|a| {
            a.parse()
                .unwrap_or_else(|_| panic!("{USAGE}: {a:?} is not a whole number"))
        })
        .collect();
    let [num, den, n] = numbers[..] else {
        panic!("{USAGE}");
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for _ in 0..n {
        let x = if gaussian {
            to_i64(sample_discrete_gaussian(ratio(num, den)).expect("OpenDP samples"))
        } else {
            to_i64(sample_discrete_laplace(ratio(num, den)).expect("OpenDP samples"))
        };
        writeln!(out, "{x}").unwrap();
    }
    out.flush().unwrap();
}
