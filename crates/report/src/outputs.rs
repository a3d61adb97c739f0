//! Which files a run writes: every output by default, a chosen set with `--outputs`.
//!
//! The per-packet `delay.csv` is the one output whose size grows with the packets (about
//! 65 bytes a packet and port); writing it dominates a big run. By default it is written
//! when the run kept at most [`DELAY_CSV_ROWS`] records (about 65 MB), and the exact
//! distribution `delay_histogram.csv` is written instead above that — the same
//! distribution, one row per distinct delay. Naming `delay` asks for `delay.csv`
//! whatever its size, `delay-histogram` for the histogram whatever the size. A run that
//! kept no per-packet records (more than `max_delay_records`) can only write the
//! histogram.

use std::fmt;

use linkshare_sim::RunResult;

/// The default largest `delay.csv`, in rows (packets times ports).
pub const DELAY_CSV_ROWS: u64 = 1_000_000;

/// A file, or a group of files, of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `summary.json`.
    Summary,
    /// `throughput.csv`.
    Throughput,
    /// `flow_throughput.csv`.
    FlowThroughput,
    /// `delay.csv`, one row per packet and port.
    Delay,
    /// `delay_histogram.csv`, the exact delay distribution of every leaf.
    DelayHistogram,
    /// `backlog.csv`.
    Backlog,
    /// `drops.csv`.
    Drops,
    /// `service.csv`: arrivals, drops, waits and throughput per leaf and window.
    Service,
    /// `ratios.csv`: the delay and loss ratios achieved between consecutive leaves with
    /// a ratio objective (written only when some leaf has one).
    Ratios,
    /// `flows.csv`.
    Flows,
    /// `bursts.csv`.
    Bursts,
    /// `tcp_trace.csv` and `tcp_cwnd.svg` (when a TCP flow is traced).
    TcpTrace,
    /// `throughput.svg`, `delay_cdf.svg`, `backlog.svg`; with objectives `wait.svg`,
    /// `loss.svg`, and with ratio objectives `delay_ratios.svg`, `loss_ratios.svg`
    /// ([`crate::service_plots`]).
    Plots,
}

impl Output {
    /// Every output, in the order they are listed.
    pub const ALL: [Output; 13] = [
        Output::Summary,
        Output::Throughput,
        Output::FlowThroughput,
        Output::Delay,
        Output::DelayHistogram,
        Output::Backlog,
        Output::Drops,
        Output::Service,
        Output::Ratios,
        Output::Flows,
        Output::Bursts,
        Output::TcpTrace,
        Output::Plots,
    ];

    /// Its name in `--outputs`.
    pub fn name(self) -> &'static str {
        match self {
            Output::Summary => "summary",
            Output::Throughput => "throughput",
            Output::FlowThroughput => "flow-throughput",
            Output::Delay => "delay",
            Output::DelayHistogram => "delay-histogram",
            Output::Backlog => "backlog",
            Output::Drops => "drops",
            Output::Service => "service",
            Output::Ratios => "ratios",
            Output::Flows => "flows",
            Output::Bursts => "bursts",
            Output::TcpTrace => "tcp-trace",
            Output::Plots => "plots",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// The delay file a run writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayFile {
    /// `delay.csv`.
    PerPacket,
    /// `delay_histogram.csv`.
    Histogram,
    /// Neither.
    None,
}

impl DelayFile {
    /// `"per-packet"`, `"histogram"` or `"none"`: the `delay_records` of `summary.json`.
    pub fn label(self) -> &'static str {
        match self {
            DelayFile::PerPacket => "per-packet",
            DelayFile::Histogram => "histogram",
            DelayFile::None => "none",
        }
    }
}

/// The outputs a run writes (see the [module docs](self)).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Outputs {
    chosen: u16,
    /// The delay file by size (the default), rather than as named.
    automatic_delay: bool,
}

impl Default for Outputs {
    /// Everything; `delay.csv` or `delay_histogram.csv` by the size of the run.
    fn default() -> Outputs {
        Outputs {
            chosen: Output::ALL.iter().map(|o| o.bit()).sum(),
            automatic_delay: true,
        }
    }
}

impl fmt::Debug for Outputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Outputs::default() {
            return write!(f, "Outputs(default)");
        }
        let names: Vec<&str> = Output::ALL
            .iter()
            .filter(|o| self.contains(**o))
            .map(|o| o.name())
            .collect();
        write!(f, "Outputs({})", names.join(","))
    }
}

impl Outputs {
    /// Whether `output` is written (for the delay files: may be, see
    /// [`Outputs::delay_file`]).
    pub fn contains(&self, output: Output) -> bool {
        self.chosen & output.bit() != 0
    }

    /// The names `--outputs` takes.
    pub fn names() -> String {
        let names: Vec<&str> = Output::ALL.iter().map(|o| o.name()).collect();
        format!("default, all, {}", names.join(", "))
    }

    /// Reads a comma-separated list: output names add, `-name` removes, `default` adds
    /// the default set (with the delay file by size), `all` everything (both delay
    /// files). The set starts empty: `default,-delay` is everything but the delay files,
    /// `summary,throughput` only those two.
    pub fn parse(list: &str) -> Result<Outputs, String> {
        let mut out = Outputs {
            chosen: 0,
            automatic_delay: false,
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (remove, name) = match item.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, item),
            };
            let bits = match name {
                "default" => {
                    out.automatic_delay = !remove;
                    Outputs::default().chosen
                }
                "all" => Outputs::default().chosen,
                _ => match Output::ALL.iter().find(|o| o.name() == name) {
                    Some(o) => o.bit(),
                    None => {
                        return Err(format!(
                            "unknown output `{name}`; known outputs: {}",
                            Outputs::names()
                        ));
                    }
                },
            };
            if remove {
                out.chosen &= !bits;
            } else {
                out.chosen |= bits;
            }
        }
        let delays = Output::Delay.bit() | Output::DelayHistogram.bit();
        if out.chosen & delays != delays {
            out.automatic_delay = false;
        }
        Ok(out)
    }

    /// The delay file written for `result`.
    pub fn delay_file(&self, result: &RunResult) -> DelayFile {
        let kept = result.per_packet_delays();
        let rows: u64 = result.links.iter().map(|l| l.delay_log.records()).sum();
        let per_packet = self.contains(Output::Delay);
        let histogram = self.contains(Output::DelayHistogram);
        if per_packet && kept && !(self.automatic_delay && rows > DELAY_CSV_ROWS) {
            DelayFile::PerPacket
        } else if histogram || per_packet {
            DelayFile::Histogram
        } else {
            DelayFile::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_sets() {
        assert_eq!(Outputs::parse("default").unwrap(), Outputs::default());
        let o = Outputs::parse("default,-delay,-delay-histogram").unwrap();
        assert!(!o.contains(Output::Delay) && o.contains(Output::Plots));
        let o = Outputs::parse("summary, throughput").unwrap();
        assert!(o.contains(Output::Summary) && o.contains(Output::Throughput));
        assert!(!o.contains(Output::Plots));
        let all = Outputs::parse("all").unwrap();
        assert!(all.contains(Output::Delay) && !all.automatic_delay);
        let e = Outputs::parse("summary,delays").unwrap_err();
        assert!(e.contains("unknown output `delays`") && e.contains("delay-histogram"));
    }
}
