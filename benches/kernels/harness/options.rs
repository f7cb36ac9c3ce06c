//! Command-line options of the benchmark binary.

use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct Options {
    /// Substrings of kernel names; a kernel runs if its name contains any of them.
    pub filter: Vec<String>,
    /// Size of the rayon pool everything runs in (and of matrixmultiply's); default: all CPUs.
    pub threads: Option<usize>,
    /// Small sizes and few repetitions: the smoke test CI runs so the suite never rots.
    pub quick: bool,
    /// Time the selected kernels on one thread and on `threads`, instead of the report.
    pub scaling: bool,
    pub out: PathBuf,
    pub help: bool,
}

impl Options {
    pub const USAGE: &'static str = "\
usage: cargo bench --bench kernels -- [options]

  --filter S[,S...]  run only kernels whose name contains one of the substrings
  --threads N        run everything in a rayon pool of N threads (default: all CPUs);
                     ndarray's matrixmultiply gets the same count (MATMUL_NUM_THREADS)
  --quick            small sizes, few repetitions (smoke test; well under a minute)
  --scaling          instead of the report: each kernel on 1 thread and on N, and the
                     speed-up (GEMMs keep matrixmultiply's own thread count)
  --out DIR          where kernels.json and kernels.svg go (default target/ein-bench)
  --help             this text";

    pub fn parse(arguments: impl IntoIterator<Item = String>) -> Result<Options, String> {
        let mut options = Options {
            filter: Vec::new(),
            threads: None,
            quick: false,
            scaling: false,
            out: PathBuf::from("target/ein-bench"),
            help: false,
        };
        let mut arguments = arguments.into_iter();
        while let Some(argument) = arguments.next() {
            let (flag, inline_value) = match argument.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag.to_string(), Some(value.to_string())),
                _ => (argument.clone(), None),
            };
            let mut value = |name: &str| {
                inline_value.clone().or_else(|| arguments.next()).ok_or_else(|| format!("{name} needs a value"))
            };
            match flag.as_str() {
                "--filter" => {
                    let text = value("--filter")?;
                    options.filter.extend(text.split(',').filter(|part| !part.is_empty()).map(str::to_string));
                }
                "--threads" => {
                    let text = value("--threads")?;
                    let threads: usize =
                        text.parse().map_err(|_| format!("--threads takes a positive integer, not {text:?}"))?;
                    if threads == 0 {
                        return Err("--threads takes a positive integer, not 0".to_string());
                    }
                    options.threads = Some(threads);
                }
                "--quick" => options.quick = true,
                "--scaling" => options.scaling = true,
                "--out" => options.out = PathBuf::from(value("--out")?),
                "--help" | "-h" => options.help = true,
                // `cargo bench` passes `--bench` to every bench binary.
                "--bench" => {}
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(options)
    }

    /// Whether the kernel called `name` passes the filter.
    pub fn selects(&self, name: &str) -> bool {
        self.filter.is_empty() || self.filter.iter().any(|part| name.contains(part.as_str()))
    }
}
