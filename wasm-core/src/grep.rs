//! `kura grep`'s matcher (decision 0055): a regular expression over text, line by line, in
//! time linear in the text whatever the pattern — Rust's `regex` crate (finite automata, no
//! backtracking), so a hostile pattern (`(a+)+$` over 100 KB of `a`) cannot hold a server.
//! Compiling is bounded too (`size_limit`): a pattern whose automaton would be huge
//! (`a{1000}{1000}`) is refused, not built.
//!
//! A match never crosses a line end, as in ripgrep: the pattern is compiled with every class
//! that could match `\n` (`\s`, `[^x]`, `\W`, `(?s).`, ...) made one that cannot
//! (`line_bound`), and a pattern that names a line break itself (`\n`) is refused.

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
        let build = |p: &str| {
            RegexBuilder::new(p)
                .case_insensitive(ignore_case)
                .multi_line(true)
                .crlf(true)
                .size_limit(SIZE_LIMIT)
                .dfa_size_limit(DFA_LIMIT)
                .build()
                .map_err(|e| e.to_string())
        };
        // Compiled once, bounded to a line. When that is refused, the pattern as written is
        // compiled for the reason: a pattern that is no regular expression is told so first
        // (as ripgrep does), whatever else it holds.
        let re = match line_bound(pattern) {
            Ok(bounded) => build(&bounded).or_else(|why| build(pattern).and(Err(why)))?,
            Err(why) => {
                build(pattern)?;
                return Err(why.to_string());
            }
        };
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

    /// Every match in `line` (one line, without its line end), in order and not overlapping,
    /// as `grep -o` prints them: after an empty match the search goes on one character later
    /// (the regex crate's iteration, which allows no empty match right after a match), so `x*`
    /// over `axxb` gives ``, `xx`, ``.
    pub fn matches_in(&self, line: &[u8], out: &mut Vec<(u32, u32)>) {
        out.clear();
        match &self.folded {
            // A literal is never empty: each match ends past where it began.
            Some(f) => {
                let mut at = 0;
                while let Some(m) = f.find_at(&self.re, line, at) {
                    out.push((m.0 as u32, m.1 as u32));
                    at = m.1;
                }
            }
            None => out.extend(self.re.find_iter(line).map(|m| (m.start() as u32, m.end() as u32))),
        }
    }

    /// The lines of `text` holding a match, in order, each once. A match is within its line
    /// (`line_bound`). An empty match counts (`^` matches every line).
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
            debug_assert!(m.1 <= end, "a match crossed a line end");
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

/// Why `line_bound` gives no pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unbounded {
    /// The pattern names a line break (`\n`, `\x0A`, `\u{a}`, a line feed written raw or
    /// escaped, a class of line breaks alone): ripgrep's "the literal '\n' is not allowed".
    LineBreak,
    /// The pattern ends inside a class, an escape or a group's opening: no regular expression
    /// (compiling it says why).
    Unfinished,
}

impl std::fmt::Display for Unbounded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unbounded::LineBreak => "a line break (\\n) is not allowed in the pattern: grep matches each line alone, and no match crosses a line end",
            Unbounded::Unfinished => "the pattern ends inside a class, an escape or a group",
        })
    }
}

/// What an escape is, for `line_bound`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// `\n`, a hex escape of U+000A, or `\` before a raw line feed.
    LineBreak,
    /// A Perl class that may hold `\n`: `\s \S \D \W`.
    Perl,
    /// A Unicode class: `\p…`, `\P…`.
    Class,
    /// Anything else (`\d` and `\w` never match `\n`).
    Other,
}

