//! `kura grep`'s matcher (decision 0055): a regular expression over text, line by line, in
//! time linear in the text whatever the pattern — Rust's `regex` crate (finite automata, no
//! backtracking), so a hostile pattern (`(a+)+$` over 100 KB of `a`) cannot hold a server.
//! Compiling is bounded too (`size_limit`): a pattern whose automaton would be huge
//! (`a{1000}{1000}`) is refused, not built.

use regex::bytes::{Regex, RegexBuilder};

/// Patterns longer than this are refused before compiling.
pub const PATTERN_MAX: usize = 4096;
/// The compiled program's and the lazy DFA's memory at most.
const SIZE_LIMIT: usize = 8 << 20;
const DFA_LIMIT: usize = 16 << 20;

#[derive(Debug)]
pub struct Grep {
    re: Regex,
}

/// One matching line of a block of text: the line's index in the block (from 0), where the
/// line starts and ends (without its `\n`), and its first match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineMatch {
    pub line: u32,
    pub start: u32,
    pub end: u32,
    pub match_start: u32,
    pub match_end: u32,
}

impl Grep {
    /// `^` and `$` match at line ends (`\r\n` too); `ignore_case` folds case by Unicode's rules.
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Grep, String> {
        if pattern.len() > PATTERN_MAX {
            return Err(format!("the pattern is longer than {PATTERN_MAX} bytes"));
        }
        let re = RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .multi_line(true)
            .crlf(true)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(DFA_LIMIT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Grep { re })
    }

    /// The lines of `text` holding a match, in order, each once. A match spanning lines counts
    /// for the line it starts on. An empty match counts (`^` matches every line).
    pub fn lines(&self, text: &[u8], out: &mut Vec<LineMatch>) {
        out.clear();
        let mut line = 0u32;
        let mut line_start = 0usize; // start of the line `line`
        let mut at = 0usize;
        while at <= text.len() {
            let Some(m) = self.re.find_at(text, at) else { break };
            // After a final newline there is no line: the empty match `^` or `$` finds there
            // is the next block's first line, or nothing (grep -c '' on "one\n" is 1, not 2).
            if m.start() == text.len() && text.last().is_none_or(|&b| b == b'\n') {
                break;
            }
            // Count the lines between the last known line start and the match.
            let before = &text[line_start..m.start()];
            line += memchr::memchr_iter(b'\n', before).count() as u32;
            if let Some(last) = memchr::memrchr(b'\n', before) {
                line_start += last + 1;
            }
            // (`line_start` moved past every newline before the match: it is the match's line.)
            let end = memchr_newline(text, m.start());
            let trimmed = if end > line_start && text[end - 1] == b'\r' { end - 1 } else { end };
            out.push(LineMatch { line, start: line_start as u32, end: trimmed as u32, match_start: m.start() as u32, match_end: m.end().min(trimmed.max(m.start())) as u32 });
            // Next search from the line after this one.
            if end >= text.len() {
                break;
            }
            line += 1;
            line_start = end + 1;
            at = end + 1;
        }
    }
}

fn memchr_newline(text: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |p| from + p)
}

/// The newlines in `text` (a block's line count, for the next block's line numbers).
pub fn newlines(text: &[u8]) -> u32 {
    memchr::memchr_iter(b'\n', text).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pattern: &str, ic: bool, text: &str) -> Vec<(u32, String, String)> {
        let g = Grep::new(pattern, ic).unwrap();
        let mut out = Vec::new();
        g.lines(text.as_bytes(), &mut out);
        out.iter()
            .map(|m| (m.line, text[m.start as usize..m.end as usize].to_string(), text[m.match_start as usize..m.match_end as usize].to_string()))
            .collect()
    }

    #[test]
    fn matching_lines_once_each_with_their_first_match() {
        let text = "alpha beta\ngamma\nbeta beta\r\ndelta";
        assert_eq!(lines("beta", false, text), vec![(0, "alpha beta".into(), "beta".into()), (2, "beta beta".into(), "beta".into())]);
        assert_eq!(lines("^d", false, text), vec![(3, "delta".into(), "d".into())]);
        assert_eq!(lines("a$", false, text), vec![(0, "alpha beta".into(), "a".into()), (1, "gamma".into(), "a".into()), (2, "beta beta".into(), "a".into()), (3, "delta".into(), "a".into())]);
        assert_eq!(lines("GAMMA", true, text), vec![(1, "gamma".into(), "gamma".into())]);
        assert_eq!(lines("ΣΊΣΥΦΟΣ", true, "ο σίσυφος\n"), vec![(0, "ο σίσυφος".into(), "σίσυφος".into())]);
        assert_eq!(lines("^", false, "a\n\nb").len(), 3);
        // No line after a final newline, and none in no text.
        assert_eq!(lines("^", false, "one\n").len(), 1);
        assert_eq!(lines("", false, "one\ntwo\n").len(), 2);
        assert_eq!(lines("^$", false, "one\n\n"), vec![(1, "".into(), "".into())]);
        assert_eq!(lines("$", false, "one\r\n").len(), 1);
        assert_eq!(lines("^", false, "").len(), 0);
        assert_eq!(lines("zzz", false, text), vec![]);
    }

    #[test]
    fn a_hostile_pattern_runs_in_linear_time() {
        let text = "a".repeat(100_000);
        let started = std::time::Instant::now();
        assert_eq!(lines("(a+)+$", false, &text).len(), 1);
        assert_eq!(lines("(a|aa)+b", false, &text).len(), 0);
        // Seconds for a backtracking engine; milliseconds here (bounded loosely: a slow CI).
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn refuses_bad_and_huge_patterns() {
        assert!(Grep::new("(unclosed", false).unwrap_err().contains("unclosed"));
        assert!(Grep::new("a{1000}{1000}", false).is_err());
        assert!(Grep::new(&"a".repeat(PATTERN_MAX + 1), false).is_err());
    }
}
