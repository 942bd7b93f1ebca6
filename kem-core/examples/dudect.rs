//! A dudect-style statistical timing test (Reparaz, Balasch, Verbauwhede,
//! "Dude, is my code constant time?", DATE 2017) of kem-core, per backend:
//! valgrind's secret taint (scripts/ct-taint.sh) cannot run AVX-512 code, so
//! this measures instead.
//!
//! For each backend, parameter set and test, two classes of inputs are
//! timed in a random interleaved order (the cycle counter, `rdtsc` between
//! `lfence`s; elsewhere the monotonic clock):
//!
//! - `decaps`: one key; class 0 a valid ciphertext, class 1 the same
//!   ciphertext with one random bit flipped, which takes the implicit
//!   rejection path (K̄ = J(z ‖ c));
//! - `keygen`: class 0 one fixed 64-byte seed (d ‖ z), class 1 fresh random
//!   seeds;
//! - `ek-parse`, the control for keygen: parsing the encapsulation key of
//!   the same seeds, which does keygen's public work (expanding Â from ρ)
//!   and nothing secret.
//!
//! Keygen samples Â from the public ρ by rejection, so its time depends on
//! ρ, which is not secret (it is part of ek). So that fixed and random
//! seeds do not differ merely in that, every seed used (the fixed one too)
//! is one whose Â entries all complete within the first three SHAKE128
//! blocks (504 bytes), as about 91% of ML-KEM-768 seeds do; what remains of
//! ρ's influence (where in those blocks the rejections fall) is public too,
//! and `ek-parse` shows its size;
//! - `keygen-net`: keygen's ticks minus those of parsing its encapsulation
//!   key right after (each measurement's own pair), which takes the public
//!   part out of each measurement: what remains is keygen's secret work
//!   (sampling s and e from σ, their NTTs, Â∘ŝ + ê, encoding).
//!
//! Welch's t-statistic compares the classes' mean times, over all
//! measurements and, as dudect does, over the measurements below each of
//! 100 percentiles (cropping the slow tail that interrupts and the other
//! processes add), plus a second-order test on the centred squares. The
//! largest |t| of the tests with enough measurements is reported: above 4.5
//! the classes' timing differs (a leak, or an input-dependent cost that is
//! not secret: see the keygen note printed with the results), above 10
//! without doubt.
//!
//! `--leaky` is the self-check: it adds to the timed decapsulation a
//! byte-by-byte comparison of the ciphertext with the valid one that stops
//! at the first difference (what a variable-time FO re-encryption check
//! does), so that a working test must flag it.
//!
//! ```text
//! cargo run --release -p kem-core --example dudect -- [--backend avx512] \
//!     [--set 768] [--test decaps] [--measurements 200000] [--leaky]
//! ```
//!
//! Not a CI gate: timing on a shared machine varies; `scripts/dudect.sh`
//! runs it.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use kem_core::{
    available_backends, with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey,
    MlKem1024, MlKem512, MlKem768, ParameterSet,
};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Digest, Sha3_512, Shake128, Shake256};

/// Cropping thresholds, as dudect: `1 - 0.5^(10 (i + 1) / 100)`.
const PERCENTILES: usize = 100;
/// A test counts once it has this many measurements (dudect's value).
const ENOUGH: u64 = 10_000;
/// Measurements per batch: inputs are prepared for a batch, then timed.
const BATCH: usize = 10_000;
/// Added to keygen-net's difference (keygen minus ek-parse ticks).
const NET_OFFSET: u64 = 1 << 32;
/// |t| above which the classes' timing differs.
const THRESHOLD: f64 = 4.5;

/// A cycle count (or nanoseconds where there is no `rdtsc`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ticks() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence and rdtsc exist on every x86-64 CPU and touch no
    // memory; the fences keep the measured code between the two reads.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn ticks() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Random bytes: SHAKE256 of the time and the process id (the class order
/// must only be unpredictable to the code measured, not secret).
struct Randomness(sha3::Shake256Reader);

impl Randomness {
    fn new() -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let seed = [
            now.as_nanos().to_le_bytes(),
            u128::from(std::process::id()).to_le_bytes(),
        ];
        Randomness(Shake256::default().chain(seed.concat()).finalize_xof())
    }

    fn fill(&mut self, buf: &mut [u8]) {
        self.0.read(buf);
    }

    fn below(&mut self, n: usize) -> usize {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        (u64::from_le_bytes(b) % n as u64) as usize
    }
}

