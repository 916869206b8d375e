//! The raw fabric's figures: a `fi_pingpong` server and client pair (from
//! libfabric's utilities) on the provider the conduit uses, on this host.
//!
//! `fi_pingpong` prints, per size, `usec/xfer` = elapsed / iterations / 2:
//! the one-way latency (half a round trip), and `MB/sec` = bytes moved in
//! both directions / elapsed (10^6 bytes per second, one message in flight).
//!
//! It has no warm-up: its timed loop starts with the first message, so a
//! provider that connects on first use (ofi_rxm, tcp, ofi_rxd, sockets)
//! has its connection set-up in the figure. Over tcp;ofi_rxm here that is
//! about 21 ms, +7% on the one-way time of 20,000 round trips and x15 on
//! that of 100, while the conduit's figures are taken after a warm-up. So
//! [`Pingpong::run`] runs it twice, with `n` and with `n / 10` iterations,
//! and takes the time per message from the difference
//! ([`without_start_up`]).

use crate::child::Guard;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How `fi_pingpong` is run for one provider.
#[derive(Debug, Clone, Serialize)]
pub struct Pingpong {
    /// The binary.
    pub binary: PathBuf,
    /// `-p` argument (`shm`, `tcp;ofi_rxm`).
    pub provider: String,
    /// Extra environment of both processes (e.g. `FI_TCP_IFACE=lo`).
    pub env: Vec<(String, String)>,
}

/// One `fi_pingpong` measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PingpongResult {
    /// One-way latency in µs: of one run, the finer of `usec/xfer` and
    /// `size / MB/sec` ([`parse`]); from two runs, the time per message
    /// without the start-up ([`without_start_up`]).
    pub one_way_us: f64,
    /// `MB/sec` of one run, or `size / one_way_us` from two.
    pub mb_per_s: f64,
    /// The start-up that [`without_start_up`] took out of the longer run,
    /// in µs (its `2 x n x usec/xfer` less `2 x n x one_way_us`); `None`
    /// for one run, or when the difference was not positive (the runs too
    /// short for the noise), where the longer run's figures are kept.
    pub start_up_us: Option<f64>,
}

/// The shorter of [`Pingpong::run`]'s two runs has `1 / WARM_FRACTION` of
/// the iterations.
pub const WARM_FRACTION: usize = 10;

/// The time per message of `n` round trips without the fixed start-up,
/// from a run of `n` (`long`) and one of `k < n` (`short`) round trips:
/// each took `T = 2 x iterations x usec/xfer`, so
/// `one_way = (T(n) - T(k)) / (2 (n - k))`.
pub fn without_start_up(
    size: usize,
    (n, long): (usize, PingpongResult),
    (k, short): (usize, PingpongResult),
) -> PingpongResult {
    let total = |i: usize, r: &PingpongResult| 2.0 * i as f64 * r.one_way_us;
    let one_way = (total(n, &long) - total(k, &short)) / (2.0 * n.saturating_sub(k) as f64);
    if !(one_way.is_finite() && one_way > 0.0) {
        return long;
    }
    PingpongResult {
        one_way_us: one_way,
        mb_per_s: size as f64 / one_way,
        start_up_us: Some(total(n, &long) - 2.0 * n as f64 * one_way),
    }
}

/// Find `fi_pingpong` on `PATH`.
pub fn find_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("fi_pingpong"))
        .find(|p| p.is_file())
}

impl Pingpong {
    /// The pairing for the conduit's provider name as libfabric reports
    /// it (`shm`, `tcp`, `tcp;ofi_rxm`, `udp;ofi_rxd`, ...): `fi_pingpong`
    /// runs over exactly that stack, the IP providers on the loopback
    /// interface. A bare `tcp` is libfabric 1.18+'s native RDM endpoint,
    /// which the conduit picks there; running `fi_pingpong` over
    /// `tcp;ofi_rxm` beside it (as this did until 2026-11-29) measured
    /// another, slower stack (docs/PERFORMANCE.md).
    pub fn for_provider(binary: &Path, provider: &str) -> Pingpong {
        let base = provider.split(';').next().unwrap_or(provider);
        let env = match base {
            "tcp" => vec![("FI_TCP_IFACE".to_string(), "lo".to_string())],
            "udp" => vec![("FI_UDP_IFACE".to_string(), "lo".to_string())],
            _ => vec![],
        };
        Pingpong {
            binary: binary.to_path_buf(),
            provider: provider.to_string(),
            env,
        }
    }

