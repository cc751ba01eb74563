//! `trac-runtime`: monitors and the audit loop.
#![deny(missing_docs)]
