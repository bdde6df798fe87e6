//! Kernel names as people read them: CUPTI gives the mangled C++ symbol
//! (`_Z4gemmPKfS0_Pfi`); the outputs show `gemm(float const*, float const*,
//! float*, int)` beside it.

/// The demangled name, or the name as it is when it is not a C++ symbol.
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&Default::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn kernel_names_demangle_and_others_stay() {
        assert_eq!(
            super::demangle("_Z4gemmPKfS0_Pfi"),
            "gemm(float const*, float const*, float*, int)"
        );
        assert_eq!(
            super::demangle("[CUDA memcpy Host-to-Device]"),
            "[CUDA memcpy Host-to-Device]"
        );
        assert_eq!(super::demangle("relu_kernel"), "relu_kernel");
    }
}
