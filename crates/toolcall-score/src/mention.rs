//! Tool-like names mentioned in text.
//!
//! Two readers need them: scoring, for a response that writes a call in prose or as a
//! JSON-looking block inside a text part instead of making a structured call; and the drift lint,
//! for a prompt that tells the model to use a name the catalog no longer has.
//!
//! A bare identifier in text is weak evidence (`account_id` is a parameter, `snake_case` a style),
//! so a mention counts only in a context that says "this is a tool being called": a JSON object
//! with a name and arguments, call syntax (`get_balance(`), or a calling verb or the word "tool"
//! next to it ("call lookup_customer", "the `refund` tool").
//!
//! Talk about a tool is not a call to it. The words of a phrase must stand next to each other in
//! one clause (`running | shuttingDown` is a type union, not "running" a tool), and a clause that
//! declines or reports the call does not count, for call syntax as for phrases: a negation
//! anywhere in the clause before it ("I don't have the ability to call x", "there is no tool
//! called x") or in the words after it ("`x()` is not one of my tools"), or a reporting verb
//! before it ("you asked me to call x").
//!
//! Code is not a call either. In a response ([`Reader::Response`]), nothing in a code block of
//! source or a diagram counts (a fenced block in a language; an unmarked or indented block that
//! reads as source), only JSON call blocks; an unmarked block of bare `name(…)` lines is a call
//! transcript and still counts. A name the text defines (`def name(`, `type name`, …) is the
//! model's own, and `name(…)` labelling a list item, heading or table cell ("- **save_to_excel()**:
//! Exports data") describes a function rather than calls it. Lines that read as source outside
//! a fence (an import, an assignment, a decorator, and the call lines beside them) are code too,
//! and so is a call the text describes ("`parse(rows)` returns a list"). A prompt
//! ([`Reader::Prompt`]) declares its tools in code, so these rules are for responses only.
//!
//! A call a response hands to the reader is not the model's: "you can call foo_bar(items)"
//! explains the reader's code (the reader as the clause's subject, before a modal or a calling
//! verb); in a prompt "you" is the model, so there it is still a call. "Use the `str_replace`
//! command" names a command, not a tool, in both.
//!
//! Cost: the code-block layout and the definition search are read only once a token has
//! passed every other test, once per name, so prose without mentions still costs one pass.

use std::borrow::Cow;
use std::ops::Range;

use serde_json::Value;

/// How a name was recognised as a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// A JSON object inside the text with a name and arguments.
    JsonBlock,
    /// `name(` call syntax.
    CallSyntax,
    /// A calling verb before it, or "tool"/"function" after it.
    Phrase,
}

/// A tool-like name found in text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mention<'t> {
    /// The name as written (borrowed from the text unless it was a JSON string).
    pub name: Cow<'t, str>,
    /// Why it counts.
    pub evidence: Evidence,
    /// The byte offset it was found at, for [`Mention::context`].
    at: usize,
}

impl Mention<'_> {
    /// The sentence it was found in, clipped; `text` is the text it was found in. Computed on
    /// demand: most mentions name a defined tool and are never reported.
    pub(crate) fn context(&self, text: &str) -> String {
        sentence_around(text, self.at)
    }

    /// The byte offset in its text it was found at.
    pub(crate) fn offset(&self) -> usize {
        self.at
    }
}

const VERBS: &[&str] = &[
    "call",
    "calls",
    "calling",
    "called",
    "use",
    "uses",
    "using",
    "invoke",
    "invokes",
    "invoking",
    "run",
    "runs",
    "running",
    "execute",
    "executing",
    "trigger",
    "triggering",
    "try",
    "trying",
    "via",
];
const FILLERS: &[&str] = &["the", "a", "an", "tool", "function", "now", "first", "then"];
const NEGATIONS: &[&str] = &["not", "no", "never", "cannot", "without", "unable", "nor"];
/// Verbs that report what someone else said rather than make a call ("you asked me to call x").
const REPORTING: &[&str] = &[
    "asked",
    "mentioned",
    "mentions",
    "requested",
    "said",
    "says",
    "wrote",
    "suggested",
    "quoted",
];
/// Words after "you" that make the reader the one who calls: "you can call foo_bar(items)"
/// explains the reader's code, it is not the model's call.
const MODALS: &[&str] = &[
    "can", "could", "may", "might", "should", "would", "will", "must", "need", "needs", "just",
    "then", "also", "simply", "only", "want", "have",
];
/// Verbs right after `name(…)` that describe what a function does ("`parse(rows)` returns a
/// list"): the text explains code rather than calls it.
const DESCRIBING: &[&str] = &[
    "returns", "takes", "accepts", "raises", "throws", "yields", "expects", "receives", "wraps",
];
/// Words that start a new clause: a negation before one does not reach past it.
const CONJUNCTIONS: &[&str] = &[
    "but", "so", "and", "however", "instead", "although", "though",
];
const NOUNS: &[&str] = &["tool", "function", "endpoint", "action"];
/// Nouns that, right after a name, say what else it is: "use the `str_replace` command" names a
/// value of an argument, "use GITHUB_TOKEN variable" a setting, not a tool.
const OTHER_NOUNS: &[&str] = &[
    "command",
    "commands",
    "subcommand",
    "mode",
    "parameter",
    "parameters",
    "argument",
    "arguments",
    "field",
    "fields",
    "variable",
    "variables",
    "option",
    "options",
    "flag",
    "flags",
    "key",
    "keys",
    "value",
    "values",
    "column",
    "property",
    "attribute",
    "setting",
    "header",
    "file",
    "directory",
    "folder",
    "module",
    "package",
    "library",
    "class",
    "type",
    "token",
    "credential",
    "credentials",
    "env",
];
const ARGUMENT_KEYS: &[&str] = &[
    "arguments",
    "parameters",
    "input",
    "args",
    "params",
    "kwargs",
];
const NAME_KEYS: &[&str] = &[
    "name",
    "tool",
    "tool_name",
    "function_name",
    "recipient_name",
];

/// Keywords a name is defined after, in the languages models write.
const DECLARERS: &[&str] = &[
    "def",
    "fn",
    "func",
    "function",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "const",
    "let",
    "var",
    "val",
    "fun",
    "sub",
    "proc",
    "macro",
    "defn",
    "defp",
];
/// Keywords that start a line of source code.
const CODE_KEYWORDS: &[&str] = &[
    "def",
    "async",
    "class",
    "function",
    "fn",
    "func",
    "const",
    "let",
    "var",
    "import",
    "package",
    "return",
    "if",
    "elif",
    "else",
    "for",
    "while",
    "try",
    "except",
    "catch",
    "type",
    "interface",
    "struct",
    "enum",
    "pub",
    "export",
    "public",
    "private",
    "static",
    "#include",
];
/// Info words of a fenced block that holds calls, not source.
const TRANSCRIPT_INFO: &[&str] = &[
    "json",
    "jsonc",
    "json5",
    "jsonl",
    "tool_code",
    "tool_call",
    "tool_calls",
    "tool_use",
    "function_call",
    "function_calls",
];
/// Info words of a fenced block that say nothing of its content.
const PLAIN_INFO: &[&str] = &["", "text", "txt", "plain", "plaintext"];

