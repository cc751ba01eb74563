//! Spec files in RON (stub).
