//! The TRAC paper's comparisons as library code (Alamdari, Klassen & McIlraith, arXiv
//! 2605.16198), behind `trac judge` and `trac experiment temporal`.
//!
//! - [`judge`]: LLM-as-a-judge baselines (§5.1, Figure 2): zero-shot, few-shot and few-shot
//!   with labels; prompts, answer parsing, and scoring against TRAC_R with the rules (the
//!   audit F1 of `trac_llm::metrics`, as `trac label-eval` scores TRAC with an LLM labeler).
//! - [`temporal`]: the synthetic temporal-reasoning study (§5.2, Figure 3): traces of
//!   observed entities, the formulas `F(A & X F B)` and the tree, the four sweeps, the judge's
//!   VALID / INVALID answers against TRAC's monitors, JSON and an SVG plot.
//! - [`stats`]: the 95% intervals reported (Student t over runs, Wilson for accuracies).
//! - [`pool`]: model requests in parallel.

#![deny(missing_docs)]

pub mod judge;
pub mod pool;
pub mod stats;
pub mod temporal;
