//! /proc/kallsyms reader (in progress).
