//! Facts about the machine a measurement ran on, read from `/proc`, `/sys`
//! and a few `--version` outputs, for reports and evidence records. Every
//! fact is optional: what cannot be read is reported as missing, never
//! guessed.

use std::fs;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// One machine fact: a label and its value, or `None` when unreadable.
pub type Fact = (&'static str, Option<String>);

/// The assessment environment: CPU, clocks, memory, OS and toolchain.
pub fn facts() -> Vec<Fact> {
    vec![
        ("CPU model", cpu_model()),
        ("logical CPUs online", logical_cpus()),
        ("CPU flags used by kem-core", cpu_flags()),
        ("scaling governor (cpu0)", read_trimmed(CPUFREQ_GOVERNOR)),
        ("current clock (cpu0)", read_khz(CPUFREQ_CUR)),
        ("maximum clock (cpu0)", read_khz(CPUFREQ_MAX)),
        ("memory", memory_total()),
        ("operating system", os_name()),
        ("kernel", read_trimmed("/proc/sys/kernel/osrelease")),
        ("rustc (building these tools)", rustc_version()),
        ("C compiler", first_line_of(&["cc", "--version"])),
    ]
}

const CPUFREQ_GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
const CPUFREQ_CUR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq";
const CPUFREQ_MAX: &str = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq";

/// The CPU model of `/proc/cpuinfo` (`model name` on x86, else the
/// `Model`, `cpu model` or `uarch` line of other architectures).
pub fn cpu_model() -> Option<String> {
    ["model name", "Model", "cpu model", "uarch"]
        .into_iter()
        .find_map(cpuinfo_field)
}

/// The host in brief, for JSON files: OS, architecture, CPU, logical CPUs,
/// Unix time.
pub fn environment_json() -> serde_json::Value {
    serde_json::json!({
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "cpu": cpu_model(),
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "unix_time": SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok(),
    })
}

/// The version of the linked libcrypto: the `3.0.19` of `OpenSSL 3.0.19
/// 27 Jan 2026`.
pub fn openssl_version() -> String {
    let full = openssl::version::version();
    full.split_whitespace().nth(1).unwrap_or(full).to_owned()
}

fn cpuinfo_field(name: &str) -> Option<String> {
    let text = fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_owned())
    })
}

fn logical_cpus() -> Option<String> {
    Some(std::thread::available_parallelism().ok()?.to_string())
}

/// The SIMD flags that matter to kem-core's backends, as the CPU reports
/// them.
fn cpu_flags() -> Option<String> {
    let flags = cpuinfo_field("flags")?;
    let wanted = ["avx2", "bmi1", "bmi2", "avx512f", "avx512bw", "avx512vl"];
    let present: Vec<&str> = wanted
        .into_iter()
        .filter(|w| flags.split_whitespace().any(|f| f == *w))
        .collect();
    match present.is_empty() {
        true => Some("none of avx2/avx512".to_owned()),
        false => Some(present.join(" ")),
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

fn read_khz(path: &str) -> Option<String> {
    let khz: f64 = read_trimmed(path)?.parse().ok()?;
    Some(format!("{:.3} GHz", khz / 1e6))
}

fn memory_total() -> Option<String> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kib: f64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(format!("{:.1} GiB", kib / (1024.0 * 1024.0)))
}

fn os_name() -> Option<String> {
    let text = fs::read_to_string("/etc/os-release").ok()?;
    let name = text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?;
    Some(name.trim_matches('"').to_owned())
}

/// The rustc that compiled test-tools (recorded by its build script).
pub fn rustc_version() -> Option<String> {
    option_env!("TEST_TOOLS_RUSTC_VERSION").map(str::to_owned)
}

/// The first line of a command's stdout, if it runs and succeeds.
pub fn first_line_of(argv: &[&str]) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let output = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().next()?.trim();
    (output.status.success() && !line.is_empty()).then(|| line.to_owned())
}

/// `seconds` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn utc_timestamp(seconds: u64) -> String {
    // Days to a proleptic Gregorian date: Howard Hinnant's
    // `civil_from_days`, with eras of 400 years from 0000-03-01.
    let z = (seconds / 86_400) as i64 + 719_468;
    let (era, day_of_era) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    let rest = seconds % 86_400;
    let (hours, minutes, secs) = (rest / 3600, rest / 60 % 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{secs:02}Z")
}

/// The current time as [`utc_timestamp`].
pub fn utc_now() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    utc_timestamp(now.map_or(0, |d| d.as_secs()))
}