/// Longest name considered; longer runs are prose, not identifiers.
const MAX_NAME: usize = 128;
/// Words read back from a phrase for a negation or a reporting verb, within its clause.
const CLAUSE_WORDS: usize = 8;
/// Bytes read for the closing parenthesis of call syntax.
const MAX_ARGUMENTS: usize = 512;
/// JSON blocks tried per text, so a text full of braces stays linear.
const MAX_JSON_ATTEMPTS: usize = 64;

/// What kind of text is read, for the rules that tell a model's own code from a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A model's response: the code it writes (source and diagrams in code blocks) and the
    /// functions it defines are its own, not tools it calls.
    Response,
    /// A system prompt or tool description: code there declares the tools the prompt teaches
    /// (`def lookup_customer(email)`), which is what drift is about, so only the rules for talk
    /// about a tool apply.
    Prompt,
}

/// Whether a name is in constant case (`GITHUB_TOKEN`, `MAX_RETRIES`): upper-case letters and
/// no lower-case one, the way code and prompts write constants and environment variables. It is
/// a tool name only where the catalog writes its tools that way (Composio's `GITHUB_STAR_REPO`).
pub(crate) fn is_constant_case(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase()) && !name.bytes().any(|b| b.is_ascii_lowercase())
}

/// The call-like mentions in `text`, in order of appearance, each name once.
pub(crate) fn mentions(text: &str, reader: Reader) -> Vec<Mention<'_>> {
    let mut found: Vec<Mention<'_>> = Vec::new();
    fn push<'a>(found: &mut Vec<Mention<'a>>, name: Cow<'a, str>, evidence: Evidence, at: usize) {
        if !name.is_empty() && name.len() <= MAX_NAME && !found.iter().any(|m| m.name == name) {
            found.push(Mention { name, evidence, at });
        }
    }
    let (block_names, blocks) = json_blocks(text);
    for (name, at) in block_names {
        push(&mut found, Cow::Owned(name), Evidence::JsonBlock, at);
    }
    // The response's code blocks, read on its first mention (plain prose has none to read).
    let mut code = None;
    // Only tokens holding a `_` or a camelCase hump can be tool-like (see `candidates`): the
    // words around one are read only when there is one, so plain prose is one pass over bytes.
    for token in candidates(text) {
        let in_block = blocks.iter().any(|b| b.contains(&token.start));
        // `<tool_call>` and `</tool_call>` are markup around a call, not a call.
        let in_tag = text[..token.start].ends_with('<') || text[..token.start].ends_with("</");
        if in_block || in_tag || !is_tool_like(token.text) {
            continue;
        }
        let evidence = if text[token.end..].starts_with('(') {
            let close = after_call(text, token.end);
            let closed = close > token.end;
            if declined(text, &token, close, reader)
                || (reader == Reader::Response
                    && closed
                    && describes(token_after(text, close), close, text))
            {
                continue;
            }
            Evidence::CallSyntax
        } else if called_by_phrase(text, &token, reader) {
            Evidence::Phrase
        } else {
            continue;
        };
        // The costlier reading of the text's code, once per name and only for a mention.
        if reader == Reader::Response
            && !found.iter().any(|m| m.name == token.text)
            && ((evidence == Evidence::CallSyntax && is_label(text, &token))
                || is_own_code(text, &token, &mut code))
        {
            continue;
        }
        push(&mut found, Cow::Borrowed(token.text), evidence, token.start);
    }
    found
}

/// Whether call syntax `name(…)` labels a list item, a heading or a table cell: the model
/// describing a function, as in "- **save_to_excel()**: Exports data to Excel", not writing a
/// call. It heads the item (nothing but emphasis and backticks before it), and a description
/// follows it (`:`, a dash, `|`) or its parentheses hold a parameter list rather than values
/// (`generate_fibonacci_sequence(n)`); a heading is always a label. "- get_weather(city="Paris")"
/// and "- Call get_weather(city)" are still calls.
fn is_label(text: &str, token: &Token<'_>) -> bool {
    let line_start = text[..token.start].rfind('\n').map_or(0, |i| i + 1);
    let head = &text[line_start..token.start];
    let (marks, heading) = match head.rfind('|') {
        Some(bar) => (&head[bar + 1..], false),
        None => {
            let line = head.trim_start();
            let hashes = line.len() - line.trim_start_matches('#').len();
            match item_marker(line) {
                Some(rest) => (rest, hashes > 0),
                None => return false,
            }
        }
    };
    if !marks.chars().all(|c| matches!(c, '`' | '*' | ' ' | '\t')) {
        return false;
    }
    let close = after_call(text, token.end);
    if heading {
        return true;
    }
    if close == token.end {
        return false;
    }
    let arguments = &text[token.end + 1..close - 1];
    let tail = text[close..].trim_start_matches(['`', '*', ' ', '\t']);
    tail.starts_with([':', '-', '–', '—', '|']) || is_parameter_list(arguments)
}

/// The rest of a line after a list marker (`-`, `*`, `+`, `1.`, `1)`) or heading hashes.
fn item_marker(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix(['-', '*', '+']) {
        return rest.starts_with([' ', '\t']).then_some(rest);
    }
    let hashes = line.len() - line.trim_start_matches('#').len();
    if hashes > 0 {
        return Some(&line[hashes..]);
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0)
        .then(|| line[digits..].strip_prefix(['.', ')']))
        .flatten()
}

/// Whether the text in a call's parentheses is a parameter list (`n`, `rows, path: str`), not
/// values (`"Paris"`, `42`, `city="Paris"`).
fn is_parameter_list(arguments: &str) -> bool {
    !arguments.trim().is_empty()
        && !arguments.contains(['"', '\'', '=', '{', '['])
        && arguments.split(',').all(|parameter| {
            parameter
                .trim_start()
                .starts_with(|c: char| c.is_alphabetic() || matches!(c, '_' | '*' | '&'))
        })
}

/// Whether a mention in a response is the model's own code rather than a call: inside a code
/// block of source or a diagram ([`code_blocks`], found on the first mention and kept in
/// `code`), or a name the text itself defines ([`defines`]).
fn is_own_code(text: &str, token: &Token<'_>, code: &mut Option<Vec<Range<usize>>>) -> bool {
    let code = code.get_or_insert_with(|| code_blocks(text));
    code.iter().any(|b| b.contains(&token.start)) || defines(text, token.text)
}

/// Whether `text` defines `name` as code does: after a declaring keyword (`def name`,
/// `async def name`, `fn name`, `function name`, `type name`, `const name`, …), as a Go method
/// (`func (p *Pool) name(`), or assigned a function (`name = lambda`, `name := func(`). A model
/// that writes `def save_to_excel(` and then mentions `save_to_excel()` talks about its own
/// function.
fn defines(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let end = at + name.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        if before.is_some_and(|c| is_ident(c) || c == '.') || after.is_some_and(is_ident) {
            return false;
        }
        let line = &text[text[..at].rfind('\n').map_or(0, |i| i + 1)..at];
        let head = line.trim_end_matches([' ', '\t', '*']);
        let word_start = head
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_ident(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if DECLARERS.contains(&&head[word_start..]) {
            return true;
        }
        if after == Some('(') && line.trim_start().starts_with("func (") {
            return true;
        }
        let rest = text[end..].trim_start_matches([' ', '\t']);
        let assigned = rest
            .strip_prefix(":=")
            .or_else(|| rest.strip_prefix('=').filter(|r| !r.starts_with('=')));
        assigned.is_some_and(|value| {
            let value = value.trim_start_matches([' ', '\t']);
            ["function", "func", "lambda", "async"]
                .iter()
                .any(|k| value.starts_with(k))
        })
    })
}

