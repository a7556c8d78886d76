//! The script language: AST with spans and the nom parser.