/// Welford's running mean and variance of one class.
#[derive(Clone, Copy, Default)]
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    fn variance(&self) -> f64 {
        self.m2 / (self.n.max(2) - 1) as f64
    }
}

/// Welch's t-test between the two classes.
#[derive(Clone, Copy, Default)]
struct TTest([Moments; 2]);

impl TTest {
    fn push(&mut self, class: usize, x: f64) {
        self.0[class].push(x);
    }

    fn n(&self) -> u64 {
        self.0[0].n + self.0[1].n
    }

    fn t(&self) -> f64 {
        let [a, b] = self.0;
        (a.mean - b.mean) / (a.variance() / a.n as f64 + b.variance() / b.n as f64).sqrt()
    }
}

/// dudect's statistics: all measurements, each cropping, second order.
struct Statistics {
    thresholds: Vec<f64>,
    all: TTest,
    cropped: Vec<TTest>,
    second_order: TTest,
}

impl Statistics {
    /// Thresholds from a first batch (which is then dropped, as a warm-up).
    fn new(first: &[u64]) -> Self {
        let mut sorted = first.to_vec();
        sorted.sort_unstable();
        let thresholds = (0..PERCENTILES)
            .map(|i| {
                let p = 1.0 - 0.5f64.powf(10.0 * (i + 1) as f64 / PERCENTILES as f64);
                sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)] as f64
            })
            .collect();
        Statistics {
            thresholds,
            all: TTest::default(),
            cropped: vec![TTest::default(); PERCENTILES],
            second_order: TTest::default(),
        }
    }

    fn push(&mut self, class: usize, ticks: u64) {
        let x = ticks as f64;
        self.all.push(class, x);
        for (test, &limit) in self.cropped.iter_mut().zip(&self.thresholds) {
            if x < limit {
                test.push(class, x);
            }
        }
        if self.all.n() > ENOUGH {
            let centred = x - self.all.0[class].mean;
            self.second_order.push(class, centred * centred);
        }
    }

    /// The largest |t| of the tests with enough measurements, and its name
    /// (thresholds shown less `offset`).
    fn max_t(&self, offset: u64) -> (f64, String) {
        let mut tests = vec![(self.all, "all".to_owned())];
        tests.extend(
            self.cropped
                .iter()
                .zip(&self.thresholds)
                .map(|(t, limit)| (*t, format!("below {:.0}", limit - offset as f64))),
        );
        tests.push((self.second_order, "second order".to_owned()));
        tests
            .into_iter()
            .filter(|(test, _)| test.n() > ENOUGH)
            // A cropping that leaves a class empty has no t (the
            // uncropped test still sees that difference).
            .map(|(test, name)| (test.t().abs(), name))
            .filter(|(t, _)| t.is_finite())
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, "too few measurements".to_owned()))
    }
}

/// Which operation is timed.
#[derive(Clone, Copy, PartialEq)]
enum Test {
    Decaps,
    Keygen,
    EkParse,
    KeygenNet,
}

impl Test {
    fn name(self) -> &'static str {
        match self {
            Test::Decaps => "decaps",
            Test::Keygen => "keygen",
            Test::EkParse => "ek-parse",
            Test::KeygenNet => "keygen-net",
        }
    }
}

/// Whether every entry of Â that `seed` makes is sampled (FIPS 203
/// SampleNTT) from the first 3 SHAKE128 blocks: (ρ, σ) = G(d ‖ k), entry
/// (i, j) from SHAKE128(ρ ‖ j ‖ i).
fn matrix_fits_three_blocks<P: ParameterSet>(seed: &[u8; 64]) -> bool {
    let mut g = Sha3_512::new();
    Digest::update(&mut g, &seed[..32]);
    Digest::update(&mut g, [P::K as u8]);
    let rho = &g.finalize()[..32];
    (0..P::K * P::K).all(|entry| {
        let mut xof = Shake128::default()
            .chain(rho)
            .chain([(entry % P::K) as u8, (entry / P::K) as u8])
            .finalize_xof();
        let mut bytes = [0u8; 3 * 168];
        xof.read(&mut bytes);
        let accepted = bytes
            .chunks_exact(3)
            .map(|b| {
                let d1 = u16::from(b[0]) | (u16::from(b[1] & 15) << 8);
                let d2 = u16::from(b[1] >> 4) | (u16::from(b[2]) << 4);
                usize::from(d1 < 3329) + usize::from(d2 < 3329)
            })
            .sum::<usize>();
        accepted >= 256
    })
}

