//! The machine a run was taken on, read from /proc/cpuinfo (Linux) and the standard library.

use std::collections::BTreeSet;

use super::json::Json;

#[derive(Clone, Debug)]
pub struct Machine {
    pub cpu_model: String,
    /// `cpu family` / `model` from cpuinfo, which name the microarchitecture when the model
    /// name does not (virtual machines often say only "AMD EPYC").
    pub cpu_family_model: Option<String>,
    pub physical_cores: Option<usize>,
    pub logical_cpus: usize,
    pub threads: usize,
    pub megahertz: Option<f64>,
    /// The SIMD extensions the CPU has, of those that matter to generated loops.
    pub simd: Vec<&'static str>,
    /// The SIMD extensions this binary was compiled for (what LLVM may use without run-time
    /// detection): a default x86-64 build has only SSE2.
    pub compiled_for: Vec<&'static str>,
    pub rustc: Option<String>,
    /// /proc/loadavg's 1-minute figure when the run started: other work on the machine
    /// (builds, tests) competes with the benchmark, and this says how much there was.
    pub load_average: Option<f64>,
}

impl Machine {
    pub fn read(threads: usize) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_string())
            })
        };
        let mut cores = BTreeSet::new();
        let mut physical_id = String::new();
        for line in cpuinfo.lines() {
            if let Some((key, value)) = line.split_once(':') {
                match key.trim() {
                    "physical id" => physical_id = value.trim().to_string(),
                    "core id" => {
                        cores.insert((physical_id.clone(), value.trim().to_string()));
                    }
                    _ => {}
                }
            }
        }
        let flags: BTreeSet<String> =
            field("flags").unwrap_or_default().split_whitespace().map(str::to_string).collect();
        let simd = ["sse4_2", "avx", "avx2", "fma", "avx512f", "neon", "asimd"]
            .into_iter()
            .filter(|flag| flags.contains(*flag))
            .collect();
        let mut compiled_for = Vec::new();
        if cfg!(target_feature = "sse2") {
            compiled_for.push("sse2");
        }
        if cfg!(target_feature = "avx2") {
            compiled_for.push("avx2");
        }
        if cfg!(target_feature = "fma") {
            compiled_for.push("fma");
        }
        if cfg!(target_feature = "avx512f") {
            compiled_for.push("avx512f");
        }
        if cfg!(target_feature = "neon") {
            compiled_for.push("neon");
        }
        let rustc = std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string()))
            .arg("--version")
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string());
        Machine {
            cpu_model: field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            cpu_family_model: match (field("cpu family"), field("model")) {
                (Some(family), Some(model)) => Some(format!("family {family}, model {model}")),
                _ => None,
            },
            physical_cores: (!cores.is_empty()).then_some(cores.len()),
            logical_cpus: std::thread::available_parallelism().map_or(1, usize::from),
            threads,
            megahertz: field("cpu MHz").and_then(|text| text.parse().ok()),
            simd,
            compiled_for,
            rustc,
            load_average: load_average(),
        }
    }

    pub fn describe(&self) -> String {
        let mut cpu = self.cpu_model.clone();
        if let Some(family_model) = &self.cpu_family_model {
            cpu.push_str(&format!(" ({family_model})"));
        }
        if let Some(megahertz) = self.megahertz {
            cpu.push_str(&format!(", {:.2} GHz", megahertz / 1000.0));
        }
        let cores = match self.physical_cores {
            Some(cores) => format!("{cores} cores, {} logical CPUs", self.logical_cpus),
            None => format!("{} logical CPUs", self.logical_cpus),
        };
        let mut text = format!(
            "machine: {cpu}; {cores}; benchmark threads: {}\nSIMD on the CPU: {}; compiled for: {}",
            self.threads,
            self.simd.join(" "),
            self.compiled_for.join(" ")
        );
        if let Some(rustc) = &self.rustc {
            text.push_str(&format!("; {rustc}"));
        }
        if let Some(load) = self.load_average {
            text.push_str(&format!(
                "\nload average at start: {load:.2} (other work on the machine competes with the benchmark)"
            ));
        }
        text
    }

    pub fn to_json(&self) -> Json {
        Json::object([
            ("cpu_model", Json::from(self.cpu_model.as_str())),
            ("cpu_family_model", self.cpu_family_model.as_deref().map_or(Json::Null, Json::from)),
            ("physical_cores", self.physical_cores.map_or(Json::Null, |cores| Json::from(cores as f64))),
            ("logical_cpus", Json::from(self.logical_cpus as f64)),
            ("threads", Json::from(self.threads as f64)),
            ("megahertz", self.megahertz.map_or(Json::Null, Json::from)),
            ("simd", Json::Array(self.simd.iter().map(|flag| Json::from(*flag)).collect())),
            ("compiled_for", Json::Array(self.compiled_for.iter().map(|flag| Json::from(*flag)).collect())),
            ("rustc", self.rustc.as_deref().map_or(Json::Null, Json::from)),
            ("load_average_at_start", self.load_average.map_or(Json::Null, Json::from)),
        ])
    }
}

/// The 1-minute load average from /proc/loadavg, where there is one.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}
