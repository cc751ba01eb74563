//! Issue 23, measured: what criterion's means hide. Against the stub upstream of
//! `benches/common` (in this process), with the 10 rule-labeled properties of
//! `benches/bench.ron`, the gateway in a child process (this binary, `--serve-gateway`):
//!
//! 1. latency: `--requests` (default 5,000) non-streamed requests direct and as many through the
//!    gateway, alternating one and one, each side in one conversation reset every 20 requests;
//!    p50, p99, p99.9 and mean of each, and the latency added (p50, p99), for `none` and
//!    `shield`;
//! 2. requests per second through the gateway from 8 client threads (one conversation each) for
//!    `--seconds` (default 5), with the gateway process pinned to core 0 (`taskset -c 0`) and
//!    this process (clients, stub upstream) to core 1, when `taskset` and two cores are there;
//!    the gateway's CPU time per request from its `/proc/PID/stat`;
//! 3. memory per open conversation: the gateway's VmRSS (`/proc/PID/status`) before and after
//!    opening `--conversations` (default 1,000) conversations of 5 messages each (one request of
//!    system, user, assistant, user; the answer is the fifth), divided.
//!
//! `cargo run --release -p trac-gateway --example latency [-- --requests N --seconds S
//! --conversations C]`. Figures: BENCHMARKS.md, "Gateway".

#[path = "../benches/common/mod.rs"]
mod common;

use common::*;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trac_gateway::Intervene;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().unwrap())
}

/// The child: a gateway in front of `upstream`, its address on stdout, until stdin closes.
fn serve(upstream: &str, mode: &str) {
    let intervene = if mode == "shield" {
        Intervene::Shield
    } else {
        Intervene::None
    };
    let gw = gateway(upstream, intervene);
    println!("{}", gw.base_url());
    std::io::stdout().flush().unwrap();
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {}
    gw.stop();
}

/// A gateway child process (pinned to core 0 when `pin`) and its base URL.
struct Child_ {
    child: Child,
    base: String,
}

