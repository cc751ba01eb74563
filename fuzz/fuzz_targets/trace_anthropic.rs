//! Traces read as `--input-format anthropic` (per message and per turn) and audited with airline.ron.
#![no_main]
use trac_runtime::trace::TraceFormat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    trac_fuzz::audit_chat(data, TraceFormat::Anthropic);
});