/// The byte ranges of a text's code blocks that hold source code or a diagram, where `name(`
/// is code, not a call. A fenced block (```` ``` ```` or `~~~`) in a language (`python`, `go`,
/// `bash`, …) is source; one marked as JSON or as a tool call (`json`, `tool_code`,
/// `tool_call`, …) is a call transcript; an unmarked one, or a block indented by four spaces
/// after a blank line, is source when it looks like source ([`looks_like_code`]) and a
/// transcript otherwise (`get_weather(city="Paris")` on a line of its own). JSON call blocks
/// are read wherever they are (see [`json_blocks`]).
fn code_blocks(text: &str) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    // The open fence: its character, its length, where its content starts, its info word.
    let mut fence: Option<(char, usize, usize, &str)> = None;
    // The indented block being read: where it starts and ends, and whether it is the body of a
    // line of code above it (`def f(x):`, `if (ok) {`), which makes it code whatever it holds.
    let mut indented: Option<(usize, usize, bool)> = None;
    let mut previous_blank = true;
    let mut previous_code = false;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start();
        if let Some((c, n, content, info)) = fence {
            let closes = trimmed.starts_with(c)
                && trimmed.trim_end().chars().all(|d| d == c)
                && trimmed.trim_end().chars().count() >= n;
            if closes {
                if is_source_block(info, &text[content..start]) {
                    blocks.push(content..start);
                }
                fence = None;
                previous_blank = false;
            }
            continue;
        }
        if let Some((c, n, info)) = opens_fence(trimmed) {
            fence = Some((c, n, at, info));
            continue;
        }
        let blank = trimmed.is_empty();
        let is_indented = line.starts_with("    ") || line.starts_with('\t');
        indented = match indented {
            Some((from, to, body)) if is_indented || blank => {
                Some((from, if blank { to } else { at }, body))
            }
            None if is_indented && (previous_blank || previous_code) => {
                Some((start, at, previous_code))
            }
            _ => {
                close_indented(text, indented, &mut blocks);
                None
            }
        };
        previous_blank = blank;
        previous_code = !blank && looks_like_code(line);
    }
    if let Some((_, _, content, info)) = fence {
        // An unclosed fence runs to the end of the text.
        if is_source_block(info, &text[content..]) {
            blocks.push(content..text.len());
        }
    }
    close_indented(text, indented, &mut blocks);
    code_paragraphs(text, &mut blocks);
    blocks
}

/// Adds the lines of code in the paragraphs of `text` outside fences that hold a line of source
/// ([`reads_as_statement`]: an import, an assignment, a decorator, a line ending like a
/// statement): code a model shows without a fence (`from opentelemetry… import
/// FastAPIInstrumentor` above `FastAPIInstrumentor.instrument_app(app, …)`). The lines of code
/// there are those statements, lines that are one call (`setup(app)`), and indented lines; the
/// prose lines around them are still read. A paragraph of bare `name(…)` lines holds no
/// statement, and stays a call transcript.
fn code_paragraphs(text: &str, blocks: &mut Vec<Range<usize>>) {
    // The paragraph's lines of code, whether one is a statement, and whether it holds a fence
    // (read by `code_blocks` already).
    let mut lines: Vec<Range<usize>> = Vec::new();
    let (mut statement, mut fenced) = (false, false);
    let mut at = 0;
    for line in text.split_inclusive('\n').chain(std::iter::once("")) {
        let start = at;
        at += line.len();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if statement && !fenced {
                blocks.append(&mut lines);
            }
            lines.clear();
            (statement, fenced) = (false, false);
            continue;
        }
        fenced |= opens_fence(trimmed).is_some();
        let is_statement = reads_as_statement(trimmed);
        statement |= is_statement;
        if is_statement || is_call_line(trimmed) || line.starts_with([' ', '\t']) {
            lines.push(start..at);
        }
    }
}

/// Whether a (trimmed) line is one call expression and nothing else: `setup(app)`,
/// `await client.close();`, `return parse(rows)`.
fn is_call_line(line: &str) -> bool {
    let line = line.trim_end_matches(';');
    let line = ["await ", "return ", "yield "]
        .iter()
        .find_map(|k| line.strip_prefix(k))
        .unwrap_or(line);
    let Some(open) = line.find('(') else {
        return false;
    };
    line.ends_with(')')
        && open > 0
        && line[..open]
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
}

/// Whether a (trimmed) line reads as a statement of source code rather than prose: an import
/// (`import x`, `from x import y`, `import {a} from "b"`), an assignment to an identifier
/// (`app = FastAPI()`, `const x = …`), a decorator, or a line ending as statements do (`{`,
/// `;`, `):`).
fn reads_as_statement(line: &str) -> bool {
    let is_path = |word: &str| {
        !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '*'))
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    let first = words.first().copied().unwrap_or("");
    let second = words.get(1).copied().unwrap_or("");
    // `import os`, `import numpy as np, pandas`, `import {a} from "b"`; not "import the data".
    let import = match first {
        "import" => {
            words[1..]
                .iter()
                .all(|w| *w == "as" || is_path(w.trim_end_matches(',')))
                || second.starts_with(['{', '*', '"', '\''])
                || line.contains(" from \"")
                || line.contains(" from '")
        }
        "from" => is_path(second) && words.get(2) == Some(&"import"),
        _ => false,
    };
    // `const x = …`, `let mut x: T = …`; not "let me call x(…)".
    let declared = matches!(first, "const" | "let" | "var") && {
        let rest = if second == "mut" {
            &words[2.min(words.len())..]
        } else {
            &words[1..]
        };
        let name = rest.first().copied().unwrap_or("");
        let next = rest.get(1).copied().unwrap_or("");
        is_path(name.trim_end_matches([':', '=']))
            && (name.ends_with([':', '=']) || next.starts_with(['=', ':']))
    };
    let lhs = line.split_once('=').and_then(|(lhs, rhs)| {
        let lhs = lhs.trim_end().trim_end_matches(['+', '-', '*', '/', ':']);
        (!rhs.starts_with(['=', '>']) && !rhs.trim().is_empty()).then_some(lhs)
    });
    let assignment = lhs.is_some_and(|lhs| {
        let lhs = lhs.trim();
        is_path(lhs) && lhs.starts_with(|c: char| c.is_alphabetic() || c == '_')
    });
    let decorator = line.starts_with('@') && line[1..].starts_with(|c: char| c.is_alphabetic());
    // A statement's end, on a line that holds code: "Sure;" is prose.
    let ends_statement = line.ends_with(['{', ';'])
        && (line.contains(['(', '=', '[']) || CODE_KEYWORDS.contains(&first));
    import || declared || assignment || decorator || ends_statement || line.ends_with("):")
}

fn close_indented(text: &str, block: Option<(usize, usize, bool)>, blocks: &mut Vec<Range<usize>>) {
    if let Some((from, to, body)) = block {
        if to > from && (body || looks_like_code(&text[from..to])) {
            blocks.push(from..to);
        }
    }
}

/// The fence a line opens, as its character, its length and the first word of its info string.
fn opens_fence(trimmed: &str) -> Option<(char, usize, &str)> {
    let c = trimmed.chars().next().filter(|&c| c == '`' || c == '~')?;
    let n = trimmed.chars().take_while(|&d| d == c).count();
    let info = trimmed[n..].trim();
    // Three backticks with more backticks after them on the line are inline code.
    if n < 3 || (c == '`' && info.contains('`')) {
        return None;
    }
    let word = info
        .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
        .next()
        .unwrap_or("")
        .trim_start_matches('.');
    Some((c, n, word))
}

