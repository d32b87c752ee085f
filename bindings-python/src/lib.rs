//! Binding crate; filled by its issue.
