//! Kernel BTF: vmlinux and module (split) BTF parsed and indexed behind strobe's own types.
