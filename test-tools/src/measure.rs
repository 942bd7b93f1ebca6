//! The measurement model every benchmark tool shares: what ran (an
//! implementation's operation on a parameter set), its timed [`Trial`]s and
//! the statistics over them, plus the interleaved per-call timing of
//! in-process operations ([`Bench`], [`measure_trials`]). [`crate::table`]
//! renders [`Measurement`]s.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use crate::timer;

/// What a benchmark measures, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub enum Operation {
    /// Key generation (from a 64-byte seed d ‖ z in process).
    Keygen,
    /// Encapsulation (from the serialized encapsulation key in process).
    Encaps,
    /// Decapsulation (from the serialized decapsulation key and ciphertext).
    Decaps,
    /// Encaps with an already parsed (expanded) encapsulation key.
    EncapsCached,
    /// Decaps with an already parsed (expanded) decapsulation key.
    DecapsCached,
    /// A full TLS 1.3 handshake.
    Handshake,
}

impl Operation {
    /// The five in-process KEM operations, in report order.
    pub const KEM: [Operation; 5] = [
        Operation::Keygen,
        Operation::Encaps,
        Operation::Decaps,
        Operation::EncapsCached,
        Operation::DecapsCached,
    ];
    /// The three operations `openssl speed` and EVP measure.
    pub const EVP: [Operation; 3] = [Operation::Keygen, Operation::Encaps, Operation::Decaps];

    /// The label of tables and CSV.
    pub fn label(self) -> &'static str {
        match self {
            Operation::Keygen => "keygen",
            Operation::Encaps => "encaps",
            Operation::Decaps => "decaps",
            Operation::EncapsCached => "encaps (cached key)",
            Operation::DecapsCached => "decaps (cached key)",
            Operation::Handshake => "handshake",
        }
    }

    /// The operation a word of `openssl speed` output names (`keygen`,
    /// `keygens`, `genkey`, `encaps`, `encap`, `decaps`, `decap`).
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "keygen" | "keygens" | "genkey" => Some(Operation::Keygen),
            "encaps" | "encap" => Some(Operation::Encaps),
            "decaps" | "decap" => Some(Operation::Decaps),
            _ => None,
        }
    }
}

impl From<Operation> for &'static str {
    fn from(operation: Operation) -> Self {
        operation.label()
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// The per-call counter readings of a trial whose every call was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PerCall {
    /// Median call, in [`timer::UNIT`].
    pub median: u64,
    /// Fastest call.
    pub min: u64,
}

/// One timed batch of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Trial {
    /// Operations in the batch (0 where only a rate is known).
    pub operations: u64,
    /// Wall-clock seconds of the batch.
    pub seconds: f64,
    /// Operations per wall-clock second.
    pub ops_per_sec: f64,
    /// Counter ticks over the whole batch, when counted.
    pub ticks: Option<u64>,
    /// The per-call readings, when every call was timed.
    pub per_call: Option<PerCall>,
}

impl Trial {
    /// `operations` in `seconds`, with the batch's counter ticks if known.
    pub fn timed(operations: u64, seconds: f64, ticks: Option<u64>) -> Self {
        Trial {
            operations,
            seconds,
            ops_per_sec: operations as f64 / seconds,
            ticks,
            per_call: None,
        }
    }

    /// A rate someone else measured (`openssl speed`'s ops/s).
    pub fn rate(ops_per_sec: f64) -> Self {
        Trial {
            ops_per_sec,
            ..Trial::timed(0, 0.0, None)
        }
    }

    /// A batch whose every call was timed: `samples` (sorted here) over
    /// `seconds` of wall-clock time. An empty batch has no per-call figures.
    pub fn from_samples(samples: &mut [u64], seconds: f64) -> Self {
        samples.sort_unstable();
        let n = samples.len();
        let per_call = (n > 0).then(|| {
            // The mean of the two middle values (the same one when n is
            // odd), without overflow.
            let (a, b) = (samples[(n - 1) / 2], samples[n / 2]);
            let median = a / 2 + b / 2 + (a % 2 + b % 2) / 2;
            let min = samples[0];
            PerCall { median, min }
        });
        let ticks: u128 = samples.iter().map(|&s| u128::from(s)).sum();
        Trial {
            per_call,
            ..Trial::timed(n as u64, seconds, u64::try_from(ticks).ok())
        }
    }

    fn seconds_per_op(&self) -> f64 {
        match self.operations {
            0 => 1.0 / self.ops_per_sec,
            n => self.seconds / n as f64,
        }
    }
}

/// The trials of one implementation's operation on one parameter set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    /// The implementation (`kem-core/avx2`, `ours`, `native`, ...).
    pub implementation: String,
    /// The parameter set or TLS group, by its canonical name.
    pub parameter_set: String,
    /// The algorithm as the implementation names it (`mlkem768`).
    pub algorithm: String,
    /// What ran.
    pub operation: Operation,
    /// The timed batches, in order.
    pub trials: Vec<Trial>,
}

