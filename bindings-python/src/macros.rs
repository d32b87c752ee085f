//! Declarations the pyclasses share.

/// Gives a pyclass whose only Python method is its `__repr__` that method:
/// `format!(fmt, self.field, …)`.
macro_rules! repr {
    ($t:ty, $fmt:literal $(, $f:ident)* $(,)?) => {
        #[pymethods]
        impl $t {
            fn __repr__(&self) -> String {
                format!($fmt $(, self.$f)*)
            }
        }
    };
}
