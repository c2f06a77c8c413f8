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
    /// `grep -i WORD`'s finder, when the pattern is a literal (see `FoldedLiteral`).
    folded: Option<FoldedLiteral>,
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
        let folded = if ignore_case { FoldedLiteral::new(pattern) } else { None };
        Ok(Grep { re, folded })
    }

    /// The leftmost match starting at or after `at`.
    fn find_at(&self, text: &[u8], at: usize) -> Option<(usize, usize)> {
        match &self.folded {
            Some(f) => f.find_at(&self.re, text, at),
            None => self.re.find_at(text, at).map(|m| (m.start(), m.end())),
        }
    }

    /// The lines of `text` holding a match, in order, each once. A match spanning lines counts
    /// for the line it starts on. An empty match counts (`^` matches every line).
    pub fn lines(&self, text: &[u8], out: &mut Vec<LineMatch>) {
        out.clear();
        let mut line = 0u32;
        let mut line_start = 0usize; // start of the line `line`
        let mut at = 0usize;
        while at <= text.len() {
            let Some(m) = self.find_at(text, at) else { break };
            // After a final newline there is no line: the empty match `^` or `$` finds there
            // is the next block's first line, or nothing (grep -c '' on "one\n" is 1, not 2).
            if m.0 == text.len() && text.last().is_none_or(|&b| b == b'\n') {
                break;
            }
            // Count the lines between the last known line start and the match.
            let before = &text[line_start..m.0];
            line += memchr::memchr_iter(b'\n', before).count() as u32;
            if let Some(last) = memchr::memrchr(b'\n', before) {
                line_start += last + 1;
            }
            // (`line_start` moved past every newline before the match: it is the match's line.)
            let end = memchr_newline(text, m.0);
            let trimmed = if end > line_start && text[end - 1] == b'\r' { end - 1 } else { end };
            out.push(LineMatch { line, start: line_start as u32, end: trimmed as u32, match_start: m.0 as u32, match_end: m.1.min(trimmed.max(m.0)) as u32 });
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

/// A pattern that is a literal of ASCII characters, searched ignoring case (`grep -i harbour`).
/// The regex crate finds those with its lazy DFA in wasm (~250-300 MB/s: its SIMD literal
/// search for case variants, Teddy, is x86's and ARM's only); this looks for the literal's
/// rarest byte in either case with `memchr2` (SIMD128) and compares the literal around it,
/// several times faster. Exactly the regex's matches: under Unicode's case folding the only
/// characters that fold to an ASCII letter are K (U+212A, for `k`) and ſ (U+017F, for `s`), so
/// the byte looked for is neither `k` nor `s` and is in every match as one of its two cases; a
/// line holding any other byte than ASCII is left to the regex. A literal with neither `k` nor
/// `s` (most words) has only ASCII matches, as long as itself: two of its bytes are looked for
/// at once, at their distance (`Pair`), sixteen places a step in wasm.
#[derive(Debug)]
struct FoldedLiteral {
    /// The literal, lower case.
    needle: Vec<u8>,
    /// Where in it the byte looked for is.
    at: usize,
    lower: u8,
    upper: u8,
    /// For a literal without `k` and `s` of two bytes or more.
    pair: Option<Pair>,
}

/// Two bytes of a literal ignoring case: at `i` in a match, a byte that is `b` once OR-ed with
/// `or` (0x20 for a letter, whose two cases differ by that bit; 0 for any other byte).
#[derive(Debug, Clone, Copy)]
struct Pair {
    i1: usize,
    b1: u8,
    or1: u8,
    i2: usize,
    b2: u8,
    or2: u8,
}

impl FoldedLiteral {
    fn new(pattern: &str) -> Option<FoldedLiteral> {
        // Printable ASCII and tabs, none of them special in a pattern (`regex_syntax`'s meta
        // characters; `#&-~` are special only in classes and verbose mode, which a literal
        // cannot open).
        let literal = |b: u8| (b == b'\t' || (0x20..0x7f).contains(&b)) && !b"\\.+*?()|[]{}^$".contains(&b);
        if pattern.is_empty() || !pattern.bytes().all(literal) {
            return None;
        }
        let needle = pattern.to_ascii_lowercase().into_bytes();
        let folds = |b: u8| b == b'k' || b == b's';
        let at = match memchr::arch::all::packedpair::Pair::new(&needle) {
            Some(pair) => [pair.index1(), pair.index2()].into_iter().map(usize::from).find(|&i| !folds(needle[i])),
            None => None,
        }
        .or_else(|| needle.iter().position(|&b| !folds(b)))?;
        let lower = needle[at];
        let pair = match memchr::arch::all::packedpair::Pair::new(&needle) {
            Some(p) if !needle.iter().any(|&b| folds(b)) => {
                let or = |b: u8| if b.is_ascii_lowercase() { 0x20 } else { 0 };
                let (i1, i2) = (usize::from(p.index1()), usize::from(p.index2()));
                Some(Pair { i1, b1: needle[i1], or1: or(needle[i1]), i2, b2: needle[i2], or2: or(needle[i2]) })
            }
            _ => None,
        };
        Some(FoldedLiteral { at, lower, upper: lower.to_ascii_uppercase(), needle, pair })
    }

    /// The first match of a literal with a `Pair` starting in `from..`.
    fn find_pair(&self, p: &Pair, text: &[u8], from: usize) -> Option<(usize, usize)> {
        let n = self.needle.len();
        let last = text.len().checked_sub(n)?; // the last place a match can start
        let is = |s: usize| text[s..s + n].eq_ignore_ascii_case(&self.needle);
        let mut s = from;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_and, v128_load, v128_or};
            let (b1, or1, b2, or2) = (u8x16_splat(p.b1), u8x16_splat(p.or1), u8x16_splat(p.b2), u8x16_splat(p.or2));
            // Sixteen starts s..s+16 at a step: their bytes at i1 and i2 are in the text
            // (s + 15 + i < last + n = len for every i < n).
            while s + 16 <= last + 1 {
                // SAFETY: in bounds (above); v128_load takes unaligned addresses.
                let (a, b) = unsafe { (v128_load(text.as_ptr().add(s + p.i1) as *const v128), v128_load(text.as_ptr().add(s + p.i2) as *const v128)) };
                let mut hits = u8x16_bitmask(v128_and(u8x16_eq(v128_or(a, or1), b1), u8x16_eq(v128_or(b, or2), b2)));
                while hits != 0 {
                    let at = s + hits.trailing_zeros() as usize;
                    if is(at) {
                        return Some((at, at + n));
                    }
                    hits &= hits - 1;
                }
                s += 16;
            }
        }
        while s <= last {
            if text[s + p.i1] | p.or1 == p.b1 && text[s + p.i2] | p.or2 == p.b2 && is(s) {
                return Some((s, s + n));
            }
            s += 1;
        }
        None
    }

    /// The leftmost match starting at or after `from` (`re`: the same pattern, for lines that
    /// are not all ASCII).
    fn find_at(&self, re: &Regex, text: &[u8], from: usize) -> Option<(usize, usize)> {
        if let Some(p) = &self.pair {
            return self.find_pair(p, text, from);
        }
        let n = self.needle.len();
        // The line around the last candidate: [start, end), `end` its `\n` (or the text's end).
        let mut line: Option<(usize, usize, bool)> = None;
        let mut pos = from + self.at;
        while pos < text.len() {
            let q = pos + memchr::memchr2(self.lower, self.upper, &text[pos..])?;
            let (start, end, ascii) = match line {
                Some(l) if q < l.1 => l,
                _ => {
                    // (A match starts at `from` or after: the line is looked at from there.)
                    let low = line.map_or(from, |l| l.1 + 1).max(from);
                    let start = memchr::memrchr(b'\n', &text[low..q]).map_or(low, |i| low + i + 1);
                    let end = memchr_newline(text, q);
                    let l = (start, end, text[start..end].is_ascii());
                    line = Some(l);
                    l
                }
            };
            if !ascii {
                // Every candidate before this line was no match: the regex's first from here is.
                return re.find_at(text, start).map(|m| (m.start(), m.end()));
            }
            if q >= start + self.at && q - self.at + n <= end && text[q - self.at..q - self.at + n].eq_ignore_ascii_case(&self.needle) {
                return Some((q - self.at, q - self.at + n));
            }
            pos = q + 1;
        }
        None
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
    fn literals_ignoring_case_find_exactly_what_the_regex_finds() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        // Pieces that make near misses, case variants, the two non-ASCII letters that fold to
        // ASCII (K, ſ), other non-ASCII text and line ends of both kinds.
        let pieces = ["harbour", "HARBOUR", "HarBouR", "harbou", "arbour", "\n", "\r\n", " ", "\u{212A}", "\u{17F}", "k", "s", "S", "é", "bb", "B", "kiss", "KISS", "\u{17F}u\u{212A}", "SUK", "a-b", "a b", "x", "\t"];
        let needles = ["harbour", "HARBOUR", "b", "bour", "kiss", "suk", "a-b", "a b", "r\th", "ss", "k", "a.b", "héllo"];
        // The finder is used for the ASCII literals with a byte that is neither k nor s.
        let used: Vec<bool> = needles.iter().map(|n| Grep::new(n, true).unwrap().folded.is_some()).collect();
        assert_eq!(used, [true, true, true, true, true, true, true, true, true, false, false, false, false]);
        let mut rng = StdRng::seed_from_u64(7);
        let (mut fast_out, mut slow_out) = (Vec::new(), Vec::new());
        let mut found = 0;
        for _ in 0..3000 {
            let text: String = (0..rng.random_range(0..40)).map(|_| pieces[rng.random_range(0..pieces.len())]).collect();
            for needle in needles {
                let fast = Grep::new(needle, true).unwrap();
                let slow = Grep { re: fast.re.clone(), folded: None };
                fast.lines(text.as_bytes(), &mut fast_out);
                slow.lines(text.as_bytes(), &mut slow_out);
                assert_eq!(fast_out, slow_out, "{needle:?} in {text:?}");
                found += fast_out.len();
            }
        }
        assert!(found > 10_000, "the texts should hold matches: {found}");
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
