//! The part of POSIX shell that tc scripts use: commands split into words, with
//! comments, `\` line continuations, quotes, `NAME=value` assignments and `$NAME` /
//! `${NAME}` expansion. Redirections (`2>/dev/null`, `>/dev/null 2>&1`), a trailing
//! `|| true` and a pipe into another program (`| grep ...`) are dropped, as they do not
//! change what tc is asked to build; `&&` and `&` separate commands as `;` does. Everything
//! else a shell does (control flow, functions, command substitution) is not
//! interpreted: such a command is returned as it is, and the importer lists it as not
//! translated.
//!
//! Written here rather than taken from a shell-words crate because every word must keep
//! the line and column it was written at (for located messages), and variables must be
//! expanded from the script's own assignments.

use std::collections::BTreeMap;

/// A word of a command, after quote removal and expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The text.
    pub text: String,
    /// 1-based line where the word starts.
    pub line: u32,
    /// 1-based column (in characters) where the word starts.
    pub column: u32,
}

/// A command: its words and the text of the line(s) it was written on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The words, first the program.
    pub words: Vec<Word>,
    /// The command as written (continuations joined), for messages.
    pub text: String,
}

impl Command {
    /// 1-based line of the command's first word.
    pub fn line(&self) -> u32 {
        self.words.first().map_or(1, |w| w.line)
    }
}

/// A syntax error: where, what, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

/// Splits `script` into commands, expanding the variables it assigns. Assignments
/// (`DEV=eth0`) are applied and not returned; every syntax error is returned.
pub fn commands(script: &str) -> Result<Vec<Command>, Vec<SyntaxError>> {
    let mut lexer = Lexer {
        chars: script.chars().collect(),
        pos: 0,
        line: 1,
        column: 1,
        vars: BTreeMap::new(),
        errors: Vec::new(),
    };
    let mut out = Vec::new();
    while let Some(cmd) = lexer.command() {
        if cmd.words.is_empty() {
            continue;
        }
        if cmd.words.len() == 1
            && let Some((name, value)) = assignment(&cmd.words[0].text)
        {
            lexer.vars.insert(name.to_owned(), value.to_owned());
            continue;
        }
        out.push(cmd);
    }
    if lexer.errors.is_empty() {
        Ok(out)
    } else {
        Err(lexer.errors)
    }
}

/// `NAME=value` with a valid shell name.
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() || first == '_')
        .then_some(())
        .filter(|()| chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(|()| (name, value))
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    column: u32,
    vars: BTreeMap<String, String>,
    errors: Vec<SyntaxError>,
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn error(&mut self, line: u32, column: u32, problem: String, fix: &str) {
        self.errors.push(SyntaxError {
            line,
            column,
            problem,
            fix: fix.to_owned(),
        });
    }

    /// The next command (possibly empty), or `None` at the end of the script.
    fn command(&mut self) -> Option<Command> {
        self.peek()?;
        let start = self.pos;
        let mut words = Vec::new();
        let mut dropped = false;
        loop {
            // Blanks and continuations between words.
            while let Some(c) = self.peek() {
                if c == ' ' || c == '\t' || c == '\r' {
                    self.bump();
                } else if c == '\\' && self.peek_at(1) == Some('\n') {
                    self.bump();
                    self.bump();
                } else {
                    break;
                }
            }
            match self.peek() {
                None => break,
                Some('\n') | Some(';') => {
                    self.bump();
                    break;
                }
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                Some('|') => {
                    // `|| true`, `| grep ...`: the rest of the command is dropped.
                    while self.peek().is_some_and(|c| c != '\n' && c != ';') {
                        self.bump();
                    }
                }
                Some('&') => {
                    // `&&` and `&` end the command, as `;` does.
                    self.bump();
                    if self.peek() == Some('&') {
                        self.bump();
                    }
                    break;
                }
                Some(_) => {
                    if let Some(w) = self.word() {
                        if dropped {
                            dropped = false;
                            continue;
                        }
                        if is_redirection(&w.text) {
                            // `2>` / `>` followed by a separate target word.
                            dropped = w.text.ends_with('>');
                            continue;
                        }
                        words.push(w);
                    }
                }
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        let text = text.replace("\\\n", " ").trim().to_owned();
        Some(Command { words, text })
    }

    /// One word: unquoted, `'...'` and `"..."` parts run together, variables expanded.
    fn word(&mut self) -> Option<Word> {
        let (line, column) = (self.line, self.column);
        let mut text = String::new();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' => break,
                '\\' if self.peek_at(1) == Some('\n') => break,
                '|' | '&' if text.is_empty() || !text.ends_with('>') => break,
                '\'' => {
                    let (l, col) = (self.line, self.column);
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('\'') => break,
                            Some(ch) => text.push(ch),
                            None => {
                                self.error(
                                    l,
                                    col,
                                    "this single quote is never closed".to_owned(),
                                    "close the quoted text with `'`",
                                );
                                return None;
                            }
                        }
                    }
                }
                '"' => {
                    let (l, col) = (self.line, self.column);
                    self.bump();
                    loop {
                        match self.peek() {
                            Some('"') => {
                                self.bump();
                                break;
                            }
                            Some('$') => self.expand(&mut text),
                            Some('\\') => {
                                self.bump();
                                if let Some(ch) = self.bump() {
                                    text.push(ch);
                                }
                            }
                            Some(ch) => {
                                self.bump();
                                text.push(ch);
                            }
                            None => {
                                self.error(
                                    l,
                                    col,
                                    "this double quote is never closed".to_owned(),
                                    "close the quoted text with `\"`",
                                );
                                return None;
                            }
                        }
                    }
                }
                '$' => self.expand(&mut text),
                '\\' => {
                    self.bump();
                    if let Some(ch) = self.bump() {
                        text.push(ch);
                    }
                }
                '#' if text.is_empty() => break,
                _ => {
                    self.bump();
                    text.push(c);
                }
            }
        }
        Some(Word { text, line, column })
    }

    /// `$NAME`, `${NAME}`: appends the value; an unset variable is an error.
    fn expand(&mut self, text: &mut String) {
        let (line, column) = (self.line, self.column);
        self.bump();
        let braced = self.peek() == Some('{');
        if braced {
            self.bump();
        }
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                self.bump();
            } else {
                break;
            }
        }
        if braced {
            if self.peek() == Some('}') {
                self.bump();
            } else {
                self.error(
                    line,
                    column,
                    format!("`${{{name}` is not closed, or uses a shell feature not read here"),
                    "write `${NAME}` with only the variable's name inside the braces",
                );
                return;
            }
        }
        if name.is_empty() {
            if braced {
                self.error(
                    line,
                    column,
                    "`${}` names no variable".to_owned(),
                    "write `${NAME}`",
                );
            } else {
                text.push('$');
            }
            return;
        }
        match self.vars.get(&name) {
            Some(v) => text.push_str(v),
            None => self.error(
                line,
                column,
                format!("the variable `{name}` is not set in the script"),
                "assign it before its first use (`NAME=value` on a line of its own), or write \
                 its value in place",
            ),
        }
    }
}

