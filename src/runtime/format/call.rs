//! A checked `printf` call: its parsed format and its arguments' layout, shared by the code
//! generator (which writes the arguments into a ring-buffer record at [`PrintfCall::offsets`])
//! and the runtime (which renders the record with [`PrintfCall::render`]).
//!
//! Input: the format string and one [`FieldType`] per argument, from the checker.
//! Output: a typed error when they do not fit; otherwise the text for each record.
//! Invariant: rendering a record never panics; a short record is a [`DecodeError`].

use super::decode::{decode, DecodeError, FieldType, Resolver};
use super::printf::{render_spec, render_str, Conv};
use super::value::{TextStyle, Value};
pub use crate::plan::printf::{PrintfCall, PrintfCallError};

impl PrintfCall {
    /// Appends the text for one record's argument area. On error `out` may hold the part of
    /// the line written before the short field.
    pub fn render_into(
        &self,
        record: &[u8],
        r: &dyn Resolver,
        style: TextStyle,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let offsets = self.offsets();
        self.format.render_with(out, |i, spec, out| {
            let (Some(ty), Some(&off)) = (self.args.get(i), offsets.get(i)) else {
                return Ok(());
            };
            let field = record.get(off..).unwrap_or(&[]);
            match ty {
                // Strings print straight from the record unless a truncation trailer is due.
                FieldType::Str { size } if spec.conv == Conv::Str => {
                    let raw = field.get(..*size).ok_or(DecodeError::Short {
                        what: "string",
                        offset: off,
                        need: *size,
                        have: record.len(),
                    })?;
                    match raw.iter().position(|&b| b == 0) {
                        Some(n) => render_str(spec, &raw[..n], out),
                        None if !style.trails(raw.len()) => render_str(spec, raw, out),
                        None => render_spec(spec, &Value::from_c_bytes(raw), style, out),
                    }
                }
                _ => render_spec(spec, &decode(ty, field, r)?, style, out),
            }
            Ok(())
        })
    }

    /// The text for one record's argument area.
    pub fn render(
        &self,
        record: &[u8],
        r: &dyn Resolver,
        style: TextStyle,
    ) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        self.render_into(record, r, style, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::format::decode::NoResolver;

    #[test]
    fn renders_a_record_laid_out_by_offsets() {
        let call = PrintfCall::new(
            "%s pid=%d ret=%ld\n",
            vec![
                FieldType::Str { size: 16 },
                FieldType::Int {
                    bytes: 4,
                    signed: true,
                },
                FieldType::Int {
                    bytes: 8,
                    signed: true,
                },
            ],
        )
        .unwrap();
        assert_eq!(call.offsets(), [0, 16, 24]);
        assert_eq!(call.args_size(), 32);
        let mut rec = vec![0u8; 32];
        rec[..4].copy_from_slice(b"bash");
        rec[16..20].copy_from_slice(&42i32.to_le_bytes());
        rec[24..32].copy_from_slice(&(-2i64).to_le_bytes());
        let out = call
            .render(&rec, &NoResolver, TextStyle::default())
            .unwrap();
        assert_eq!(out, b"bash pid=42 ret=-2\n");
        assert!(call
            .render(&rec[..20], &NoResolver, TextStyle::default())
            .is_err());
    }

    #[test]
    fn argument_mismatches_are_typed_errors() {
        let e = PrintfCall::new("%d %d", vec![FieldType::Bool]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not enough arguments for format string (1 supplied, 2 expected)"
        );
        let e = PrintfCall::new("%d", vec![FieldType::Str { size: 4 }]).unwrap_err();
        assert!(matches!(e, PrintfCallError::ArgType { index: 0, .. }));
        let e = PrintfCall::new("%r", vec![FieldType::Bool]).unwrap_err();
        assert!(matches!(e, PrintfCallError::ArgType { .. }));
        assert!(PrintfCall::new("%f", vec![]).is_err());
    }
}