    fn command(&self, port: u16, size: usize, iters: usize, server: bool) -> Command {
        let mut c = Command::new(&self.binary);
        // The raw fabric runs with libfabric's defaults: none of the job's
        // FI_* or GASNET_* settings.
        for (k, _) in std::env::vars() {
            if k.starts_with("FI_") || k.starts_with("GASNET_") {
                c.env_remove(k);
            }
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.args(["-p", &self.provider, "-e", "rdm"]).args([
            "-S",
            &size.to_string(),
            "-I",
            &iters.to_string(),
        ]);
        if server {
            c.args(["-B", &port.to_string()]);
        } else {
            c.args(["-P", &port.to_string(), "127.0.0.1"]);
        }
        c
    }

    /// The command lines used for `size` (for the report).
    pub fn describe(&self, size: usize, iters: usize) -> String {
        let env: String = self.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        format!(
            "{env}{b} -p '{p}' -e rdm -S {size} -I {iters} -B PORT  &  {env}{b} -p '{p}' -e rdm -S {size} -I {iters} -P PORT 127.0.0.1; then the same with -I {short}; one-way time = the difference of the two runs' times / the difference of their messages (no connection set-up)",
            short = iters / WARM_FRACTION,
            b = self.binary.display(),
            p = self.provider
        )
    }

    /// Measure one size: runs of `iters` and `iters / WARM_FRACTION`
    /// round trips, the time per message taken from their difference
    /// ([`without_start_up`]; one run when `iters` is below
    /// `WARM_FRACTION`).
    pub fn run(
        &self,
        size: usize,
        iters: usize,
        deadline: Duration,
    ) -> Result<PingpongResult, String> {
        let long = self.run_once(size, iters, deadline)?;
        let k = iters / WARM_FRACTION;
        if k == 0 {
            return Ok(long);
        }
        let short = self.run_once(size, k, deadline)?;
        Ok(without_start_up(size, (iters, long), (k, short)))
    }

    /// Run a server and a client for one size; returns the client's figures.
    pub fn run_once(
        &self,
        size: usize,
        iters: usize,
        deadline: Duration,
    ) -> Result<PingpongResult, String> {
        let port = free_port().map_err(|e| format!("no free TCP port: {e}"))?;
        let what = format!("fi_pingpong ({})", self.binary.display());
        let mut server = Guard::spawn(self.command(port, size, iters, true), &what)?;
        let start = Instant::now();
        // The client does not retry its control connection: wait until the
        // server listens (seen in /proc/net/tcp, without connecting to it).
        while !listening(port) {
            if let Some(st) = server.exited() {
                return Err(format!(
                    "fi_pingpong server exited early ({st}): {}",
                    server.stderr()
                ));
            }
            if start.elapsed() > Duration::from_secs(10) {
                return Err("fi_pingpong server did not listen within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut client = Guard::spawn(self.command(port, size, iters, false), &what)?;
        let c = client.wait(start + deadline)?;
        let s = server.wait(start + deadline)?;
        let (cout, cok) = (format!("{}{}", c.stdout, c.stderr), c.ok);
        let (sout, sok) = (format!("{}{}", s.stdout, s.stderr), s.ok);
        if !cok || !sok {
            return Err(format!(
                "fi_pingpong failed (client ok {cok}, server ok {sok}): {cout} {sout}"
            ));
        }
        parse(&cout, size).ok_or_else(|| format!("cannot parse fi_pingpong output: {cout:?}"))
    }
}

fn free_port() -> std::io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Whether some socket listens on TCP `port` (IPv4 or IPv6).
fn listening(port: u16) -> bool {
    let want = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&want) && cols[3] == "0A"
            })
        })
    })
}