impl Measurement {
    /// The measurement of `implementation` for the same parameter set and
    /// operation as `self`, if `measurements` holds one: the row a ratio
    /// column compares `self` with.
    pub fn counterpart<'a>(
        &self,
        measurements: &'a [Measurement],
        implementation: &str,
    ) -> Option<&'a Measurement> {
        measurements.iter().find(|m| {
            (m.implementation == implementation && m.operation == self.operation)
                && m.parameter_set == self.parameter_set
        })
    }

    /// A measurement without trials yet, of an algorithm named as its
    /// parameter set.
    pub fn new(implementation: &str, parameter_set: &str, operation: Operation) -> Self {
        Measurement {
            implementation: implementation.to_owned(),
            parameter_set: parameter_set.to_owned(),
            algorithm: parameter_set.to_owned(),
            operation,
            trials: Vec::new(),
        }
    }

    /// The median ops/s over `baseline`'s (above 1: faster), as every ratio
    /// column gives it; `None` without a baseline or a finite ratio.
    pub fn ratio_to(&self, baseline: Option<&Measurement>) -> Option<f64> {
        Some(self.ops_per_sec() / baseline?.ops_per_sec()).filter(|r| r.is_finite())
    }

    /// Operations over all trials.
    pub fn operations(&self) -> u64 {
        self.trials.iter().map(|t| t.operations).sum()
    }

    /// The median over trials of operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        median(self.trials.iter().map(|t| t.ops_per_sec)).unwrap_or(f64::NAN)
    }

    /// The median over trials of seconds per operation.
    pub fn median_seconds_per_op(&self) -> f64 {
        median(self.trials.iter().map(Trial::seconds_per_op)).unwrap_or(f64::NAN)
    }

    /// Seconds per operation over all trials.
    pub fn mean_seconds_per_op(&self) -> f64 {
        self.trials.iter().map(|t| t.seconds).sum::<f64>() / self.operations() as f64
    }

    /// Counter ticks per operation over all trials, when counted.
    pub fn mean_ticks(&self) -> Option<f64> {
        let ticks: Option<u64> = self.trials.iter().map(|t| t.ticks).sum();
        Some(ticks? as f64 / self.operations() as f64)
    }

    /// The median over trials of each trial's median call, when every call
    /// was timed.
    pub fn median_ticks(&self) -> Option<u64> {
        let medians: Option<Vec<f64>> = self
            .trials
            .iter()
            .map(|t| Some(t.per_call?.median as f64))
            .collect();
        median(medians?).map(|m| m.round() as u64)
    }

    /// The fastest call of any trial, when every call was timed.
    pub fn min_ticks(&self) -> Option<u64> {
        let mins: Option<Vec<u64>> = self.trials.iter().map(|t| Some(t.per_call?.min)).collect();
        mins?.into_iter().min()
    }
}

/// The median of `values` (the mean of the middle two for an even count);
/// `None` when empty.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut sorted: Vec<f64> = values.into_iter().collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    (n > 0).then(|| (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0)
}

/// How many times to run an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Untimed runs first, to warm caches, branch predictors and clocks.
    pub warmup: usize,
    /// Timed runs per trial (at least 1).
    pub iterations: usize,
}

/// An in-process operation to time call by call, boxed so that the
/// operations of several implementations can run interleaved.
pub struct Bench<'a> {
    /// Implementation label, e.g. `"kem-core/portable"`.
    pub implementation: String,
    /// What is measured.
    pub operation: Operation,
    /// `run(true)` calls the operation, keeping its result; `run(false)`
    /// drops the kept result (outside the timed region).
    run: Box<dyn FnMut(bool) + 'a>,
}

impl<'a> Bench<'a> {
    /// Wraps `f`. Each timed call covers `f` and moving its result into a
    /// slot; the result is dropped after the timing. The closure should
    /// `black_box` its inputs.
    pub fn new<R: 'a, F: FnMut() -> R + 'a>(
        implementation: impl Into<String>,
        operation: Operation,
        mut f: F,
    ) -> Self {
        let mut out: Option<R> = None;
        let run = Box::new(move |keep: bool| match keep {
            true => out = Some(black_box(f())),
            false => drop(black_box(out.take())),
        });
        let implementation = implementation.into();
        Self {
            implementation,
            operation,
            run,
        }
    }

    fn call(&mut self) {
        (self.run)(true);
        (self.run)(false);
    }
}

/// Times several operations fairly on a noisy machine, `trials` times:
/// after `config.warmup` untimed calls of each, each trial's
/// `config.iterations` timed calls of each bench are split into `rounds`
/// chunks that run round-robin (bench 1, bench 2, ..., bench 1, ...), each
/// chunk after one untimed call to re-warm caches, so that a burst of
/// background load hits every bench alike. `progress` hears of each trial
/// (from 1) before it runs. Results are in the order of `benches`.
pub fn measure_trials(
    parameter_set: &str,
    config: Config,
    benches: &mut [Bench<'_>],
    rounds: usize,
    trials: usize,
    mut progress: impl FnMut(usize),
) -> Vec<Measurement> {
    let n = config.iterations.max(1);
    let rounds = rounds.clamp(1, n);
    for bench in benches.iter_mut() {
        (0..config.warmup).for_each(|_| bench.call());
    }
    let mut measurements: Vec<Measurement> = benches
        .iter()
        .map(|b| Measurement::new(&b.implementation, parameter_set, b.operation))
        .collect();
    for trial in 1..=trials {
        progress(trial);
        let mut samples: Vec<Vec<u64>> = benches.iter().map(|_| Vec::with_capacity(n)).collect();
        let mut elapsed = vec![0f64; benches.len()];
        for round in 0..rounds {
            let chunk = n * (round + 1) / rounds - n * round / rounds;
            for (i, bench) in benches.iter_mut().enumerate() {
                bench.call();
                let wall = Instant::now();
                for _ in 0..chunk {
                    let start = timer::now();
                    (bench.run)(true);
                    let end = timer::now();
                    (bench.run)(false);
                    samples[i].push(end.wrapping_sub(start));
                }
                elapsed[i] += wall.elapsed().as_secs_f64();
            }
        }
        for ((m, samples), seconds) in measurements.iter_mut().zip(&mut samples).zip(elapsed) {
            m.trials.push(Trial::from_samples(samples, seconds));
        }
    }
    measurements
}
