//! Traces of any format, detected from the input as `trac audit` does without
//! `--input-format`, audited with airline.ron (its rules read roles, tools and text).
#![no_main]
use trac_runtime::trace::StepPer;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    trac_fuzz::audit_trace(data, None, StepPer::Message, trac_fuzz::Example::Airline);
});