/// Whether a fenced block with info word `info` holding `content` is source code or a diagram.
fn is_source_block(info: &str, content: &str) -> bool {
    let info = lower(info);
    if TRANSCRIPT_INFO.contains(&info.as_ref()) {
        return false;
    }
    if PLAIN_INFO.contains(&info.as_ref()) {
        return looks_like_code(content);
    }
    true
}

/// Whether an unmarked block reads as source code or a diagram: a line that starts with a
/// keyword of code (`def`, `function`, `if`, `return`, `import`, …) or a decorator, or ends
/// like a statement (`{`, `}`, `;`, `):`, `=>`); or box-drawing characters and arrows.
fn looks_like_code(content: &str) -> bool {
    let diagram = content.chars().any(
        |c| matches!(c, '\u{2500}'..='\u{257F}' | '\u{2190}'..='\u{21FF}' | '►' | '◄' | '▲' | '▼'),
    );
    diagram
        || content.lines().any(|line| {
            let line = line.trim();
            let keyword = line.split([' ', '(', ':']).next().unwrap_or("");
            (CODE_KEYWORDS.contains(&keyword) && line.len() > keyword.len())
                || line.starts_with('@') && line[1..].starts_with(|c: char| c.is_alphabetic())
                || line.ends_with(['{', '}', ';'])
                || line.ends_with("):")
                || line.ends_with("=>")
        })
}

/// Whether `name` occurs in `text` as a whole word (not inside a longer identifier).
pub(crate) fn mentions_word(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Identifier shapes tool names take: snake_case (`get_balance`), camelCase with a real first
/// word (`getBalance`), or namespaced (`github.create_issue`, `fs/read_file`).
pub(crate) fn is_tool_like(token: &str) -> bool {
    // Every test below is on ASCII bytes, so bytes stand for characters.
    let bytes = token.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    if bytes.len() < 3 || bytes.len() > MAX_NAME || !(first.is_ascii_alphabetic() || first == b'_')
    {
        return false;
    }
    let url_or_ellipsis = bytes.iter().enumerate().any(|(i, &b)| {
        let rest = &bytes[i + 1..];
        (b == b'.' && rest.first() == Some(&b'.')) || (b == b':' && rest.starts_with(b"//"))
    });
    if url_or_ellipsis {
        return false;
    }
    // An identifier value ends in a long number: `certificate_9984806` is a payment method, and
    // tool names do not number their instances.
    let number = bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if number >= 5 && bytes.len() > number && bytes[bytes.len() - number - 1] == b'_' {
        return false;
    }
    let core = token.trim_matches('_').as_bytes();
    if core.contains(&b'_') && core.iter().any(u8::is_ascii_alphabetic) {
        return true;
    }
    // camelCase: at least two lower-case letters, then an upper-case one.
    let lower_run = bytes.iter().take_while(|b| b.is_ascii_lowercase()).count();
    lower_run >= 2
        && bytes.iter().all(u8::is_ascii_alphanumeric)
        && bytes.iter().any(u8::is_ascii_uppercase)
}

/// A token as the word scanner cuts it: a maximal run of token characters (letters, digits and
/// `_ . : / - ' ’`), with `. : / - ' ’` trimmed off both ends; runs that trim to nothing are not
/// tokens.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    start: usize,
    end: usize,
    /// Where the untrimmed run starts and ends: where the neighbouring tokens are looked for.
    run: (usize, usize),
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-' | '\'' | '’')
}

/// Token characters trimmed off the ends of a run.
fn is_trimmed(c: char) -> bool {
    matches!(c, '.' | ':' | '/' | '-' | '\'' | '’')
}

/// The token made of the run `start..end` of `text`, if it does not trim to nothing.
fn token(text: &str, start: usize, end: usize) -> Option<Token<'_>> {
    let raw = &text[start..end];
    let from_start = raw.trim_start_matches(is_trimmed);
    let trimmed = from_start.trim_end_matches(is_trimmed);
    if trimmed.is_empty() {
        return None;
    }
    let offset = start + (raw.len() - from_start.len());
    Some(Token {
        text: trimmed,
        start: offset,
        end: offset + trimmed.len(),
        run: (start, end),
    })
}

/// The run of token characters around byte `at` of `text`, which starts a character.
fn run_around(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_token_char(c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .find(|&(_, c)| !is_token_char(c))
        .map_or(text.len(), |(i, _)| at + i);
    (start, end)
}

/// In order, the tokens of `text` that hold a `_`, or an ASCII upper-case letter right after an
/// ASCII letter or digit: every token [`is_tool_like`] can accept (snake_case holds a `_`;
/// camelCase starts with two lower-case letters and is all ASCII letters and digits), and
/// neither byte is ever trimmed off. Tokens without one are never cut out.
fn candidates(text: &str) -> impl Iterator<Item = Token<'_>> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        // Most bytes are neither `_` nor upper case: a tight search for those first.
        while let Some(found) = bytes[i..]
            .iter()
            .position(|&b| b == b'_' || b.is_ascii_uppercase())
        {
            let at = i + found;
            if bytes[at] != b'_' && !(at > 0 && bytes[at - 1].is_ascii_alphanumeric()) {
                i = at + 1;
                continue;
            }
            // `at` is an ASCII byte, so it starts a character.
            let (start, end) = run_around(text, at);
            i = end;
            if let Some(token) = token(text, start, end) {
                return Some(token);
            }
        }
        i = bytes.len();
        None
    })
}

/// The token before the run starting at `before`, as a scan of the whole text would cut it.
fn token_before(text: &str, mut before: usize) -> Option<Token<'_>> {
    loop {
        let last = text[..before]
            .char_indices()
            .rev()
            .find(|&(_, c)| is_token_char(c))
            .map(|(i, _)| i)?;
        let (start, end) = run_around(text, last);
        match token(text, start, end) {
            Some(token) => return Some(token),
            None => before = start,
        }
    }
}

/// The token after the run ending at `after`.
fn token_after(text: &str, mut after: usize) -> Option<Token<'_>> {
    loop {
        let start = text[after..]
            .char_indices()
            .find(|&(_, c)| is_token_char(c))
            .map(|(i, _)| after + i)?;
        let (_, end) = run_around(text, start);
        match token(text, start, end) {
            Some(token) => return Some(token),
            None => after = end,
        }
    }
}

/// A word in lower case, for comparing with the word lists; borrowed when it has no upper-case
/// letter (one allocation per word was a hot spot).
fn lower(word: &str) -> Cow<'_, str> {
    if word
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(word.to_lowercase())
    }
}

