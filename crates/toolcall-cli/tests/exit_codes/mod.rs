//! Every exit code README documents, each meaning of it produced by a real command: the codes
//! are a contract with CI scripts, so a code that moves fails here, and so does a code README
//! lists that no command here produces.

use std::path::Path;

use super::support::{stderr, toolcall};
use super::{chat_response, scratch, write, CASE};

/// The codes of README's `Exit codes:` sentence, each with what it says of it: `0 pass, 1 fail
/// (a finding, …), 2 bad input` is `[(0, "pass"), (1, "fail (a finding, …)"), (2, "bad input")]`.
fn documented() -> Vec<(i32, String)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let start = readme
        .find("Exit codes: ")
        .expect("README has an `Exit codes:` sentence");
    let sentence = &readme[start + "Exit codes: ".len()..];
    let sentence = &sentence[..sentence.find(". ").unwrap()];
    // Split at the commas outside parentheses.
    let (mut parts, mut part, mut depth) = (Vec::new(), String::new(), 0);
    for c in sentence.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut part));
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    parts.push(part);
    parts
        .iter()
        .map(|p| {
            let (code, meaning) = p.trim().split_once(' ').unwrap();
            (code.parse().unwrap(), meaning.replace('\n', " "))
        })
        .collect()
}

/// One documented meaning of a code, and a command that exits with it.
struct Pinned {
    code: i32,
    meaning: &'static str,
    args: Vec<String>,
}

#[test]
fn every_documented_exit_code_is_what_a_real_command_exits_with() {
    let dir = scratch("exit-codes");
    let case = write(&dir, "case.json", CASE);
    let defined = write(
        &dir,
        "defined.json",
        &chat_response("get_balance", r#"{"account_id": "acc_771"}"#),
    );
    let unknown = write(
        &dir,
        "unknown.json",
        &chat_response("search_invoices", "{}"),
    );
    let log_line = |response: &str| {
        let request: serde_json::Value = serde_json::from_str(CASE).unwrap();
        let response: serde_json::Value = serde_json::from_str(response).unwrap();
        format!(
            "{}\n",
            serde_json::json!({"request": request, "response": response})
        )
    };
    let log = write(
        &dir,
        "log.jsonl",
        &log_line(&chat_response("search_invoices", "{}")),
    );
    let unreadable_log = write(&dir, "unreadable.jsonl", "not a log line\n");
    let path = |p: &Path| p.display().to_string();
    let args = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
    let pinned = [
        Pinned {
            code: 0,
            meaning: "pass",
            args: args(&[
                "score",
                "--case",
                &path(&case),
                "--response",
                &path(&defined),
            ]),
        },
        Pinned {
            code: 1,
            meaning: "a finding",
            args: args(&[
                "score",
                "--case",
                &path(&case),
                "--response",
                &path(&unknown),
            ]),
        },
        Pinned {
            code: 1,
            meaning: "a gate exceeded",
            args: args(&["rate", &path(&log), "--max-unknown", "0"]),
        },
        Pinned {
            code: 1,
            meaning: "an MCP server that could not be started",
            args: args(&[
                "mcp",
                "snapshot",
                "--out",
                &path(&dir.join("snapshot.json")),
                "--",
                &path(&dir.join("no-such-server")),
            ]),
        },
        Pinned {
            code: 2,
            meaning: "a server `mcp diff` cannot reach: its 1 is drift alone",
            args: args(&[
                "mcp",
                "diff",
                "--snapshot",
                &path(&write(&dir, "old-snapshot.json", "{}")),
                "--",
                &path(&dir.join("no-such-server")),
            ]),
        },
        Pinned {
            code: 2,
            meaning: "bad input: a file that cannot be read",
            args: args(&[
                "score",
                "--case",
                &path(&case),
                "--response",
                &path(&dir.join("missing.json")),
            ]),
        },
        Pinned {
            code: 2,
            meaning: "bad input: no input that could be read at all",
            args: args(&["rate", &path(&unreadable_log)]),
        },
        Pinned {
            code: 2,
            meaning: "bad input: a value a flag cannot take",
            args: args(&["rate", &path(&log), "--max-rate", "2"]),
        },
        Pinned {
            code: 2,
            meaning: "bad input: a command line that does not parse",
            args: args(&["score", "--response", &path(&defined)]),
        },
    ];
    for Pinned {
        code,
        meaning,
        args,
    } in &pinned
    {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = toolcall(&words);
        assert_eq!(
            out.status.code(),
            Some(*code),
            "{meaning}: toolcall {}\n{}",
            words.join(" "),
            stderr(&out)
        );
        // An error is printed as one `error:` message; an outcome prints none.
        let errors = stderr(&out).matches("error:").count();
        assert_eq!(
            errors,
            usize::from(*code == 2 || meaning.contains("server")),
            "{meaning}: {}",
            stderr(&out)
        );
    }
    let documented = documented();
    let codes: Vec<i32> = documented.iter().map(|(code, _)| *code).collect();
    assert_eq!(codes, [0, 1, 2], "README's codes: {documented:?}");
    for (code, _) in &documented {
        assert!(
            pinned.iter().any(|p| p.code == *code),
            "README documents exit {code}, which no command here produces"
        );
    }
    // Each meaning README gives in its parentheses has its command.
    for (code, meaning) in &documented {
        let Some(listed) = meaning
            .split_once('(')
            .map(|(_, l)| l.trim_end_matches(')'))
        else {
            continue;
        };
        for item in listed.split(", ") {
            assert!(
                pinned.iter().any(|p| p.code == *code && p.meaning == item),
                "README's exit {code} means `{item}` too, which no command here produces"
            );
        }
    }
}