/// `pattern` (one the regex crate accepts) rewritten so that no match holds a `\n`: what
/// ripgrep does to the parsed pattern (grep-regex's `strip_from_match`: `\n` taken out of every
/// class, a literal `\n` refused), done on its text because the regex crate takes no parsed
/// form. A bracketed class `[…]` becomes `[[…]&&[^\n]]`, `\s` (`\S \D \W`) becomes
/// `(?-i:[\s&&[^\n]])`, `\p…` (`\P…`) `[\p…&&[^\n]]`, a `.` under the `s` flag `[^\n]`; a line
/// break named alone (`\n`, `\x0A`, `\u{a}`, a raw line feed, `[\n]`) is refused. The rest is
/// copied as written, so the compiled automaton is the pattern's own less `\n`: a literal's is
/// the same, and so is its speed. The scan follows the crate's parser where it matters:
/// escapes, classes (nested, ASCII `[:name:]`, a leading `]` or `-`, operators), named groups,
/// and the flags that change how the text reads — `x` (whitespace and `#` comments ignored, in
/// classes and escapes too) and `s` — each to the end of the group that sets it. Multi-line and
/// CRLF are on already (`^`/`$` at line ends); `\r` is text, as ripgrep's default has it.
fn line_bound(pattern: &str) -> Result<String, Unbounded> {
    let mut s = Scan { p: pattern.chars().collect(), i: 0, out: String::with_capacity(pattern.len() + 32) };
    // The `x` and `s` flags in force, and those to restore at each open group's end.
    let (mut x, mut dotall) = (false, false);
    let mut groups: Vec<(bool, bool)> = Vec::new();
    while let Some(c) = s.peek() {
        match c {
            c if x && (c.is_whitespace() || c == '#') => s.space(x),
            '(' => {
                s.take()?;
                groups.push((x, dotall));
                s.space(x);
                if s.peek() == Some('?') {
                    s.take()?;
                    if matches!(s.peek(), Some('P' | '<')) {
                        // A named group: its name (which may hold `[`, `]` and `.`) to its `>`.
                        while s.take()? != '>' {}
                    } else {
                        // Flags: for the group (`(?s:…)`), or to the end of this one (`(?s)`).
                        let (mut nx, mut ns, mut on) = (x, dotall, true);
                        loop {
                            match s.take()? {
                                '-' => on = false,
                                'x' => nx = on,
                                's' => ns = on,
                                ':' => break,
                                ')' => {
                                    groups.pop();
                                    break;
                                }
                                _ => {}
                            }
                        }
                        (x, dotall) = (nx, ns);
                    }
                }
            }
            ')' => {
                s.take()?;
                (x, dotall) = groups.pop().unwrap_or((x, dotall));
            }
            '[' => s.class(x)?,
            '\\' => {
                let at = s.out.len();
                match s.escape(x)? {
                    Escape::LineBreak => return Err(Unbounded::LineBreak),
                    // (`\s \S \D \W` are never case folded, their sets being closed under
                    // it: `(?-i:…)` spares folding the intersection, 3.7 ms for `-i \S`.)
                    Escape::Perl => {
                        s.out.insert_str(at, "(?-i:[");
                        s.out.push_str("&&[^\\n]])");
                    }
                    Escape::Class => {
                        s.out.insert(at, '[');
                        s.out.push_str("&&[^\\n]]");
                    }
                    Escape::Other => {}
                }
            }
            '.' => {
                s.i += 1;
                s.out.push_str(if dotall { "[^\\n]" } else { "." });
            }
            '\n' => return Err(Unbounded::LineBreak), // (a raw line feed, without the `x` flag)
            _ => {
                s.take()?;
            }
        }
    }
    Ok(s.out)
}

/// `line_bound`'s reading of a pattern: its characters, the place reached, the pattern written.
struct Scan {
    p: Vec<char>,
    i: usize,
    out: String,
}

impl Scan {
    fn peek(&self) -> Option<char> {
        self.p.get(self.i).copied()
    }

    /// The next character, copied.
    fn take(&mut self) -> Result<char, Unbounded> {
        let c = self.peek().ok_or(Unbounded::Unfinished)?;
        self.i += 1;
        self.out.push(c);
        Ok(c)
    }