/// A calling verb up to two filler words before `token` and no noun of another thing right
/// after it ("use the `str_replace` command"), or a noun like "tool" right after it; the words of
/// the phrase next to each other in one sentence, and the clause not declining the call (see
/// [`declined`]).
fn called_by_phrase(text: &str, token: &Token<'_>, reader: Reader) -> bool {
    // `first` is where the phrase starts: the verb, or the name itself before its noun.
    let mut first = None;
    let mut next = *token;
    for _ in 0..3 {
        let Some(previous) = token_before(text, next.run.0) else {
            break;
        };
        if !is_inline_gap(&text[previous.end..next.start]) {
            break;
        }
        let word = lower(previous.text);
        if VERBS.contains(&word.as_ref()) {
            first = Some(previous);
            break;
        }
        if !FILLERS.contains(&word.as_ref()) {
            break;
        }
        next = previous;
    }
    let mut after = token.run.1;
    let next_noun = |nouns: &[&str]| {
        token_after(text, token.run.1).filter(|noun| {
            is_inline_gap(&text[token.end..noun.start])
                && nouns.contains(&lower(noun.text).as_ref())
        })
    };
    if first.is_some() && next_noun(OTHER_NOUNS).is_some() {
        return false;
    }
    if first.is_none() {
        let Some(noun) = next_noun(NOUNS) else {
            return false;
        };
        first = Some(*token);
        after = noun.run.1;
    }
    first.is_some_and(|first| !declined(text, &first, after, reader))
}

/// Whether the text between two words keeps them in one phrase: spaces, one line break (a
/// hard-wrapped line, not a blank one), and inline marks (`` ` ``, `*`, quotes, `:`, `[`). Any
/// other punctuation is structure: `running | shuttingDown` is a type union, not "running" a
/// tool; `call. get_x` is two sentences.
fn is_inline_gap(gap: &str) -> bool {
    gap.chars().all(|c| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '*' | '"' | '“' | '”' | '\'' | '‘' | '’' | ':' | '['
            )
    }) && !has_blank_line(gap)
}

/// Whether the text between two words ends a clause: a sentence or clause mark, a bracket, a
/// code operator, a dash, or a blank line.
fn breaks_clause(gap: &str) -> bool {
    has_blank_line(gap)
        || gap.chars().any(|c| {
            matches!(
                c,
                ',' | ';'
                    | '.'
                    | '!'
                    | '?'
                    | ':'
                    | '('
                    | ')'
                    | '{'
                    | '}'
                    | '|'
                    | '='
                    | '<'
                    | '>'
                    | '-'
                    | '–'
                    | '—'
            )
        })
}

/// Whether `gap` holds a blank line: two line breaks with only white space between them.
fn has_blank_line(gap: &str) -> bool {
    let mut after_break = false;
    for c in gap.chars() {
        if c == '\n' {
            if after_break {
                return true;
            }
            after_break = true;
        } else if !c.is_whitespace() {
            after_break = false;
        }
    }
    false
}

/// Whether the word after call syntax that ends at byte `close` (`next`, the token there)
/// describes what a function does ("`parse(rows)` returns a list"), so the text explains code
/// rather than calls it. Only for a closed call: `close` is past its `)`.
fn describes(next: Option<Token<'_>>, close: usize, text: &str) -> bool {
    next.is_some_and(|next| {
        is_inline_gap(&text[close..next.start]) && DESCRIBING.contains(&lower(next.text).as_ref())
    })
}

/// Whether `word`, followed by `next`, makes the reader the subject of the call: "you" before a
/// modal ("you can call x(…)") or a calling verb ("if you call x"), or "you'll", "you'd".
fn is_second_person(word: &str, next: &str) -> bool {
    matches!(word, "you'll" | "you’ll" | "you'd" | "you’d")
        || (word == "you" && (MODALS.contains(&next) || VERBS.contains(&next)))
}

fn is_negation(word: &str) -> bool {
    NEGATIONS.contains(&word) || word.ends_with("n't") || word.ends_with("n’t")
}

/// Whether the clause around a phrase declines the call, reports it or hands it to the reader
/// instead of making it: a negation anywhere in the clause before `first` ("I don't have the
/// ability to call x", "there is no tool called x"), a reporting verb there ("you asked me to
/// call x", "the user mentioned using x"), the reader as its subject ("you can call
/// foo_bar(items)", see [`is_second_person`]; in a response only: a prompt's "you" is the model);
/// or a negation in the three words after the phrase, which ends at byte `after` ("`x()` is not
/// one of my tools"). The clause ends at a break ([`breaks_clause`]) or a
/// conjunction: "I can't see it, so I'll call x" is a call.
fn declined(text: &str, first: &Token<'_>, after: usize, reader: Reader) -> bool {
    let mut next = *first;
    for _ in 0..CLAUSE_WORDS {
        let Some(previous) = token_before(text, next.run.0) else {
            break;
        };
        let word = lower(previous.text);
        if breaks_clause(&text[previous.end..next.start]) || CONJUNCTIONS.contains(&word.as_ref()) {
            break;
        }
        if is_negation(&word)
            || REPORTING.contains(&word.as_ref())
            || (reader == Reader::Response && is_second_person(&word, &lower(next.text)))
        {
            return true;
        }
        next = previous;
    }
    let mut end = after;
    let mut from = after;
    for _ in 0..3 {
        let Some(next) = token_after(text, from) else {
            break;
        };
        if breaks_clause(&text[end..next.start]) {
            break;
        }
        let word = lower(next.text);
        if is_negation(&word) || word == "unavailable" {
            return true;
        }
        end = next.end;
        from = next.run.1;
    }
    false
}

/// Where call syntax `name(…)` that starts at `open` (the `(`) ends: after its closing
/// parenthesis on the same line, or at `open` when there is none.
fn after_call(text: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, b) in text.as_bytes()[open..]
        .iter()
        .enumerate()
        .take(MAX_ARGUMENTS)
    {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return open + i + 1;
                }
            }
            b'\n' => break,
            _ => {}
        }
    }
    open
}

/// Names of calls written as JSON values inside the text, with the byte offset of each name,
/// and the byte ranges of every JSON object or array found.
fn json_blocks(text: &str) -> (Vec<(String, usize)>, Vec<Range<usize>>) {
    let mut names = Vec::new();
    let mut blocks = Vec::new();
    if !text.contains('"') {
        return (names, blocks);
    }
    let mut attempts = 0;
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let at = from + offset;
        attempts += 1;
        if attempts > MAX_JSON_ATTEMPTS {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let first = names.len();
                collect_call_names(&value, &mut names, at);
                let end = at + stream.byte_offset().max(1);
                // Each name at the line it is written on, for its context: a block's first
                // line is often a lone `{`.
                for (name, place) in &mut names[first..] {
                    let quoted = serde_json::to_string(name.as_str()).unwrap_or_default();
                    if let Some(offset) = text[at..end].find(&quoted) {
                        *place = at + offset + 1;
                    }
                }
                blocks.push(at..end);
                from = end;
            }
            _ => from = at + 1,
        }
    }
    (names, blocks)
}

/// Call names in a JSON value: objects with a name key and an arguments key, or a
/// `{"function": {"name": ..}}` wrapper; arrays and wrapper objects are searched, argument
/// values are not (they may hold a `name` of their own).
fn collect_call_names(value: &Value, names: &mut Vec<(String, usize)>, at: usize) {
    match value {
        Value::Array(items) => {
            for item in items {
                collect_call_names(item, names, at);
            }
        }
        Value::Object(object) => {
            let has_arguments = ARGUMENT_KEYS.iter().any(|k| object.contains_key(*k));
            if let Some(Value::Object(function)) = object.get("function") {
                if let Some(Value::String(name)) = function.get("name") {
                    names.push((name.clone(), at));
                    return;
                }
            }
            if has_arguments {
                let named = NAME_KEYS
                    .iter()
                    .chain(std::iter::once(&"function"))
                    .find_map(|k| object.get(*k).and_then(Value::as_str));
                if let Some(name) = named {
                    names.push((name.to_owned(), at));
                    return;
                }
            }
            for (key, child) in object {
                if !ARGUMENT_KEYS.contains(&key.as_str()) {
                    collect_call_names(child, names, at);
                }
            }
        }
        _ => {}
    }
}

