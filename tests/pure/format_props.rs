//! Property tests: no input makes the formatter panic, and what it claims holds for all input.

use proptest::prelude::*;
use strobe::runtime::format::decode::{decode, FieldType, NoResolver};
use strobe::runtime::format::stack::StackMode;
use strobe::runtime::format::{FormatString, TextStyle, Value};

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::Int),
        any::<u64>().prop_map(Value::UInt),
        any::<u64>().prop_map(Value::Pointer),
        any::<bool>().prop_map(Value::Bool),
        proptest::collection::vec(any::<u8>(), 0..20).prop_map(|b| Value::from_c_bytes(&b)),
        proptest::collection::vec(any::<u8>(), 0..20).prop_map(Value::Buf),
        Just(Value::None),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Tuple),
            proptest::collection::vec(inner, 0..4).prop_map(Value::Array),
        ]
    })
}

proptest! {
    #[test]
    fn printf_never_panics(fmt in "[%a-z0-9.#+ -]{0,24}", args in proptest::collection::vec(any_value(), 0..6)) {
        if let Ok(f) = FormatString::parse(&fmt) {
            let _ = f.render(&args, TextStyle::default());
        }
    }

    /// `%lu`/`%ld`/`%lx` print exactly what Rust prints for the 64-bit value.
    #[test]
    fn long_conversions_match_rust(v in any::<i64>(), w in 0usize..30) {
        let f = FormatString::parse(&format!("%{w}ld|%lu|%-{w}lx|%0{w}lX")).unwrap();
        let out = f.render(&[Value::Int(v), Value::Int(v), Value::Int(v), Value::Int(v)], TextStyle::default());
        let want = format!("{v:>w$}|{}|{:<w$x}|{:0w$X}", v as u64, v as u64, v as u64);
        prop_assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80), limit in 0usize..8, size in 0usize..40) {
        let types = [
            FieldType::Int { bytes: 4, signed: true },
            FieldType::Str { size },
            FieldType::Buf { capacity: size },
            FieldType::Inet,
            FieldType::MacAddr,
            FieldType::KStack { limit, mode: StackMode::Perf },
            FieldType::UStack { limit, mode: StackMode::Raw },
            FieldType::Timestamp { format: "%F %T.%f".into() },
            FieldType::Tuple(vec![FieldType::Bool, FieldType::Int { bytes: 8, signed: false }, FieldType::Str { size }]),
            FieldType::Array { elem: Box::new(FieldType::Int { bytes: 2, signed: true }), len: limit },
        ];
        for t in &types {
            if let Ok(v) = decode(t, &bytes, &NoResolver) {
                let _ = v.to_text(TextStyle::default());
            }
        }
    }
}

proptest! {
    /// The direct-from-bytes printf path prints exactly what decoding to values and formatting
    /// them prints, for any record bytes and both string styles.
    #[test]
    fn printf_fast_path_equals_decode_then_format(
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
        trailer in any::<bool>(),
    ) {
        use strobe::runtime::format::decode::decode_fields;
        use strobe::runtime::format::PrintfCall;
        let args = vec![
            FieldType::Str { size: 5 },
            FieldType::Int { bytes: 2, signed: true },
            FieldType::Int { bytes: 8, signed: false },
            FieldType::Str { size: 3 },
            FieldType::Buf { capacity: 4 },
        ];
        let call = PrintfCall::new("%-6s|%5d|%lx|%.2s|%r\n", args.clone()).unwrap();
        let style = TextStyle {
            str_trunc_trailer: if trailer { ".." } else { "" },
            str_trunc_size: 0,
        };
        let fast = call.render(&bytes, &NoResolver, style);
        let slow = decode_fields(&args, &bytes, &NoResolver)
            .map(|vals| call.format.render(&vals, style));
        prop_assert_eq!(fast.is_ok(), slow.is_ok());
        if let (Ok(f), Ok(s)) = (fast, slow) {
            prop_assert_eq!(f, s);
        }
    }
}