/// `>`, `2>`, `>/dev/null`, `2>&1`, `>>file`, ...: an output redirection.
fn is_redirection(word: &str) -> bool {
    let rest = word.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.starts_with('>') || rest.starts_with('<')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<Vec<String>> {
        commands(script)
            .unwrap()
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn words_variables_continuations_and_redirections() {
        let script = "#!/bin/sh\nDEV=eth0 # the uplink\nRATE=\"10mbit\"\n\
                      tc qdisc del dev $DEV root 2> /dev/null > /dev/null\n\
                      tc class add dev ${DEV} parent 1: \\\n  classid 1:1 htb rate $RATE || true\n";
        assert_eq!(
            texts(script),
            [
                vec!["tc", "qdisc", "del", "dev", "eth0", "root"],
                vec![
                    "tc", "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb",
                    "rate", "10mbit"
                ],
            ]
        );
    }

    /// A pipe drops the rest of its command; `&&` and `&` separate commands, also
    /// inside a word (the fuzzer's `ip_&proto`, which once made the lexer push empty
    /// words until memory ran out).
    #[test]
    fn pipes_and_ampersands() {
        let script = "tc qdisc show dev eth0 | grep htb\n\
                      tc qdisc del dev eth0 root && tc qdisc add dev eth0 root htb &\n\
                      echo ip_&proto|x\n";
        assert_eq!(
            texts(script),
            [
                vec!["tc", "qdisc", "show", "dev", "eth0"],
                vec!["tc", "qdisc", "del", "dev", "eth0", "root"],
                vec!["tc", "qdisc", "add", "dev", "eth0", "root", "htb"],
                vec!["echo", "ip_"],
                vec!["proto"],
            ]
        );
    }

    #[test]
    fn positions_are_kept() {
        let cmds = commands("X=1\n  tc qdisc \\\n   show").unwrap();
        let w = &cmds[0].words;
        assert_eq!((w[0].line, w[0].column), (2, 3));
        assert_eq!((w[2].line, w[2].column), (3, 4));
    }

    #[test]
    fn unset_variables_and_open_quotes_are_located() {
        let errors = commands("tc qdisc add dev $WAN root\necho 'oops\n").unwrap_err();
        assert_eq!((errors[0].line, errors[0].column), (1, 18));
        assert!(errors[0].problem.contains("`WAN` is not set"));
        assert_eq!((errors[1].line, errors[1].column), (2, 6));
    }
}