/// The sentence (or line) around byte offset `at`, clipped to 160 characters.
fn sentence_around(text: &str, at: usize) -> String {
    // A sentence ends at a newline, or at `.`, `!` or `?` followed by white space (not the
    // point in `50.00` or `github.create_issue`).
    let bytes = text.as_bytes();
    let ends_sentence = |i: usize| {
        bytes[i] == b'\n'
            || (matches!(bytes[i], b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()))
    };
    let start = (0..at)
        .rev()
        .find(|&i| ends_sentence(i))
        .map_or(0, |i| i + 1);
    let end = (at..bytes.len())
        .find(|&i| ends_sentence(i))
        .unwrap_or(bytes.len());
    let sentence = text[start..end].trim();
    match sentence.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &sentence[..cut]),
        None => sentence.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn names(text: &str) -> Vec<String> {
        mentions(text, Reader::Response)
            .into_iter()
            .map(|m| m.name.into_owned())
            .collect()
    }

    #[test]
    fn finds_names_in_calling_phrases() {
        assert_eq!(names("I will call get_balance now."), ["get_balance"]);
        assert_eq!(
            names("Use lookup_customer to find an account."),
            ["lookup_customer"]
        );
        assert_eq!(
            names("Calling the `search_flights` tool first"),
            ["search_flights"]
        );
        assert_eq!(
            names("the refund_payment tool handles it"),
            ["refund_payment"]
        );
        assert_eq!(names("Let me try getWeather."), ["getWeather"]);
    }

    #[test]
    fn finds_call_syntax_and_json_blocks() {
        assert_eq!(names("get_balance(account_id=\"acc_1\")"), ["get_balance"]);
        let block =
            "Sure:\n```json\n{\"name\": \"cancel_order\", \"arguments\": {\"name\": \"x\"}}\n```";
        assert_eq!(names(block), ["cancel_order"]);
        let wrapped = "<tool_call>{\"function\": {\"name\": \"issue_refund\"}}</tool_call>";
        assert_eq!(names(wrapped), ["issue_refund"]);
        let list = "[{\"tool\": \"a_b\", \"input\": {}}, {\"tool\": \"c_d\", \"args\": {}}]";
        assert_eq!(names(list), ["a_b", "c_d"]);
    }

    #[test]
    fn ignores_plain_and_negated_mentions() {
        assert!(names("The account_id field is required.").is_empty());
        assert!(names("I can't call delete_account for you.").is_empty());
        assert!(names("I do not use snake_case here.").is_empty());
        assert!(names("See https://example.com/some_path for more.").is_empty());
        assert!(names("Braces { without json } and {\"just\": \"data\"}.").is_empty());
    }

    #[test]
    fn gives_the_sentence_as_context() {
        let text = "First line. Then use lookup_customer to find it! Done.";
        assert_eq!(
            mentions(text, Reader::Response)[0].context(text),
            "Then use lookup_customer to find it"
        );
        let text = "Refunds up to 50.00 are fine; above that, call escalate_to_human. Stop.";
        assert_eq!(
            mentions(text, Reader::Response)[0].context(text),
            "Refunds up to 50.00 are fine; above that, call escalate_to_human"
        );
    }

    /// The definition the scanner is an optimisation of: cut the whole text into tokens, then
    /// look at the words around each tool-like one.
    fn mentions_by_tokenizing(text: &str) -> Vec<(String, Evidence, usize)> {
        let mut tokens = Vec::new();
        let mut start = None;
        for (at, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            match (start, is_token_char(c)) {
                (None, true) => start = Some(at),
                (Some(s), false) => {
                    start = None;
                    tokens.extend(token(text, s, at));
                }
                _ => {}
            }
        }
        let lower = |t: &Token<'_>| t.text.to_lowercase();
        let gap = |j: usize| &text[tokens[j].end..tokens[j + 1].start];
        let declined = |first: usize, after: usize| {
            for j in (first.saturating_sub(CLAUSE_WORDS)..first).rev() {
                let word = lower(&tokens[j]);
                if breaks_clause(gap(j)) || CONJUNCTIONS.contains(&word.as_str()) {
                    break;
                }
                if is_negation(&word)
                    || REPORTING.contains(&word.as_str())
                    || is_second_person(&word, &lower(&tokens[j + 1]))
                {
                    return true;
                }
            }
            let mut end = after;
            let next = tokens.iter().position(|t| t.start >= after);
            for t in next.map_or(&[][..], |k| &tokens[k..]).iter().take(3) {
                if breaks_clause(&text[end..t.start]) {
                    break;
                }
                let word = lower(t);
                if is_negation(&word) || word == "unavailable" {
                    return true;
                }
                end = t.end;
            }
            false
        };
        let phrase = |i: usize| {
            let mut first = None;
            for j in (i.saturating_sub(3)..i).rev() {
                if !is_inline_gap(gap(j)) {
                    break;
                }
                let word = lower(&tokens[j]);
                if VERBS.contains(&word.as_str()) {
                    first = Some(j);
                    break;
                }
                if !FILLERS.contains(&word.as_str()) {
                    break;
                }
            }
            let mut after = tokens[i].run.1;
            let other = tokens.get(i + 1).is_some_and(|noun| {
                is_inline_gap(gap(i)) && OTHER_NOUNS.contains(&lower(noun).as_str())
            });
            if first.is_some() && other {
                return false;
            }
            if first.is_none() {
                let noun = tokens
                    .get(i + 1)
                    .filter(|noun| is_inline_gap(gap(i)) && NOUNS.contains(&lower(noun).as_str()));
                let Some(noun) = noun else {
                    return false;
                };
                first = Some(i);
                after = noun.run.1;
            }
            first.is_some_and(|first| !declined(first, after))
        };
        let (block_names, blocks) = json_blocks(text);
        let mut found: Vec<(String, Evidence, usize)> = Vec::new();
        let push = |found: &mut Vec<(String, Evidence, usize)>, name: &str, evidence, at| {
            if !name.is_empty() && name.len() <= MAX_NAME && !found.iter().any(|m| m.0 == name) {
                found.push((name.to_owned(), evidence, at));
            }
        };
        let mut code = None;
        for (name, at) in &block_names {
            push(&mut found, name, Evidence::JsonBlock, *at);
        }
        for (i, t) in tokens.iter().enumerate() {
            let in_block = blocks.iter().any(|b| b.contains(&t.start));
            let in_tag = text[..t.start].ends_with('<') || text[..t.start].ends_with("</");
            if in_block || in_tag || !is_tool_like(t.text) {
                continue;
            }
            let evidence = if text[t.end..].starts_with('(') {
                let close = after_call(text, t.end);
                let next = tokens.iter().find(|n| n.start >= close).copied();
                if declined(i, close) || (close > t.end && describes(next, close, text)) {
                    continue;
                }
                Evidence::CallSyntax
            } else if phrase(i) {
                Evidence::Phrase
            } else {
                continue;
            };
            if !found.iter().any(|m| m.0 == t.text)
                && ((evidence == Evidence::CallSyntax && is_label(text, t))
                    || is_own_code(text, t, &mut code))
            {
                continue;
            }
            push(&mut found, t.text, evidence, t.start);
        }
        found
    }

    #[test]
    fn the_scanner_agrees_with_tokenizing_everything() {
        let words = [
            "get_balance",
            "getBalance",
            "McDonald",
            "iPhone",
            "ab1C",
            "_",
            "__",
            "a_",
            "é_x",
            "x’_y",
            "’",
            "-",
            "...",
            "http://a_b",
            "Call",
            "use",
            "the",
            "tool",
            "not",
            "can't",
            "won’t",
            "never",
            "then",
            "(",
            "<",
            "</",
            "{\"name\": \"a_b\", \"args\": {}}",
            "ñ_é",
            "3_items",
            "_get",
            "-get_x-",
            "'",
            "\n",
            ". ",
            "function",
            "naïveX",
            "|",
            ",",
            "asked",
            "but",
            "isn't",
            "you",
            "can",
            "returns",
            "command",
            "x_é(",
        ];
        let seps = [" ", "", "  ", ". "];
        let mut n = 0;
        for a in words {
            for b in words {
                for c in words {
                    for sep in seps {
                        let text = format!("{a}{sep}{b} {c}{sep}{a} get_x");
                        let scanned: Vec<(String, Evidence, usize)> =
                            mentions(&text, Reader::Response)
                                .into_iter()
                                .map(|m| (m.name.into_owned(), m.evidence, m.at))
                                .collect();
                        assert_eq!(scanned, mentions_by_tokenizing(&text), "{text:?}");
                        n += usize::from(!scanned.is_empty());
                    }
                }
            }
        }
        assert!(n > 10_000, "{n} texts with mentions");
    }

    #[test]
    fn matches_whole_words_only() {
        assert!(mentions_word("use lookup_customer.", "lookup_customer"));
        assert!(!mentions_word("use lookup_customer_v2", "lookup_customer"));
        assert!(!mentions_word("my_lookup_customer", "lookup_customer"));
        assert!(!mentions_word("anything", ""));
    }

    #[test]
    fn recognises_tool_like_identifiers() {
        for yes in [
            "get_balance",
            "getBalance",
            "github.create_issue",
            "_private_tool",
            "get_top_10",
            "report_2024",
        ] {
            assert!(is_tool_like(yes), "{yes}");
        }
        for no in [
            "hello",
            "iPhone",
            "e.g",
            "__",
            "a_",
            "3_items",
            "http://x_y",
            "certificate_9984806",
        ] {
            assert!(!is_tool_like(no), "{no}");
        }
    }
}

