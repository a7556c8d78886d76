//! `time()` and `strftime()`: glibc's `strftime` in the C locale, plus bpftrace's sub-second
//! extensions `%f` (microseconds, 6 digits), `%l` (milliseconds, 3) and `%k` (nanoseconds, 9).
//! `%l`/`%k` replace glibc's 12/24-hour space-padded hours there, as in current bpftrace
//! (0.17 had only `%f`).
//!
//! Input: a wall-clock instant (seconds and nanoseconds since the Unix epoch) and the UTC
//! offset and zone name to show it in ([`local_offset`] asks libc for the local ones; tests
//! pass fixed ones). Output: bytes. Unknown conversions are copied literally, as glibc does.
//! Invariant: pure arithmetic (no syscalls outside `local_offset`), no panics for any instant.

/// `time()`'s default format.
pub const TIME_DEFAULT_FORMAT: &str = "%H:%M:%S\n";

/// A broken-down time, like C's `struct tm` (months 0-based, `wday` 0 = Sunday).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tm {
    pub year: i64,
    pub mon: u32,
    pub mday: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
    pub wday: u32,
    pub yday: u32,
    /// Seconds east of UTC.
    pub gmtoff: i64,
    pub zone: String,
    /// Seconds since the epoch (for `%s`).
    pub unix: i64,
}

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31) (H. Hinnant's civil_from_days).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

impl Tm {
    /// Breaks `unix` seconds down in a zone `gmtoff` seconds east of UTC named `zone`.
    pub fn from_unix(unix: i64, gmtoff: i64, zone: &str) -> Tm {
        let t = unix.saturating_add(gmtoff);
        let days = t.div_euclid(86_400);
        let secs = t.rem_euclid(86_400) as u32;
        let (year, m, d) = civil_from_days(days);
        const CUM: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
        let yday = CUM[(m - 1) as usize] + d - 1 + u32::from(m > 2 && is_leap(year));
        Tm {
            year,
            mon: m - 1,
            mday: d,
            hour: secs / 3600,
            min: secs / 60 % 60,
            sec: secs % 60,
            wday: (days + 4).rem_euclid(7) as u32,
            yday,
            gmtoff,
            zone: zone.to_string(),
            unix,
        }
    }

    /// The same instant in the host's local time zone (libc `localtime_r`).
    pub fn local(unix: i64) -> Tm {
        let (off, zone) = local_offset(unix).unwrap_or((0, "UTC".to_string()));
        Tm::from_unix(unix, off, &zone)
    }
}

/// The local UTC offset and zone abbreviation at `unix`, from libc (reads the zone file once).
pub fn local_offset(unix: i64) -> Option<(i64, String)> {
    let t = unix as libc::time_t;
    // SAFETY: localtime_r writes only into `tm`, which we own; tm_zone then points at static
    // storage owned by libc, valid for reading as a C string.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return None;
        }
        let zone = if tm.tm_zone.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(tm.tm_zone)
                .to_string_lossy()
                .into_owned()
        };
        Some((tm.tm_gmtoff, zone))
    }
}

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// ISO 8601 week-based year and week number.
fn iso_week(t: &Tm) -> (i64, u32) {
    let wday = (t.wday + 6) % 7; // Monday = 0
    let yday = t.yday as i64;
    let week = (yday - wday as i64 + 10) / 7;
    if week < 1 {
        let py = t.year - 1;
        let pdays = if is_leap(py) { 366 } else { 365 };
        let pyday = yday + pdays;
        return (py, ((pyday - wday as i64 + 10) / 7) as u32);
    }
    let days = if is_leap(t.year) { 366 } else { 365 };
    if week == 53 && yday - wday as i64 + 3 >= days {
        return (t.year + 1, 1);
    }
    (t.year, week as u32)
}

/// `time(fmt)` / `strftime(fmt, ns)` for an instant given as nanoseconds since the Unix epoch,
/// in the host's local time zone.
pub fn format_local(fmt: &[u8], unix_nanos: u64) -> Vec<u8> {
    let secs = (unix_nanos / 1_000_000_000) as i64;
    strftime(fmt, &Tm::local(secs), (unix_nanos % 1_000_000_000) as u32)
}

