//! `trac-codegen`: the code generator behind `trac_monitor!` (crate `trac-macros`) and
//! `cargo xtask codegen`.
//!
//! It works on [`proc_macro2::TokenStream`]s, so it is an ordinary library (unit-testable, and
//! the xtask calls the same code), as `logos-codegen` is for `logos-derive`. Every property is
//! compiled by [`trac_compile::compile`] at expansion time into a monitor [`Table`], emitted as
//! `static` arrays that [`trac_core::table::TableMonitor`] runs: no parsing and no automaton
//! construction at run time.
//!
//! # Input
//! ```text
//! trac_monitor! {
//!     /// Delivery rules of the trucks domain.
//!     pub struct Delivery {
//!         props {
//!             delivered_p1: "package1 is delivered",
//!             delivered_p2: "package2 is delivered",
//!             take(item): "the agent takes {item}",       // parametric
//!         }
//!         /// package2 is delivered before package1.
//!         p2_before_p1: "!delivered_p1 W delivered_p2",
//!         #[ltlf] #[reset_on_satisfaction]                 // optional
//!         took: "forall item: F take(item)",
//!     }
//! }
//! trac_monitor!(pub struct TextWorld from "specs/textworld.ron");   // relative to CARGO_MANIFEST_DIR
//! ```
//! Generated code names only `trac-core` (no parser, no I/O). `#[trac(crate = "::trac::core")]`
//! on the struct changes its path in the generated code (default `::trac_core`; `::trac_runtime`,
//! which re-exports what generated code names, works too).
//!
//! # Output (for `Delivery`)
//! - `DeliveryValuation`: one `pub` field per proposition, `bool`, or
//!   [`Values<'a>`](trac_core::generated::Values) for a parametric one (the values for which it
//!   holds; the valuation then has a lifetime). `from_labels(&LabelSet)` builds it from labels.
//! - `DeliveryVerdicts`: one `pub Option<Verdict>` per property, the verdict reached at a step.
//! - `Delivery`: the monitor. `new()` (TRAC_R) / `with_reset(bool)`, `step(&Valuation) ->
//!   Verdicts` (no allocation, except a parametric property meeting a new value; a
//!   non-parametric LTL3 property whose fused step has at most 2^13 entries is stepped by one
//!   lookup in that step, computed here and emitted as `static` arrays, through
//!   [`StaticFused`](trac_core::generated::StaticFused); the others by `step_bits`),
//!   `step_labels(&StepInput)` (with witnesses), `verdicts()`, `residuals() -> [&'static str; N]`,
//!   `ltlf()`, `initial()`, `reset()`, `tables()` (the `static` tables), the constants
//!   `PROPERTIES`, `FORMULAS`, `PROPOSITIONS`, and one accessor per property (`p2_before_p1()`,
//!   `p2_before_p1_mut()`) returning its [`StaticTableMonitor`](trac_core::generated::StaticTableMonitor),
//!   which implements [`Monitor`](trac_core::Monitor), or for a `forall` property its
//!   [`ParamTableMonitor`](trac_core::generated::ParamTableMonitor) (one table, one state per
//!   value), for `forall` over several variables its
//!   [`ParamTupleMonitor`](trac_core::generated::ParamTupleMonitor) (one state per partial
//!   value tuple). A monitor with exactly one non-parametric property implements `Monitor` itself.
//!
//! # Errors
//! Every problem is reported, at the span it concerns: a formula that does not parse at its
//! string literal (message with the byte offset and a caret under the error); unknown
//! propositions, duplicate propositions and properties, parameter misuse, combined
//! ([`syn::Error::combine`]). The types are still emitted (with bodies that are never run), so
//! code using them gets no follow-on errors.

#![deny(missing_docs)]

mod emit;
pub mod input;
pub mod model;

use proc_macro2::TokenStream;
use quote::quote;
use trac_spec::spec::CheckedSpec;

pub use model::{camel_ident, snake_ident, GenerateError, SpecOptions};

/// The expansion of `trac_monitor!` input (the proc macro is `trac_codegen::expand(input)`).
/// Never fails: errors become `compile_error!`s next to stub items.
pub fn expand(input: TokenStream) -> TokenStream {
    let input: input::MonitorInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let (model, errors) = model::from_input(input);
    let code = emit::emit(&model);
    match errors {
        Some(e) => {
            let e = e.to_compile_error();
            quote!(#e #code)
        }
        None => code,
    }
}

/// The code of a monitor for a checked spec (`cargo xtask codegen`): the same items as
/// `trac_monitor!(pub struct Name from "spec.ron")`, without the `include_bytes!`.
///
/// # Errors
/// A [`GenerateError`] naming the problems: names that do not make distinct Rust identifiers, a
/// spec without propositions, a property that does not compile.
pub fn generate_spec(
    spec: &CheckedSpec,
    opts: &SpecOptions<'_>,
) -> Result<TokenStream, GenerateError> {
    let model = model::from_spec(spec, opts)?;
    Ok(emit::emit(&model))
}