impl Child_ {
    fn start(upstream: &str, mode: &str, pin: bool) -> Child_ {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = if pin {
            let mut c = Command::new("taskset");
            c.arg("-c").arg("0").arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let mut child = cmd
            .args(["--serve-gateway", upstream, mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Child_ {
            child,
            base: line.trim().to_string(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// VmRSS in KiB.
    fn rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap()
    }

    /// utime + stime, in seconds.
    fn cpu_s(&self) -> f64 {
        let s = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let rest = &s[s.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // Fields 14 and 15 of stat, counted from the state (field 3) here.
        let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
        ticks as f64 / 100.0
    }
}

impl Drop for Child_ {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn stats(name: &str, mut d: Vec<Duration>) -> (f64, f64) {
    d.sort();
    let mean = d.iter().map(Duration::as_secs_f64).sum::<f64>() / d.len() as f64 * 1e3;
    let (p50, p99, p999) = (pct(&d, 0.5), pct(&d, 0.99), pct(&d, 0.999));
    println!(
        "  {name:<22} n={} p50={p50:.3} ms p99={p99:.3} ms p99.9={p999:.3} ms mean={mean:.3} ms max={:.3} ms",
        d.len(),
        d.last().unwrap().as_secs_f64() * 1e3
    );
    (p50, p99)
}

fn timed(conv: &mut Conversation, agent: &ureq::Agent, base: &str) -> Duration {
    let t = Instant::now();
    conv.step(agent, base);
    t.elapsed()
}

fn latency(stub: &Stub, requests: usize) {
    println!("latency: {requests} requests each side, alternating, one conversation each side reset every {RESET_EVERY} requests");
    for mode in ["none", "shield"] {
        let gw = Child_::start(&stub.base, mode, false);
        let agent = agent();
        let (mut cd, mut cg) = (
            Conversation::new("direct"),
            Conversation::new(&format!("lat-{mode}")),
        );
        for _ in 0..200 {
            timed(&mut cd, &agent, &stub.base);
            timed(&mut cg, &agent, &gw.base);
        }
        let (mut direct, mut through) = (Vec::new(), Vec::new());
        for _ in 0..requests {
            direct.push(timed(&mut cd, &agent, &stub.base));
            through.push(timed(&mut cg, &agent, &gw.base));
        }
        println!(" intervene {mode}:");
        let (d50, d99) = stats("direct", direct);
        let (g50, g99) = stats("through_gateway", through);
        println!("  added: p50 {:.3} ms, p99 {:.3} ms", g50 - d50, g99 - d99);
        let url = gw.base.trim_end_matches("/v1").to_string() + "/trac/sessions";
        let mut r = agent.get(url).call().unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        let sessions = v["sessions"].as_array().unwrap();
        let sum = |k: &str| -> u64 { sessions.iter().map(|s| s[k].as_u64().unwrap_or(0)).sum() };
        println!(
            "  gateway: {} sessions, {} steps monitored, {} violations, {} interventions, {} unread",
            sessions.len(),
            sum("steps"),
            sessions.iter().map(|s| s["violations"].as_array().map_or(0, Vec::len)).sum::<usize>(),
            sum("interventions"),
            sum("unread")
        );
    }
}

fn throughput(stub: &Stub, seconds: usize, pin: bool) {
    const CLIENTS: usize = 8;
    println!(
        "throughput: {CLIENTS} client threads for {seconds} s; gateway process {}",
        if pin {
            "pinned to core 0 (taskset -c 0), this process (clients, stub) to core 1"
        } else {
            "not pinned (no taskset or one core)"
        }
    );
    let run = |base: &str, tag: &str| -> (usize, f64) {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (stop, done, base) = (stop.clone(), done.clone(), base.to_string());
                let name = format!("{tag}-{i}");
                std::thread::spawn(move || {
                    let agent = agent();
                    let mut conv = Conversation::new(&name);
                    while !stop.load(Ordering::Relaxed) {
                        conv.step(&agent, &base);
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(1));
        let (n0, t0) = (done.load(Ordering::Relaxed), Instant::now());
        std::thread::sleep(Duration::from_secs(seconds as u64));
        let (n1, dt) = (done.load(Ordering::Relaxed), t0.elapsed().as_secs_f64());
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        (n1 - n0, dt)
    };
    let (n, dt) = run(&stub.base, "rps-direct");
    println!("  direct (stub only):      {:.0} requests/s", n as f64 / dt);
    for mode in ["none", "shield"] {
        let gw = Child_::start(&stub.base, mode, pin);
        let c0 = gw.cpu_s();
        let (n, dt) = run(&gw.base, &format!("rps-{mode}"));
        // The warm-up second is in the CPU time too: per request over all requests is a bound.
        let cpu = gw.cpu_s() - c0;
        println!(
            "  through_gateway/{mode:<7} {:.0} requests/s; gateway CPU {:.2} s over {:.1} s ({:.0}% of a core, warm-up second included)",
            n as f64 / dt,
            cpu,
            dt + 1.0,
            cpu / (dt + 1.0) * 100.0
        );
    }
}

fn memory(stub: &Stub, conversations: usize) {
    let gw = Child_::start(&stub.base, "none", false);
    let agent = agent();
    let send = |i: usize| {
        let body = json!({"model": "stub", "messages": [
            {"role": "system", "content": "You are the airline's customer service agent. Be brief."},
            {"role": "user", "content": format!("Hi, I need to change the flight on reservation R{i:05}.")},
            {"role": "assistant", "content": "Sure: which flight would you like instead?"},
            {"role": "user", "content": "The morning one, please. yes, go ahead."},
        ]});
        let mut r = agent
            .post(format!("{}/chat/completions", gw.base))
            .header("Content-Type", "application/json")
            .header("X-Trac-Session", format!("mem-{i}"))
            .send(body.to_string())
            .unwrap();
        assert_eq!(r.status(), 200);
        let _ = r.body_mut().read_to_string().unwrap();
    };
    // Warm up: the first conversations grow the allocator's and the server's pools.
    for i in 0..100 {
        send(i);
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = gw.rss_kib();
    for i in 100..100 + conversations {
        send(i);
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = gw.rss_kib();
    println!(
        "memory: VmRSS {before} KiB after 100 warm-up conversations, {after} KiB after {conversations} more of 5 messages: {:.2} KiB per conversation",
        (after as f64 - before as f64) / conversations as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--serve-gateway") {
        return serve(&args[2], &args[3]);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pin = cores >= 2
        && Command::new("taskset")
            .args(["-a", "-pc", "1", &std::process::id().to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    let stub = Stub::start(4);
    latency(&stub, arg("--requests", 5000));
    throughput(&stub, arg("--seconds", 5), pin);
    memory(&stub, arg("--conversations", 1000));
}