/// The false findings of issue 12, each a class (code that defines or declares, talk about
/// tools), with a true positive beside each rule so precision is not bought with recall. The
/// texts are written in the shapes of real model responses that were falsely flagged (the Vercel
/// AI SDK's recorded Anthropic responses and tau-bench's gpt-4o turns, which the external-data
/// suite `tests/prose_precision.rs` reads as they are).
#[cfg(test)]
mod code_and_talk {
    use super::tests::names;

    #[test]
    fn phrase_words_are_next_to_each_other_in_one_clause() {
        // A type union in an ASCII diagram (as in vercel/ai's anthropic-advisor response), not
        // "running" a tool.
        let diagram = "│  state    atomic.Int32  (running | draining)     │";
        assert!(names(diagram).is_empty(), "{:?}", names(diagram));
        assert!(names("The state is `running | draining`.").is_empty());
        assert!(names("Tests are running, getWeather is next").is_empty());
        assert!(names("Keep it running.\n\ngetWeather comes later").is_empty());

        assert_eq!(names("Call `lookup_customer` first."), ["lookup_customer"]);
        assert_eq!(
            names("then call\nlookup_customer with the email"),
            ["lookup_customer"]
        );
        assert_eq!(names("Use the **search_flights** tool"), ["search_flights"]);
    }

    #[test]
    fn a_declined_or_reported_call_is_not_a_call() {
        for text in [
            "Unfortunately I don't have the ability to call get_weather.",
            "I am not able to reliably use get_weather here.",
            "get_weather() is not one of my tools.",
            "The get_weather tool isn't available to me.",
            "You asked me to call get_weather, which I cannot do.",
            "The user mentioned using get_weather earlier.",
            "There is no tool called get_weather.",
            "I don't have a get_weather tool.",
        ] {
            assert!(names(text).is_empty(), "{text}: {:?}", names(text));
        }
        // A negation or report in another clause does not reach the call.
        assert_eq!(
            names("I can't see your balance yet, so I'll call get_balance."),
            ["get_balance"]
        );
        assert_eq!(
            names("I couldn't find the order so let me use lookup_order"),
            ["lookup_order"]
        );
        assert_eq!(
            names("If you don't hear back, call escalate_to_human(reason=\"late\")."),
            ["escalate_to_human"]
        );
        assert_eq!(
            names("As you asked, I'll call get_balance(account_id=\"a1\")"),
            ["get_balance"]
        );
    }

    /// Go source in a fenced block, as in vercel/ai's anthropic-advisor response.
    /// `queueState(…)` is a type conversion in code, and the block also declares the type.
    const ADVISOR_GO: &str = "## ✅ Full Implementation

```go
// queueState represents the lifecycle of the queue.
type queueState int32

func (p *TaskQueue) Push(task Task) error {
\tif queueState(p.state.Load()) != stateOpen {
\t\treturn ErrQueueClosed
\t}
```
";

    /// The same response's ASCII diagram, in a fence without a language.
    const ADVISOR_DIAGRAM: &str = "### Core Components

```
┌─────────────────────────────────────────────────────┐
│                     TaskQueue                      │
│  once     sync.Once   idempotent close            │
│  state    atomic.Int32  (running | draining)     │
└──────────────┬──────────────────────────────────────┘
               │  N goroutines
               ▼
┌─────────────────────────┐
│        worker()         │
│  loop:                  │
│    select {             │
│      case task ← taskChan │  ← normal path
```
";

    #[test]
    fn source_and_diagrams_in_code_blocks_are_not_calls() {
        assert!(names(ADVISOR_GO).is_empty(), "{:?}", names(ADVISOR_GO));
        assert!(
            names(ADVISOR_DIAGRAM).is_empty(),
            "{:?}",
            names(ADVISOR_DIAGRAM)
        );
        // Source in a language is code even when it declares nothing.
        let python = "```python\nrows = load_rows(path)\nsave_to_excel(rows)\n```";
        assert!(names(python).is_empty(), "{:?}", names(python));
        // An unmarked block that reads as source, and an indented one.
        let unmarked = "```\nif ready:\n    save_to_excel(rows)\n```";
        assert!(names(unmarked).is_empty(), "{:?}", names(unmarked));
        let indented = "Like this:\n\n    for row in rows:\n        save_to_excel(row);\n\nDone.";
        assert!(names(indented).is_empty(), "{:?}", names(indented));
        // Prose around a code block is still read.
        let after = format!("{ADVISOR_GO}\nNow I'll call lookup_customer(id=\"c1\").");
        assert_eq!(names(&after), ["lookup_customer"]);
    }

