//! What a container prints, read line by line: each line cut at
//! [`MAX_LINE`] (a program that prints gigabytes without a newline costs
//! 64 KiB, not gigabytes), and first, from the namespaces' helper, whether
//! its setup is done.

use std::io::{BufRead, Read as _};
use std::sync::Mutex;

/// The longest line shown; the rest of a longer one is left out, and the
/// line says so.
pub const MAX_LINE: usize = 64 * 1024;

/// The helper's first line: ready (then the container's output follows),
/// or why the setup failed. False when nothing more is to be read.
pub(super) fn read_handshake(
    reader: &mut impl BufRead,
    setup: &Mutex<Option<Result<(), String>>>,
) -> bool {
    let mut first = Vec::new();
    let _ = reader
        .by_ref()
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut first);
    let said = if first == crate::run::sandbox::READY {
        Ok(())
    } else if let Some(why) = first.strip_prefix(crate::run::sandbox::FAILED) {
        Err(String::from_utf8_lossy(why).trim_end().to_owned())
    } else {
        Err("its setup ended before it said whether the container's root was made".to_owned())
    };
    let ready = said.is_ok();
    if let Ok(mut slot) = setup.lock() {
        *slot = Some(said);
    }
    ready
}

/// Calls `each` with every line of `reader`, without its line break; a line
/// longer than [`MAX_LINE`] is given at that length, marked as cut, and the
/// rest of it is skipped. Stops when `each` returns false.
pub(super) fn read_lines(reader: &mut impl BufRead, mut each: impl FnMut(String) -> bool) {
    let mut line: Vec<u8> = Vec::new();
    let mut skipping = false;
    loop {
        let (used, ended, over) = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(buffer) => {
                let end = memchr::memchr(b'\n', buffer);
                let content = end.unwrap_or(buffer.len());
                let room = MAX_LINE - line.len();
                let over = !skipping && content > room;
                if !skipping {
                    line.extend_from_slice(&buffer[..content.min(room)]);
                }
                (end.map_or(buffer.len(), |at| at + 1), end.is_some(), over)
            }
        };
        reader.consume(used);
        if over {
            let text = format!(
                "{} … (the line goes on: cut at {} KiB)",
                String::from_utf8_lossy(&line),
                MAX_LINE / 1024
            );
            line.clear();
            skipping = !ended;
            if !each(text) {
                return;
            }
        } else if ended {
            if !skipping {
                let text = String::from_utf8_lossy(&line)
                    .trim_end_matches('\r')
                    .to_owned();
                if !each(text) {
                    return;
                }
            }
            line.clear();
            skipping = false;
        }
    }
    if !line.is_empty() {
        each(String::from_utf8_lossy(&line).into_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_LINE, read_lines};

    fn lines(input: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        read_lines(&mut std::io::BufReader::with_capacity(1000, input), |l| {
            out.push(l);
            true
        });
        out
    }

    #[test]
    fn lines_are_cut_at_their_limit_and_the_rest_skipped() {
        assert_eq!(lines(b"a\nb\r\n\nc"), ["a", "b", "", "c"]);
        let mut long = vec![b'x'; MAX_LINE * 3];
        long.extend_from_slice(b"\nnext\n");
        let got = lines(&long);
        assert_eq!(
            got.len(),
            2,
            "{:?}",
            got.iter().map(String::len).collect::<Vec<_>>()
        );
        assert!(
            got[0].starts_with(&"x".repeat(MAX_LINE)),
            "{}",
            got[0].len()
        );
        assert!(got[0].ends_with("(the line goes on: cut at 64 KiB)"));
        assert_eq!(got[1], "next");
        // Exactly at the limit with its newline: whole.
        let mut exact = vec![b'y'; MAX_LINE];
        exact.push(b'\n');
        assert_eq!(lines(&exact), ["y".repeat(MAX_LINE)]);
    }
}