/// Formats `t` (plus `nsec`, the nanoseconds within the second) with `fmt`.
pub fn strftime(fmt: &[u8], t: &Tm, nsec: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' || i + 1 >= fmt.len() {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        // C99 E and O modifiers change nothing in the C locale.
        if matches!(fmt[j], b'E' | b'O') && j + 1 < fmt.len() {
            j += 1;
        }
        if !conv(&mut out, fmt[j], t, nsec) {
            out.extend_from_slice(&fmt[i..=j]);
        }
        i = j + 1;
    }
    out
}

fn conv(out: &mut Vec<u8>, c: u8, t: &Tm, nsec: u32) -> bool {
    use std::io::Write;
    let nsec = nsec.min(999_999_999);
    let h12 = if t.hour % 12 == 0 { 12 } else { t.hour % 12 };
    let r = match c {
        b'a' => write!(out, "{}", &DAYS[t.wday as usize % 7][..3]),
        b'A' => write!(out, "{}", DAYS[t.wday as usize % 7]),
        b'b' | b'h' => write!(out, "{}", &MONTHS[t.mon as usize % 12][..3]),
        b'B' => write!(out, "{}", MONTHS[t.mon as usize % 12]),
        b'c' => {
            out.extend(strftime(b"%a %b %e %H:%M:%S %Y", t, nsec));
            Ok(())
        }
        b'C' => write!(out, "{:02}", t.year.div_euclid(100)),
        b'd' => write!(out, "{:02}", t.mday),
        b'D' | b'x' => write!(
            out,
            "{:02}/{:02}/{:02}",
            t.mon + 1,
            t.mday,
            t.year.rem_euclid(100)
        ),
        b'e' => write!(out, "{:2}", t.mday),
        b'F' => write!(out, "{}-{:02}-{:02}", t.year, t.mon + 1, t.mday),
        b'g' => write!(out, "{:02}", iso_week(t).0.rem_euclid(100)),
        b'G' => write!(out, "{}", iso_week(t).0),
        b'H' => write!(out, "{:02}", t.hour),
        b'I' => write!(out, "{h12:02}"),
        b'j' => write!(out, "{:03}", t.yday + 1),
        b'm' => write!(out, "{:02}", t.mon + 1),
        b'M' => write!(out, "{:02}", t.min),
        b'n' => writeln!(out),
        b'p' => write!(out, "{}", if t.hour < 12 { "AM" } else { "PM" }),
        b'P' => write!(out, "{}", if t.hour < 12 { "am" } else { "pm" }),
        b'r' => write!(
            out,
            "{h12:02}:{:02}:{:02} {}",
            t.min,
            t.sec,
            if t.hour < 12 { "AM" } else { "PM" }
        ),
        b'R' => write!(out, "{:02}:{:02}", t.hour, t.min),
        b's' => write!(out, "{}", t.unix),
        b'S' => write!(out, "{:02}", t.sec),
        b't' => write!(out, "\t"),
        b'T' | b'X' => write!(out, "{:02}:{:02}:{:02}", t.hour, t.min, t.sec),
        b'u' => write!(out, "{}", if t.wday == 0 { 7 } else { t.wday }),
        b'U' => write!(out, "{:02}", (t.yday + 7 - t.wday) / 7),
        b'V' => write!(out, "{:02}", iso_week(t).1),
        b'w' => write!(out, "{}", t.wday),
        b'W' => write!(out, "{:02}", (t.yday + 7 - (t.wday + 6) % 7) / 7),
        b'y' => write!(out, "{:02}", t.year.rem_euclid(100)),
        b'Y' => write!(out, "{}", t.year),
        b'z' => {
            let off = t.gmtoff;
            let sign = if off < 0 { '-' } else { '+' };
            let a = off.unsigned_abs();
            write!(out, "{sign}{:02}{:02}", a / 3600, a / 60 % 60)
        }
        b'Z' => write!(out, "{}", t.zone),
        b'%' => write!(out, "%"),
        b'f' => write!(out, "{:06}", nsec / 1000),
        b'l' => write!(out, "{:03}", nsec / 1_000_000),
        b'k' => write!(out, "{nsec:09}"),
        _ => return false,
    };
    r.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, unix: i64, nsec: u32) -> String {
        String::from_utf8(strftime(
            fmt.as_bytes(),
            &Tm::from_unix(unix, 0, "UTC"),
            nsec,
        ))
        .unwrap()
    }

    #[test]
    fn dates_and_times_in_utc() {
        // 1500000123 = 2017-07-14 02:42:03 UTC, a Friday, day 195.
        assert_eq!(
            f(
                "%Y-%m-%d %H:%M:%S|%j|%a %A|%b %B|%u %w|%y %C|%e|%I %p",
                1_500_000_123,
                0
            ),
            "2017-07-14 02:42:03|195|Fri Friday|Jul July|5 5|17 20|14|02 AM"
        );
        assert_eq!(f("%c", 0, 0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(
            f("%D %T %R %F %s", 86_399, 0),
            "01/01/70 23:59:59 23:59 1970-01-01 86399"
        );
        assert_eq!(f("%F %T", -1, 0), "1969-12-31 23:59:59");
        assert_eq!(f("%F", 951_782_400, 0), "2000-02-29");
    }

    #[test]
    fn sub_second_extensions() {
        assert_eq!(f("%S.%f|%l|%k", 5, 123_456_789), "05.123456|123|123456789");
        assert_eq!(f("%f", 5, 999), "000000");
        assert_eq!(f("%%f %%", 5, 1_000), "%f %");
    }

    #[test]
    fn iso_and_week_numbers() {
        // 2021-01-03 (Sunday) belongs to ISO week 53 of 2020.
        assert_eq!(f("%G-W%V %U %W", 1_609_632_000, 0), "2020-W53 01 00");
        // 2024-12-30 (Monday) is ISO week 1 of 2025.
        assert_eq!(f("%G-W%V %g", 1_735_516_800, 0), "2025-W01 25");
    }

    #[test]
    fn offsets_and_unknown_conversions() {
        let t = Tm::from_unix(0, -(5 * 3600 + 30 * 60), "XST");
        assert_eq!(
            strftime(b"%H:%M %z %Z %Q %Ey %", &t, 0),
            b"18:30 -0530 XST %Q 69 %"
        );
        assert!(f("%Y", i64::MAX, 0).len() > 4);
        assert!(f("%Y", i64::MIN, 0).starts_with('-'));
    }

    /// glibc's own strftime over gmtime_r is the reference for every standard conversion.
    fn glibc(fmt: &str, unix: i64) -> String {
        let t: libc::time_t = unix as libc::time_t;
        let cfmt = std::ffi::CString::new(fmt).unwrap();
        let mut buf = [0u8; 512];
        // SAFETY: gmtime_r fills our tm; strftime writes at most buf.len() bytes into buf.
        unsafe {
            let mut tm: libc::tm = std::mem::zeroed();
            assert!(!libc::gmtime_r(&t, &mut tm).is_null());
            let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), cfmt.as_ptr(), &tm);
            String::from_utf8_lossy(&buf[..n]).into_owned()
        }
    }

    #[test]
    fn standard_conversions_match_glibc() {
        let fmt = "%a %A %b %B %c %C %d %D %e %F %g %G %h %H %I %j %m %M %n %p %r %R %s %S %t %T %u %U %V %w %W %x %X %y %Y %z %%";
        let mut unix: i64 = -2_208_988_800; // 1900-01-01
        while unix < 4_102_444_800 {
            // 2100-01-01
            assert_eq!(
                f(fmt, unix, 0),
                glibc(fmt, unix).replace("GMT", "UTC"),
                "at {unix}"
            );
            unix += 86_400 * 3 + 3_671;
        }
    }

    #[test]
    fn local_offset_is_available() {
        assert!(local_offset(0).is_some());
    }
}
