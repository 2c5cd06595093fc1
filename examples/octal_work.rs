//! Prints the work count ([`OctalCode::extend_work`]) and the CPU time of
//! G(0..n) for a few codes: the calibration of the octal kind's CPU
//! estimate (BENCHMARKS.md). `cargo run --release --example octal_work`.

use gametables::solvers::impartial::octal::OctalCode;

fn cpu() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_utime.tv_sec as f64 + ru.ru_utime.tv_usec as f64 * 1e-6
}

fn main() {
    let forty = format!("0.{}", "7".repeat(40));
    let twenty = format!("0.{}", "7".repeat(20));
    let cases: Vec<(String, usize)> = std::env::args()
        .skip(1)
        .collect::<Vec<_>>()
        .chunks(2)
        .map(|c| (c[0].clone(), c[1].parse().unwrap()))
        .collect();
    let cases = if cases.is_empty() {
        vec![
            ("0.77".to_string(), 1 << 20),
            ("0.07".to_string(), 1 << 20),
            (forty.clone(), 5000),
            (forty, 10000),
            (twenty, 10000),
        ]
    } else {
        cases
    };
    for (code, n) in cases {
        let c = OctalCode::parse(&code).unwrap();
        let t0 = cpu();
        let w = c.extend_work(&mut Vec::new(), n + 1).total();
        let t = cpu() - t0;
        println!(
            "{code} n={n}: work {w:.3e} cpu {t:.2} s, {:.3e} units/s",
            w as f64 / t.max(1e-9)
        );
    }
}
