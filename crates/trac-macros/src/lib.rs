//! `trac_monitor!`: declare LTL rules in Rust source or in a spec file and get a table-driven
//! monitor compiled into the binary. A one-line shim over [`trac_codegen::expand`], whose docs
//! describe the input syntax, the generated API and the errors.
//!
//! ```
//! trac_macros::trac_monitor! {
//!     /// Delivery rules of the trucks domain.
//!     pub struct Delivery {
//!         props { delivered_p1: "package1 is delivered", delivered_p2: "package2 is delivered" }
//!         /// package2 is delivered before package1.
//!         p2_before_p1: "!delivered_p1 W delivered_p2",
//!     }
//! }
//!
//! let mut m = Delivery::new();
//! let v = m.step(&DeliveryValuation { delivered_p1: true, delivered_p2: false });
//! assert_eq!(v.p2_before_p1, Some(trac_runtime::Verdict::Violated));
//! assert_eq!(m.residuals(), ["!delivered_p1 W delivered_p2"]);
//! ```
#![deny(missing_docs)]

use proc_macro::TokenStream;

/// Declares a monitor: see the [crate docs](crate) and [`trac_codegen`].
#[proc_macro]
pub fn trac_monitor(input: TokenStream) -> TokenStream {
    trac_codegen::expand(input.into()).into()
}
