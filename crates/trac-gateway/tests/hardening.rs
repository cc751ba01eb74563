//! `trac gateway` under hostile or unusual clients and upstreams (issue 23's review): huge
//! declared bodies, histories that are not resent whole, API keys echoed by an upstream's error,
//! malformed requests. Real servers on 127.0.0.1, as in `gateway.rs`.

mod support;

use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::*;
use trac_gateway::{Gateway, GatewayOptions, Intervene, Running, Server};

fn options(upstream: &Upstream, log: Option<&std::path::Path>) -> GatewayOptions {
    let mut o = GatewayOptions::new(&upstream.base);
    o.listen = "127.0.0.1:0".into();
    o.intervene = Intervene::None;
    o.log = log.map(|p| p.to_path_buf());
    o
}

fn start(opts: GatewayOptions) -> Running {
    Server::bind(Gateway::new(&[airline()], opts).unwrap())
        .unwrap()
        .spawn()
}

fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut call = http().post(url);
    for (k, v) in headers {
        call = call.header(*k, *v);
    }
    let mut r = call.send(body).unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap())
}

/// Sends `head` (a request line and headers, no body) on a new connection and reads what
/// comes back until the gateway closes the connection (at most 10 s): the response, and
/// whether the connection was closed.
fn raw(addr: std::net::SocketAddr, head: &str) -> (String, bool) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

fn huge(length: u64) -> String {
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// The process's virtual memory, in kB (Linux).
fn vm_size_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_huge_declared_body_gets_its_413_and_the_gateway_serves_on() {
    let upstream = Upstream::start();
    let gw = start(options(&upstream, None));
    // 99999999999 bytes declared, none sent: tiny_http 0.12.0 allocated a buffer of that size
    // to drain the body, and the process aborted.
    let (text, closed) = raw(gw.addr(), &huge(99_999_999_999));
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("over the limit"), "{text}");
    assert!(closed, "the connection of a body too long to drain is closed");
    let (status, text) = post(
        &format!("{}/chat/completions", gw.base_url()),
        &[("Content-Type", "application/json")],
        &json!({"messages": [{"role": "user", "content": "hi"}]}).to_string(),
    );
    assert_eq!(status, 200, "{text}");
    assert_eq!(upstream.seen.lock().unwrap().len(), 1);
}

#[test]
fn declared_gigabyte_bodies_never_sent_do_not_grow_memory() {
    let upstream = Upstream::start();
    let gw = start(options(&upstream, None));
    let Some(before) = vm_size_kb() else {
        return; // not Linux: nothing to measure
    };
    // Eight connections at once, each declaring 1 GiB: 0.12.0 held a 1 GiB buffer for each
    // while it waited for the body.
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let addr = gw.addr();
            std::thread::spawn(move || raw(addr, &huge(1 << 30)))
        })
        .collect();
    for t in threads {
        let (text, closed) = t.join().unwrap();
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        assert!(closed);
    }
    let after = vm_size_kb().unwrap();
    let grown_mb = after.saturating_sub(before) / 1024;
    assert!(grown_mb < 1024, "virtual memory grew by {grown_mb} MB");
}

#[test]
fn a_body_over_the_limit_but_short_enough_to_drain_keeps_the_connection() {
    let upstream = Upstream::start();
    let mut o = options(&upstream, None);
    o.max_body = 4096;
    let gw = start(o);
    // One keep-alive connection: a 20 000-byte body gets its 413 (drained, not read), and the
    // next request on the same connection is served.
    let mut s = TcpStream::connect(gw.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = "x".repeat(20_000);
    write!(s, "{}{body}", huge(body.len() as u64)).unwrap();
    write!(s, "GET /trac/sessions HTTP/1.1\r\nHost: gw\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("\"sessions\"") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"sessions\""), "{text}");
}
