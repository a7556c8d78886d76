//! CPU sets as the kernel publishes them under `/sys/devices/system/cpu/` (`online`,
//! `possible`): a comma-separated list of ids and inclusive ranges, e.g. `0-3,5,8-9`.
//!
//! Input: the text of such a file. Output: the CPU ids in ascending order, without duplicates.
//! The perf buffer needs the ids of the online CPUs (one perf event per online CPU); the number
//! of possible CPUs, which sizes per-CPU map values, is `sys::map::possible_cpus`.

use std::io;

use thiserror::Error;

/// A CPU list that does not follow the kernel's `cpulist` format.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("malformed CPU list {text:?}: bad element {element:?}")]
pub struct CpuListError {
    pub text: String,
    pub element: String,
}

/// Parses a kernel CPU list (`Documentation/admin-guide/cputopology.rst` format).
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, CpuListError> {
    let text = text.trim();
    let bad = |element: &str| CpuListError {
        text: text.to_string(),
        element: element.to_string(),
    };
    let mut cpus = Vec::new();
    if text.is_empty() {
        return Ok(cpus);
    }
    for element in text.split(',') {
        let element = element.trim();
        let (lo, hi) = match element.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (element, element),
        };
        let lo: u32 = lo.parse().map_err(|_| bad(element))?;
        let hi: u32 = hi.parse().map_err(|_| bad(element))?;
        if lo > hi {
            return Err(bad(element));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn read_cpu_file(name: &str) -> io::Result<Vec<u32>> {
    let path = format!("/sys/devices/system/cpu/{name}");
    let text = std::fs::read_to_string(&path)?;
    parse_cpu_list(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The CPUs that are online now (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> io::Result<Vec<u32>> {
    read_cpu_file("online")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_single_ids() {
        assert_eq!(
            parse_cpu_list("0-3,5,8-9\n").unwrap(),
            [0, 1, 2, 3, 5, 8, 9]
        );
        assert_eq!(parse_cpu_list("0").unwrap(), [0]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("2,0-2").unwrap(), [0, 1, 2]);
    }

    #[test]
    fn rejects_malformed_lists() {
        assert_eq!(parse_cpu_list("0-x").unwrap_err().element, "0-x");
        assert_eq!(parse_cpu_list("3-1").unwrap_err().element, "3-1");
        assert!(parse_cpu_list("0,,1").is_err());
    }

    #[test]
    fn host_has_an_online_cpu() {
        let online = online_cpus().expect("sysfs cpu/online readable");
        assert!(!online.is_empty());
    }
}