/// A random seed whose Â fits in three blocks per entry.
fn typical_seed<P: ParameterSet>(rng: &mut Randomness) -> [u8; 64] {
    let mut seed = [0u8; 64];
    loop {
        rng.fill(&mut seed);
        if matrix_fits_three_blocks::<P>(&seed) {
            return seed;
        }
    }
}

/// One batch: a class per measurement, timed in that order.
fn time_batch<P: ParameterSet>(
    test: Test,
    leaky: bool,
    rng: &mut Randomness,
    fixed: &Inputs<P>,
) -> Vec<(usize, u64)> {
    let mut classes = vec![0u8; BATCH];
    rng.fill(&mut classes);
    let classes: Vec<usize> = classes.iter().map(|b| usize::from(b & 1)).collect();
    let mut out = Vec::with_capacity(BATCH);
    match test {
        Test::Decaps => {
            // Per measurement: which valid ciphertext, and (class 1) its
            // bit-flipped copy.
            let inputs: Vec<(usize, Ciphertext<P>)> = classes
                .iter()
                .map(|&class| {
                    let j = rng.below(fixed.valid.len());
                    let mut bytes = fixed.valid[j].as_bytes().to_vec();
                    if class == 1 {
                        let bit = rng.below(8 * bytes.len());
                        bytes[bit / 8] ^= 1 << (bit % 8);
                    }
                    (
                        j,
                        Ciphertext::from_bytes(&bytes).expect("a ciphertext's length"),
                    )
                })
                .collect();
            for (&class, (j, ct)) in classes.iter().zip(&inputs) {
                let start = ticks();
                let secret = fixed.key.decapsulate(ct);
                if leaky {
                    black_box(leaky_equal(ct.as_bytes(), fixed.valid[*j].as_bytes()));
                }
                let end = ticks();
                black_box(secret);
                out.push((class, end.wrapping_sub(start)));
            }
        }
        Test::Keygen | Test::EkParse | Test::KeygenNet => {
            let seeds: Vec<[u8; 64]> = classes
                .iter()
                .map(|&class| match class {
                    0 => fixed.seed,
                    _ => typical_seed::<P>(rng),
                })
                .collect();
            let eks: Vec<Vec<u8>> = match test {
                Test::EkParse | Test::KeygenNet => seeds
                    .iter()
                    .map(|seed| {
                        let key = DecapsulationKey::<P>::from_seed(seed).expect("a seed");
                        key.encapsulation_key().as_bytes().to_vec()
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let keygen = |seed| black_box(DecapsulationKey::<P>::from_seed(black_box(seed)).ok());
            let parse = |ek| black_box(EncapsulationKey::<P>::from_bytes(black_box(ek)).ok());
            for (i, (&class, seed)) in classes.iter().zip(&seeds).enumerate() {
                let start = ticks();
                let ticks = match test {
                    Test::EkParse => {
                        parse(&eks[i]);
                        ticks().wrapping_sub(start)
                    }
                    Test::Keygen => {
                        keygen(seed);
                        ticks().wrapping_sub(start)
                    }
                    Test::KeygenNet => {
                        keygen(seed);
                        let middle = ticks();
                        parse(&eks[i]);
                        let parsed = ticks().wrapping_sub(middle);
                        // Offset so that the difference stays positive.
                        (middle.wrapping_sub(start) + NET_OFFSET).saturating_sub(parsed)
                    }
                    Test::Decaps => unreachable!(),
                };
                out.push((class, ticks));
            }
        }
    }
    out
}

/// The self-check's deliberate leak: equality that stops at the first
/// differing byte.
#[inline(never)]
fn leaky_equal(a: &[u8], b: &[u8]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if black_box(*x) != black_box(*y) {
            return false;
        }
    }
    true
}

/// What stays fixed across a run: the key, its valid ciphertexts, the seed.
struct Inputs<P: ParameterSet> {
    key: DecapsulationKey<P>,
    valid: Vec<Ciphertext<P>>,
    seed: [u8; 64],
}

fn inputs<P: ParameterSet>(rng: &mut Randomness) -> Inputs<P> {
    let mut seed = [0u8; 64];
    rng.fill(&mut seed);
    let key = DecapsulationKey::<P>::from_seed(&seed).expect("a 64-byte seed");
    let valid = (0..256)
        .map(|_| {
            let mut m = [0u8; 32];
            rng.fill(&mut m);
            key.encapsulation_key().encapsulate_deterministic(&m).0
        })
        .collect();
    let seed = typical_seed::<P>(rng);
    Inputs { key, valid, seed }
}

/// Runs one (set, test) on the current backend; returns max |t|, its test,
/// the measurements counted and the two classes' mean ticks.
fn run<P: ParameterSet>(
    test: Test,
    measurements: usize,
    leaky: bool,
) -> (f64, String, u64, [f64; 2]) {
    let mut rng = Randomness::new();
    let fixed = inputs::<P>(&mut rng);
    let first: Vec<u64> = time_batch(test, leaky, &mut rng, &fixed)
        .iter()
        .map(|m| m.1)
        .collect();
    let mut stats = Statistics::new(&first);
    for _ in 0..measurements.div_ceil(BATCH) {
        for (class, t) in time_batch(test, leaky, &mut rng, &fixed) {
            stats.push(class, t);
        }
    }
    let offset = if test == Test::KeygenNet {
        NET_OFFSET
    } else {
        0
    };
    let (t, which) = stats.max_t(offset);
    let means = stats.all.0.map(|class| class.mean - offset as f64);
    (t, which, stats.all.n(), means)
}

/// `--name value` from the command line.
fn option<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let leaky = args.iter().any(|a| a == "--leaky");
    let measurements = match option(&args, "--measurements").map(str::parse::<usize>) {
        None => 200_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("dudect: --measurements takes a positive integer");
            return ExitCode::FAILURE;
        }
    };
    let backends: Vec<BackendKind> = match option(&args, "--backend") {
        None | Some("all") => available_backends(),
        Some(name) => match BackendKind::from_name(name).filter(|k| k.is_available()) {
            Some(kind) => vec![kind],
            None => {
                eprintln!("dudect: no backend {name:?} on this CPU");
                return ExitCode::FAILURE;
            }
        },
    };
    let sets: Vec<&str> = match option(&args, "--set") {
        None | Some("all") => vec!["512", "768", "1024"],
        Some(set) => vec![set],
    };
    let tests: Vec<Test> = match (option(&args, "--test"), leaky) {
        (_, true) | (Some("decaps"), _) => vec![Test::Decaps],
        (Some("keygen"), _) => vec![Test::Keygen, Test::EkParse, Test::KeygenNet],
        _ => vec![Test::Decaps, Test::Keygen, Test::EkParse, Test::KeygenNet],
    };
    println!(
        "dudect: {measurements} measurements per row{}; |t| > {THRESHOLD} flags a timing difference",
        if leaky { ", SELF-CHECK: decaps with a leaky comparison added" } else { "" }
    );
    println!(
        "{:<9} {:<12} {:<10} {:>9} {:>8}  {:<7} {:>12} {:>12}  max |t| from",
        "backend", "set", "test", "measured", "max |t|", "verdict", "mean 0", "mean 1"
    );
    let mut flagged = false;
    for &kind in &backends {
        for set in &sets {
            for &test in &tests {
                let (t, which, n, means) = with_backend(kind, || match *set {
                    "512" => run::<MlKem512>(test, measurements, leaky),
                    "768" => run::<MlKem768>(test, measurements, leaky),
                    "1024" => run::<MlKem1024>(test, measurements, leaky),
                    other => panic!("unknown parameter set {other:?} (512, 768, 1024 or all)"),
                })
                .expect("an available backend");
                flagged |= t > THRESHOLD;
                println!(
                    "{:<9} ML-KEM-{set:<5} {:<10} {n:>9} {t:>8.2}  {:<7} {:>12.0} {:>12.0}  {which}",
                    kind.name(),
                    test.name(),
                    if t > THRESHOLD { "FLAGGED" } else { "ok" },
                    means[0],
                    means[1]
                );
            }
        }
    }
    // Exit status 2 when a row is flagged, so the script can tell.
    if flagged {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