/// Parse the client's table: the header names the columns, the next line
/// holds the values.
///
/// The one-way time is taken from whichever of two columns resolves it
/// more finely. `fi_pingpong` prints both with two decimals: `usec/xfer`
/// (elapsed / messages) and `MB/sec` (`size` x messages / elapsed), so
/// `size / MB/sec` is the same time. For small messages over a fast
/// provider `usec/xfer` is a few tenths of a microsecond and its last
/// digit is 1.2-3% of it (shm 1.17, 8 bytes: 0.34-0.44), more than the
/// differences the figure is compared for, while `MB/sec` is about 20
/// and resolves 0.05%.
pub fn parse(out: &str, size: usize) -> Option<PingpongResult> {
    let mut lines = out.lines();
    let header: Vec<&str> = lines
        .by_ref()
        .find(|l| l.contains("usec/xfer"))?
        .split_whitespace()
        .collect();
    let data: Vec<&str> = lines.next()?.split_whitespace().collect();
    let col = |name: &str| -> Option<f64> {
        let i = header.iter().position(|h| *h == name)?;
        data.get(i)?.parse().ok()
    };
    let usec = col("usec/xfer")?;
    let mb_per_s = col("MB/sec")?;
    // Both are printed to 0.01: the larger number has the finer last digit.
    let one_way_us = if size > 0 && mb_per_s > usec {
        size as f64 / mb_per_s
    } else {
        usec
    };
    Some(PingpongResult {
        one_way_us,
        mb_per_s,
        start_up_us: None,
    })
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn runs_over_the_conduits_own_provider_stack() {
        let b = Path::new("fi_pingpong");
        let rxm = Pingpong::for_provider(b, "tcp;ofi_rxm");
        assert_eq!(rxm.provider, "tcp;ofi_rxm");
        assert_eq!(rxm.env, [("FI_TCP_IFACE".to_string(), "lo".to_string())]);
        // libfabric 2.x's native tcp RDM endpoint is not rxm over tcp.
        assert_eq!(Pingpong::for_provider(b, "tcp").provider, "tcp");
        let udp = Pingpong::for_provider(b, "udp;ofi_rxd");
        assert_eq!(udp.provider, "udp;ofi_rxd");
        assert_eq!(udp.env[0].0, "FI_UDP_IFACE");
        let shm = Pingpong::for_provider(b, "shm");
        assert_eq!((shm.provider.as_str(), shm.env.len()), ("shm", 0));
    }

    #[test]
    fn parses_the_client_table() {
        let out =
            "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n\
                   8       10k     =10k     156k        0.02s      7.74       1.03       0.97\n";
        let r = parse(out, 8).unwrap();
        // 8 bytes / 7.74 MB/s: 1.0336 us, finer than the printed 1.03.
        assert!((r.one_way_us - 8.0 / 7.74).abs() < 1e-12, "{r:?}");
        assert_eq!(r.mb_per_s, 7.74);
        assert!(parse("nothing", 8).is_none());
        // 1 MiB: MB/sec again (1048576 / 11025.31 = 95.106 us).
        let big =
            "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n\
                   1m      1k       =1k      2g          0.19s  11025.31      95.11       0.01\n";
        let r = parse(big, 1 << 20).unwrap();
        assert!(
            (r.one_way_us - 1_048_576.0 / 11_025.31).abs() < 1e-9,
            "{r:?}"
        );
        // One byte over tcp: usec/xfer is the larger number and is kept.
        let slow =
            "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n\
                   1       10k      =10k     19k         0.28s      0.07      14.21       0.07\n";
        assert_eq!(parse(slow, 1).unwrap().one_way_us, 14.21);
        // A size of 0 (MB/sec 0.00) keeps usec/xfer.
        let zero =
            "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n\
                   0       10k      =10k     0           0.01s      0.00       0.31       3.22\n";
        assert_eq!(parse(zero, 0).unwrap().one_way_us, 0.31);
    }

    #[test]
    fn the_start_up_is_taken_out_of_the_time_per_message() {
        // tcp;ofi_rxm here: 21 ms of connection set-up, 6.8 us one way.
        let printed = |n: usize| PingpongResult {
            one_way_us: (21_000.0 + 2.0 * n as f64 * 6.8) / (2.0 * n as f64),
            mb_per_s: 0.0,
            start_up_us: None,
        };
        let r = without_start_up(8, (20_000, printed(20_000)), (2_000, printed(2_000)));
        assert!((r.one_way_us - 6.8).abs() < 1e-9, "{r:?}");
        assert!((r.mb_per_s - 8.0 / 6.8).abs() < 1e-9);
        assert!((r.start_up_us.unwrap() - 21_000.0).abs() < 1e-6);
        // Noise that makes the difference meaningless keeps the long run.
        let slow_short = PingpongResult {
            one_way_us: 100.0,
            ..printed(2_000)
        };
        let r = without_start_up(8, (20_000, printed(20_000)), (2_000, slow_short));
        assert_eq!(r, printed(20_000));
    }
}
