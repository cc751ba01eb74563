//! Issue 23, measured: the latency `trac gateway` adds to one non-streamed chat completion.
//!
//! Side by side in one run, against a stub upstream in process (tiny_http on 127.0.0.1:0, a
//! fixed small completion answered at once: `benches/common`), with a pooled ureq client:
//! - `direct/request`: client → upstream;
//! - `through_gateway/none` and `through_gateway/shield`: client → gateway (in process, the
//!   spec `benches/bench.ron`: 10 rule-labeled properties over roles, text, tools and
//!   arguments) → upstream.
//!
//! One request per iteration, in one conversation whose history grows by a user message and the
//! answer per request and is reset (new session id, back to the system message) every
//! [`common::RESET_EVERY`] = 20 requests, so it holds 2 to 40 messages.
//!
//! `cargo bench -p trac-gateway --bench gateway` (add `-- --warm-up-time 1 --measurement-time 3`
//! on a shared machine). Percentiles, requests per second and memory per conversation:
//! `cargo run --release -p trac-gateway --example latency`. Figures: BENCHMARKS.md, "Gateway".

mod common;

use common::*;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trac_gateway::Intervene;

fn bench(c: &mut Criterion) {
    let stub = Stub::start(4);
    let none = gateway(&stub.base, Intervene::None);
    let shield = gateway(&stub.base, Intervene::Shield);
    let agent = agent();

    let mut g = c.benchmark_group("direct");
    g.throughput(Throughput::Elements(1));
    let mut conv = Conversation::new("direct");
    g.bench_function("request", |b| b.iter(|| conv.step(&agent, &stub.base)));
    g.finish();
    let mut g = c.benchmark_group("through_gateway");
    g.throughput(Throughput::Elements(1));
    for (name, gw) in [("none", &none), ("shield", &shield)] {
        let mut conv = Conversation::new(name);
        let base = gw.base_url();
        g.bench_function(name, |b| b.iter(|| conv.step(&agent, &base)));
    }
    g.finish();
    none.stop();
    shield.stop();
}

criterion_group!(benches, bench);
criterion_main!(benches);
