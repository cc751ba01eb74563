//! Plain-text action logs, read as `--input-format text` and audited with textworld.ron.
#![no_main]
use trac_runtime::trace::{StepPer, TraceFormat};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    trac_fuzz::audit_trace(
        data,
        Some(TraceFormat::Text),
        StepPer::Message,
        trac_fuzz::Example::Textworld,
    );
});