    #[test]
    fn a_call_transcript_in_a_code_block_is_still_a_call() {
        let unmarked = "```\nget_weather(city=\"Paris\")\n```";
        assert_eq!(names(unmarked), ["get_weather"]);
        let tool_code = "```tool_code\nprint(get_weather(city=\"Paris\"))\n```";
        assert_eq!(names(tool_code), ["get_weather"]);
        let json =
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```";
        assert_eq!(names(json), ["get_weather"]);
        // A JSON call block is a call even inside source.
        let in_source = "```python\ncall = {\"name\": \"get_weather\", \"arguments\": {}}\n```";
        assert_eq!(names(in_source), ["get_weather"]);
        // Inline triple backticks are not a fence.
        assert_eq!(
            names("Run ```get_weather(city=\"Paris\")``` now"),
            ["get_weather"]
        );
    }

    #[test]
    fn a_name_the_text_defines_is_not_a_tool() {
        for text in [
            "def client_request_hook(span, request):\n    span.set_attribute(\"x\", 1)",
            "Add `async def client_request_hook(span, request)` to your module.",
            "Write `function getUserData(id) { … }` first, then getUserData(42) returns it.",
            "pub fn parse_line(line: &str) -> Row",
            "handle_request := func(w http.ResponseWriter) {}",
            "```python\ndef save_to_excel(rows):\n    ...\n```\nThen call save_to_excel(rows) to write it.",
        ] {
            assert!(names(text).is_empty(), "{text}: {:?}", names(text));
        }
        // A name only called, or defined under another name, is still a call.
        assert_eq!(
            names("def helper_fn(x):\n    ...\nNow call get_balance(account_id=\"a1\")"),
            ["get_balance"]
        );
        assert_eq!(names("I'll call define_plan(goal=\"x\")"), ["define_plan"]);
    }

    #[test]
    fn a_prompt_still_names_the_tools_its_code_declares() {
        let prompt = "You can call:\n```python\ndef lookup_customer(email: str): ...\n```";
        let found: Vec<String> = super::mentions(prompt, super::Reader::Prompt)
            .into_iter()
            .map(|m| m.name.into_owned())
            .collect();
        assert_eq!(found, ["lookup_customer"]);
    }

    /// anthropic-code-execution-20250825.2.json and its recorded stream (.chunks.txt): the
    /// model lists the functions of the script it wrote with the code execution tool.
    const CODE_EXECUTION_SUMMARY: &str = "## Features of the Script:
- **fibonacci(n)**: Calculates the nth Fibonacci number
- **generate_fibonacci_sequence(n)**: Creates a sequence up to position n
- **save_to_excel()**: Exports data to Excel format using pandas
- Clean output with formatted display of results";
    const CODE_EXECUTION_STREAM_SUMMARY: &str =
        "1. **fibonacci_calculator.py** - The Python script with:
   - `fibonacci()` - Efficient iterative implementation to calculate Fibonacci numbers
   - `fibonacci_recursive()` - Alternative recursive implementation
   - `generate_fibonacci_sequence()` - Generates a sequence of Fibonacci numbers
   - `export_to_excel()` - Exports data to a formatted Excel file";

    #[test]
    fn a_function_labelling_a_list_item_is_described_not_called() {
        for text in [
            CODE_EXECUTION_SUMMARY,
            CODE_EXECUTION_STREAM_SUMMARY,
            "- `generate_fibonacci_sequence(n)`",
            "### `save_to_excel()`",
            "| `save_to_excel(df, path)` | writes the file |",
            "2) save_to_excel(): exports the data",
        ] {
            assert!(names(text).is_empty(), "{text}: {:?}", names(text));
        }
        // Values, or a calling verb, make a list item a call.
        assert_eq!(names("- get_weather(city=\"Paris\")"), ["get_weather"]);
        assert_eq!(names("1. get_forecast(3)"), ["get_forecast"]);
        assert_eq!(names("- Call get_weather(city) first"), ["get_weather"]);
        assert_eq!(names("- get_time()"), ["get_time"]);
        assert_eq!(
            names("- Then use the lookup_customer tool"),
            ["lookup_customer"]
        );
    }

    #[test]
    fn an_id_with_a_long_number_is_not_a_tool_name() {
        // As gpt-4o lists payment methods in tau-bench's airline conversations.
        assert!(names("- Use voucher_5512043").is_empty());
        assert_eq!(names("- Use fetch_report_2024"), ["fetch_report_2024"]);
    }
}

/// Prose on code (issue 29, item 8): code a response shows the reader is not a tool it calls. The
/// shapes are real ones: gpt-5 answering with unfenced Python
/// (`FastAPIInstrumentor.instrument_app(app, client_request_hook=…)`, whose dotted form the
/// scorer reads against the catalog), and the minimal "You can call foo_bar(items) here.".
#[cfg(test)]
mod prose_on_code {
    use super::tests::names;

    #[test]
    fn a_call_the_reader_makes_is_not_the_model_s() {
        for text in [
            "You can call foo_bar(items) here.",
            "You'll want to call setup_tracing(app) once at startup.",
            "If you call get_weather(city) twice, the cache answers.",
            "Then you just use parse_rows to read them.",
            "You should invoke the build_index tool from your CI.",
        ] {
            assert!(names(text).is_empty(), "{text}: {:?}", names(text));
        }
        // The model's own calls, with "you" elsewhere in the sentence.
        assert_eq!(names("Let me call foo_bar(items) for you."), ["foo_bar"]);
        assert_eq!(
            names("I can help you by calling lookup_order(\"A1\")."),
            ["lookup_order"]
        );
        assert_eq!(
            names("Thank you, I'll now call get_balance(account_id=\"a1\")."),
            ["get_balance"]
        );
    }

    #[test]
    fn a_call_described_by_what_it_returns_is_code() {
        assert!(names("`parse_rows(text)` returns a list of rows.").is_empty());
        assert!(names("build_index(docs) takes the documents and raises on a bad one.").is_empty());
        assert_eq!(
            names("get_balance(account_id=\"a1\") is my next step."),
            ["get_balance"]
        );
    }

    /// An answer's unfenced Python, as gpt-5 wrote one (the held-back stream's shape).
    const UNFENCED: &str = "Instrument the app once it exists:

from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
app = FastAPI()
setup_tracing(app)
register_hooks(app, client_request_hook=client_request_hook)
Then call get_balance(account_id=\"a1\") to check it.";

    #[test]
    fn lines_that_read_as_code_are_code() {
        // The prose line of the paragraph is still read.
        assert_eq!(names(UNFENCED), ["get_balance"]);
        let unfenced_js = "const client = createClient(url);\nawait start_worker(client);";
        assert!(names(unfenced_js).is_empty(), "{:?}", names(unfenced_js));
        // Without a statement beside them, bare calls on their own lines are a transcript.
        assert_eq!(
            names("get_weather(city=\"Paris\")\nget_time(zone=\"CET\")"),
            ["get_weather", "get_time"]
        );
        // Prose with an `=` in it is not an assignment, nor prose that starts with a keyword.
        assert_eq!(
            names("If total == 0, call refund_order(order_id=\"o1\")."),
            ["refund_order"]
        );
        let wrapped =
            "I checked the order and\nlet me call refund_order(order_id=\"o1\")\nimport the \
                       receipt after that.";
        assert_eq!(names(wrapped), ["refund_order"]);
        let rust = "let mut total: u32 = 0;\nsum_rows(rows)";
        assert!(names(rust).is_empty(), "{:?}", names(rust));
        let js = "class Store {\nload_rows(path);";
        assert!(names(js).is_empty(), "{:?}", names(js));
        assert_eq!(
            names("Sure;\nget_balance(account_id=\"a1\")"),
            ["get_balance"]
        );
    }
}