    /// Under the `x` flag, whitespace and comments (`#` through the line's end), copied.
    fn space(&mut self, x: bool) {
        if !x {
            return;
        }
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.i += 1;
                    self.out.push(c);
                }
                Some('#') => {
                    while let Ok(c) = self.take() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                _ => break,
            }
        }
    }

    /// An escape (at its `\`), copied.
    fn escape(&mut self, x: bool) -> Result<Escape, Unbounded> {
        self.take()?;
        let c = self.take()?;
        Ok(match c {
            'n' | '\n' => Escape::LineBreak,
            's' | 'S' | 'D' | 'W' => Escape::Perl,
            'p' | 'P' => {
                self.space(x);
                if self.take()? == '{' {
                    loop {
                        self.space(x);
                        if self.take()? == '}' {
                            break;
                        }
                    }
                }
                Escape::Class
            }
            'x' | 'u' | 'U' => {
                let mut value = 0u32;
                let mut digit = |d: char| value = value.saturating_mul(16).saturating_add(d.to_digit(16).unwrap_or(0));
                self.space(x);
                if self.peek() == Some('{') {
                    self.take()?;
                    loop {
                        self.space(x);
                        match self.take()? {
                            '}' => break,
                            d => digit(d),
                        }
                    }
                } else {
                    for k in 0..[2, 4, 8][usize::from(c == 'u') + 2 * usize::from(c == 'U')] {
                        if k > 0 {
                            self.space(x);
                        }
                        digit(self.take()?);
                    }
                }
                if value == u32::from(b'\n') { Escape::LineBreak } else { Escape::Other }
            }
            _ => Escape::Other,
        })
    }

    /// A bracketed class (at its `[`), copied as `[[…]&&[^\n]]`; refused when it is made of
    /// line breaks alone (`[\n]`: ripgrep reads it as the literal).
    fn class(&mut self, x: bool) -> Result<(), Unbounded> {
        self.out.push('[');
        self.take()?;
        // `[:` would read as an ASCII class (`[:alpha:]`) once nested: `\:` keeps it a colon.
        if self.peek() == Some(':') {
            self.out.push('\\');
        }
        let (negated, mut other) = self.class_open(x)?;
        let mut line_breaks = 0;
        let mut depth = 1;
        while depth > 0 {
            self.space(x);
            match self.peek().ok_or(Unbounded::Unfinished)? {
                '[' => {
                    other = true;
                    if !self.ascii_class() {
                        self.take()?;
                        self.class_open(x)?;
                        depth += 1;
                    }
                }
                ']' => {
                    self.take()?;
                    depth -= 1;
                }
                '\\' => match self.escape(x)? {
                    Escape::LineBreak => line_breaks += 1,
                    _ => other = true,
                },
                '\n' => {
                    // (a raw line feed, without the `x` flag)
                    self.take()?;
                    line_breaks += 1;
                }
                c => {
                    // `&&`, `--` and `~~` are operators; `-` alone makes a range.
                    if matches!(c, '&' | '-' | '~') && self.p.get(self.i + 1) == Some(&c) {
                        self.take()?;
                    }
                    self.take()?;
                    other = true;
                }
            }
        }
        if !negated && !other && line_breaks > 0 {
            return Err(Unbounded::LineBreak);
        }
        self.out.push_str("&&[^\\n]]");
        Ok(())
    }

    /// A class's opening after its `[`: a `^`, then any `-` and a first `]` (items, not an
    /// operator or its end). Whether it is negated, and whether it holds such items.
    fn class_open(&mut self, x: bool) -> Result<(bool, bool), Unbounded> {
        self.space(x);
        let negated = self.peek() == Some('^');
        if negated {
            self.take()?;
            self.space(x);
        }
        let mut items = false;
        while self.peek() == Some('-') {
            self.take()?;
            self.space(x);
            items = true;
        }
        if !items && self.peek() == Some(']') {
            self.take()?;
            items = true;
        }
        Ok((negated, items))
    }

    /// An ASCII class inside a class (at its `[`: `[:alpha:]`, `[:^space:]`), copied; false,
    /// with nothing taken, when what follows is not one (it is then a nested class).
    fn ascii_class(&mut self) -> bool {
        const NAMES: [&str; 14] = ["alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "word", "xdigit"];
        let rest = &self.p[self.i..];
        if rest.get(1) != Some(&':') {
            return false;
        }
        let from = if rest.get(2) == Some(&'^') { 3 } else { 2 };
        let Some(to) = rest[from.min(rest.len())..].iter().position(|&c| c == ':').map(|k| from + k) else { return false };
        let name: String = rest[from..to].iter().collect();
        if rest.get(to + 1) != Some(&']') || !NAMES.contains(&name.as_str()) {
            return false;
        }
        self.out.extend(&rest[..to + 2]);
        self.i += to + 2;
        true
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

    fn every_match(pattern: &str, ic: bool, line: &str) -> Vec<String> {
        let g = Grep::new(pattern, ic).unwrap();
        let mut out = Vec::new();
        g.matches_in(line.as_bytes(), &mut out);
        out.iter().map(|&(a, b)| line[a as usize..b as usize].to_string()).collect()
    }

    #[test]
    fn every_match_of_a_line_in_order() {
        assert_eq!(every_match("harbour", false, "xx harbourharbour Harbour"), ["harbour", "harbour"]);
        assert_eq!(every_match("harbour", true, "xx harbourharbour Harbour"), ["harbour", "harbour", "Harbour"]);
        assert_eq!(every_match("HARBOUR", true, "a Harbou harbouR"), ["harbouR"]);
        assert_eq!(every_match(r"\d+", false, "a1 b22 c333"), ["1", "22", "333"]);
        assert_eq!(every_match("x*", false, "axxb"), ["", "xx", ""]); // (no empty match right after a match)
        assert_eq!(every_match("é+", false, "aéé b é"), ["éé", "é"]);
        assert_eq!(every_match("zzz", false, "none here"), Vec::<String>::new());
        assert_eq!(every_match("aa", false, "aaaaa"), ["aa", "aa"]); // not overlapping
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
        let (mut fast_spans, mut slow_spans) = (Vec::new(), Vec::new());
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
                // Every match of each line (`-o`), the finder's against the regex's.
                for line in text.split('\n') {
                    fast.matches_in(line.as_bytes(), &mut fast_spans);
                    slow.matches_in(line.as_bytes(), &mut slow_spans);
                    assert_eq!(fast_spans, slow_spans, "-o {needle:?} in {line:?}");
                }
            }
        }
        assert!(found > 10_000, "the texts should hold matches: {found}");
    }

    /// A trial's file: ripgrep finds nothing for `meeting\s+The` and `Harbour[^z]*berth`, and
    /// counts 3 lines for `[^x]+` (not the empty one); Kura matched across the line ends.
    const TRIAL: &str = "# Harbour master meeting\n\nThe ferry leaves at noon.\nTODO: email about berth 12.\n";

    fn line_numbers(pattern: &str, ic: bool, text: &str) -> Vec<u32> {
        lines(pattern, ic, text).iter().map(|l| l.0).collect()
    }

    #[test]
    fn a_match_never_crosses_a_line_end() {
        assert_eq!(line_numbers("meeting\\s+The", false, TRIAL), Vec::<u32>::new());
        assert_eq!(line_numbers("[^x]+", false, TRIAL), vec![0, 2, 3]);
        assert_eq!(line_numbers("Harbour[^z]*berth", false, TRIAL), Vec::<u32>::new());
        // Every class that holds `\n`, in every spelling, and `.` under the `s` flag.
        for p in ["meeting\\W+The", "meeting\\S*\\s\\S*The", "meeting[\\s\\S]+The", "meeting\\D+The", "meeting[[:space:]]+The", "meeting[^a]+The", "meeting[[^a]&&[^b]]+The", "(?s)meeting.+The", "(?s:meeting.+The)", "meeting(?s:.)+The", "(?x) meeting \\s+ # a comment\n The", "meeting[\\x00-\\x{7f}]+The", "meeting(?-u:[^a])+The", "(?s-u)meeting.+The", "(?i)MEETING\\s+the", "meeting[a\\n]*\\s*The", "noon\\.\\s*$\\s*^TODO"] {
            assert_eq!(line_numbers(p, false, TRIAL), Vec::<u32>::new(), "{p:?}");
        }
        // The same classes still match within a line, `\r` included (text, as in ripgrep).
        assert_eq!(lines("ferry\\s+leaves", false, TRIAL), vec![(2, "The ferry leaves at noon.".into(), "ferry leaves".into())]);
        assert_eq!(lines("(?s)ferry.+", false, TRIAL), vec![(2, "The ferry leaves at noon.".into(), "ferry leaves at noon.".into())]);
        assert_eq!(lines("a[^x]*$", false, "abc\r\nabd\n"), vec![(0, "abc".into(), "abc".into()), (1, "abd".into(), "abd".into())]);
        assert_eq!(line_numbers("c\\s+a", false, "abc\r\nabd\n"), Vec::<u32>::new());
        assert_eq!(line_numbers("c\\s+d", false, "abc\r d\n"), vec![0]);
        // Empty lines have nothing for a class to match; `^` and `$` still match there.
        assert_eq!(line_numbers("\\s*", false, "a\n\n b\n"), vec![0, 1, 2]);
        assert_eq!(line_numbers("[\\s\\S]", false, "a\n\n\r\nb"), vec![0, 2, 3]);
        // A block of many lines that each match: as ripgrep, each once, and in linear time
        // (before, `[^x]+` matched from each line to the block's end: quadratic).
        let big = "some words on a line\n".repeat(20_000);
        let started = std::time::Instant::now();
        assert_eq!(lines("[^x]+", false, &big).len(), 20_000);
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn a_line_break_in_the_pattern_is_refused() {
        for p in ["\\n", "meeting\\nThe", "a\nb", "\\x0A", "\\x0a", "\\x{a}", "\\x{00A}", "\\u000A", "\\u{A}", "\\U0000000A", "\\U{a}", "[\\n]", "[\\n\\n]", "[\n]", "a\\n?b", "(?x) a \\x 0 a", "(?x)a\\\nb", "(?s)(a|\\n)", "(?i)\\n"] {
            let why = Grep::new(p, false).unwrap_err();
            assert!(why.contains("line break (\\n) is not allowed"), "{p:?}: {why}");
            assert!(!why.contains('\n'), "one line: {why}");
        }
        // A pattern that is no regular expression is told so first.
        assert!(Grep::new("\\n(", false).unwrap_err().contains("unclosed group"));
        // Not a line break: a class holding one besides others (it is taken out, as ripgrep
        // does), its negation, a raw line feed under `x` (whitespace), `\\n` escaped.
        assert_eq!(line_numbers("[a\\n]+b", false, "a\nb\nab\n"), vec![2]);
        assert_eq!(line_numbers("[^\\n]", false, "a\n\nb"), vec![0, 2]);
        assert_eq!(line_numbers("(?x)a\nb", false, "a\nb\nab\n"), vec![2]);
        assert_eq!(line_numbers("\\\\n", false, "a\\nb\n"), vec![0]);
        assert_eq!(line_numbers("[\\x00-\\x0A]", false, "\tx\nx\n"), vec![0]);
    }

    #[test]
    fn line_bound_reads_the_pattern_as_the_regex_crate_does() {
        let b = |p: &str| line_bound(p).unwrap();
        // Literals, anchors, repetitions, `\d` `\w` and escapes are copied as written.
        for p in ["harbour", "^a+b{2,3}?$", "\\d\\w\\b\\B\\A\\z\\.\\[\\]\\(\\)", "a{2}\\b{start}", "(?P<n[0].x>a)(?<m>b)(?:c)", "\\x41\\u{42}", "(?i-s)a", "\\#\\ \\&"] {
            assert_eq!(b(p), p);
        }
        assert_eq!(b("a\\sb\\S\\D\\W"), "a(?-i:[\\s&&[^\\n]])b(?-i:[\\S&&[^\\n]])(?-i:[\\D&&[^\\n]])(?-i:[\\W&&[^\\n]])");
        assert_eq!(b("\\pS\\PS"), "[\\pS&&[^\\n]][\\PS&&[^\\n]]");
        assert_eq!(b("[^x]"), "[[^x]&&[^\\n]]");
        assert_eq!(b("[]a]|[^]a]|[-a]|[^-]"), "[[]a]&&[^\\n]]|[[^]a]&&[^\\n]]|[[-a]&&[^\\n]]|[[^-]&&[^\\n]]");
        assert_eq!(b("[a[^b]c]"), "[[a[^b]c]&&[^\\n]]");
        assert_eq!(b("[[:alpha:][:^space:]]"), "[[[:alpha:][:^space:]]&&[^\\n]]");
        // Top-level `[:alpha:]` is a class of `:ahlp`, not an ASCII class: kept one.
        assert_eq!(b("[:alpha:]"), "[[\\:alpha:]&&[^\\n]]");
        assert_eq!(b("[a&&b--c~~d]"), "[[a&&b--c~~d]&&[^\\n]]");
        assert_eq!(b("\\p{Greek}\\PL(?x)\\p {L}"), "[\\p{Greek}&&[^\\n]][\\PL&&[^\\n]](?x)[\\p {L}&&[^\\n]]");
        // `.` under `s` only, to the end of the group that sets it.
        assert_eq!(b(".(?s).(?-s).(?s:.)."), ".(?s)[^\\n](?-s).(?s:[^\\n]).");
        assert_eq!(b("((?s).).(?s:(?-s).)"), "((?s)[^\\n]).(?s:(?-s).)");
        assert_eq!(b("[.]\\."), "[[.]&&[^\\n]]\\.");
        // Under `x`: comments and whitespace, in classes and escapes too.
        assert_eq!(b("(?x) [ ^ a ] # a [ comment ( . \n \\s"), "(?x) [[ ^ a ]&&[^\\n]] # a [ comment ( . \n (?-i:[\\s&&[^\\n]])");
        assert_eq!(b("(?x:a # ]\n)b"), "(?x:a # ]\n)b");
        // Without `x` (past the group that set it), `#` is a literal: `[` opens a class.
        assert_eq!(line_bound("(?x:a # ]\n)#[\n"), Err(Unbounded::Unfinished));
        assert_eq!(line_bound("[a"), Err(Unbounded::Unfinished));
        // Every rewritten pattern compiles to the same matches within a line.
        for p in ["[:alpha:]+", "[[:alpha:]]+", "(?x)[ a b ]+ # x", "[]a]+", "(?i)[^k]+"] {
            let g = Grep::new(p, false).unwrap();
            assert!(g.re.is_match(b"alpha:]"), "{p:?}");
        }
    }

    /// Each line matched alone by the pattern as written, as grep.rs reports it: the reference
    /// for "no match crosses a line end" (for texts without `\r\n`: a line alone has no
    /// `\r\n` for `$` to stop before).
    fn reference(re: &Regex, text: &[u8]) -> Vec<LineMatch> {
        let mut out = Vec::new();
        let (mut start, mut line) = (0usize, 0u32);
        while start < text.len() {
            let end = memchr_newline(text, start);
            if let Some(m) = re.find(&text[start..end]) {
                let trimmed = if end > start && text[end - 1] == b'\r' { end - 1 } else { end };
                let (ms, me) = (start + m.start(), start + m.end());
                out.push(LineMatch { line, start: start as u32, end: trimmed as u32, match_start: ms as u32, match_end: me.min(trimmed.max(ms)) as u32 });
            }
            start = end + 1;
            line += 1;
        }
        out
    }

    #[test]
    fn random_patterns_match_as_each_line_alone() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        // Atoms of every kind the rewriting touches or must leave alone; those naming a line
        // break (`\n`, `\x0a`, `[\n]`) make the pattern refused.
        const ATOMS: [&str; 51] = [
            "a", "b", "ab", "x", "é", " ", "\\s", "\\S", "\\W", "\\D", "\\w", "\\d", ".", "[^x]", "[^a]", "[a-z]", "[[:space:]]", "[[:^alpha:]]",
            "[\\s\\S]", "[^\\n]", "[a\\n]", "[\\x00-\\x{10}]", "[:a:]", "[]a]", "[^]a]", "[-a]", "[\\W&&[^b]]", "[a-z--b]", "[\\s~~a]", "\\x20", "\\r",
            "\\t", "\\b", "\\B", "^", "$", "(?i:A)", "(?-u:\\W)", "(?-u:[^a])", "(?-u:(?s:.))", "[[:cntrl:]]", "\\v", "(?x: a \\s # c ]\n b)", "[^:a:]", "[[:alpha:]\\n]",
            "(?x:\\x 6 1 [ \\n b ])", "\\n", "\\x0a", "[\\n]", "\\x{0A}", "[\\x0a]",
        ];
        const BREAKS: [&str; 5] = ["\\n", "\\x0a", "[\\n]", "\\x{0A}", "[\\x0a]"];
        fn pattern_of(rng: &mut StdRng, depth: u32, names: &mut u32, breaks: &mut bool) -> String {
            let pick = if depth == 0 { 0 } else { rng.random_range(0..9) };
            match pick {
                0..=2 => {
                    let a = ATOMS[rng.random_range(0..ATOMS.len())];
                    *breaks |= BREAKS.contains(&a);
                    a.to_string()
                }
                3 | 4 => (0..rng.random_range(2..4)).map(|_| pattern_of(rng, depth - 1, names, breaks)).collect(),
                5 => format!("{}|{}", pattern_of(rng, depth - 1, names, breaks), pattern_of(rng, depth - 1, names, breaks)),
                6 => format!("(?:{}){}", pattern_of(rng, depth - 1, names, breaks), ["*", "+", "?", "{0,3}", "*?", "{2}"][rng.random_range(0..6)]),
                7 => {
                    *names += 1;
                    let open = ["(?s:", "(?x:", "(?-s:", "(?i:", "(", "(?s)(?:"][rng.random_range(0..6)].to_string();
                    let open = if open == "(" { format!("(?<g{names}>") } else { open };
                    format!("{open}{})", pattern_of(rng, depth - 1, names, breaks))
                }
                _ => format!("(?s){}", pattern_of(rng, depth - 1, names, breaks)),
            }
        }
        const TEXT: [&str; 14] = ["a", "b", "x", "ab", " ", "\t", "\n", "\n", "\r", "é", "Σ", "\u{b}", "\u{85}", ":"];
        let mut rng = StdRng::seed_from_u64(55);
        let (mut compared, mut refused, mut found) = (0, 0, 0);
        let mut got = Vec::new();
        for _ in 0..3000 {
            let (mut names, mut breaks) = (0, false);
            let pattern = pattern_of(&mut rng, 3, &mut names, &mut breaks);
            let ic = rng.random_bool(0.2);
            let Ok(re) = RegexBuilder::new(&pattern).case_insensitive(ic).multi_line(true).crlf(true).build() else { continue };
            match Grep::new(&pattern, ic) {
                Err(why) => {
                    assert!(breaks && why.contains("line break"), "{pattern:?}: {why}");
                    refused += 1;
                }
                Ok(g) => {
                    assert!(!breaks, "{pattern:?} names a line break");
                    for _ in 0..8 {
                        let mut text = String::new();
                        for _ in 0..rng.random_range(0..30) {
                            let piece = TEXT[rng.random_range(0..TEXT.len())];
                            // (no `\r\n`: see `reference`; grep's CRLF is tested above)
                            text.push_str(if piece == "\n" && text.ends_with('\r') { " \n" } else { piece });
                        }
                        g.lines(text.as_bytes(), &mut got);
                        assert_eq!(got, reference(&re, text.as_bytes()), "{pattern:?} (ignoring case: {ic}) in {text:?}");
                        found += got.len();
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 15_000 && refused > 100 && found > 20_000, "{compared} texts, {refused} refused, {found} lines");
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
