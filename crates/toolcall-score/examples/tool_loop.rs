//! Drives the loop guard against a scripted transport and prints every request it sent: what an
//! agent's loop sends back when the model calls a tool that does not exist.
//!
//! Run it with `cargo run -p toolcall-score --example tool_loop`.

use serde_json::json;
use toolcall_score::tool_loop::{Handlers, LoopPolicy, Outgoing, ScriptedTransport, ToolLoop};
use toolcall_score::{Catalog, Format, Response, Tool, ToolCall};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalog = Catalog::new([
        Tool::new("get_balance", "Current balance of an account."),
        Tool::new("get_invoice", "One invoice by id."),
    ]);
    let mut guard = ToolLoop::new(catalog, LoopPolicy::default());
    let mut handlers = Handlers::default()
        .with("get_balance", |args| {
            Ok(json!({"account_id": args["account_id"], "balance": "12.00 EUR"}))
        })
        .with("get_invoice", |args| {
            Ok(json!({"id": args["id"], "paid": true}))
        });

    // Turn 1: a parallel call to a defined tool and an invented one, then an answer in text.
    // Turn 2: the model keeps inventing names; the second one escalates.
    let mut transport = ScriptedTransport::new([
        calls(&[
            ("toolu_01", "get_balance", json!({"account_id": "acc_771"})),
            ("toolu_02", "get_invoices", json!({"account_id": "acc_771"})),
        ]),
        text("Your balance is 12.00 EUR. I can look up a single invoice if you have its id."),
        calls(&[("toolu_03", "search_invoices", json!({"q": "unpaid"}))]),
        calls(&[("toolu_04", "list_invoices", json!({}))]),
        text("(never sent: the turn escalated before this reply was needed)"),
    ]);

    for turn in 1..=2 {
        let end = guard.run_turn(&mut transport, &mut handlers)?;
        println!("== turn {turn}: {}", end.outcome);
        if !end.text().is_empty() {
            println!("model: {}", end.text());
        }
        if let Some(closing) = &end.closing {
            println!(
                "closing answers for the history:\n{}",
                serde_json::to_string_pretty(&closing.to_json())?
            );
        }
        let turn_metrics = guard.metrics().turn();
        println!(
            "steps {}, unknown calls {}, distinct unknown names {:?}\n",
            turn_metrics.steps(),
            turn_metrics.unknown_calls(),
            turn_metrics.unknown_names().collect::<Vec<_>>()
        );
    }

    println!("== what the loop sent");
    for (i, outgoing) in transport.sent().iter().enumerate() {
        match outgoing {
            Outgoing::TurnStart => println!("request #{}: start of a turn", i + 1),
            Outgoing::ToolResults(results) => println!(
                "request #{}: tool results\n{}",
                i + 1,
                serde_json::to_string_pretty(&results.to_json())?
            ),
        }
    }
    let total = guard.metrics().total();
    println!(
        "\n== total: {} turns, {} steps, {} calls, {} unknown",
        guard.metrics().turns(),
        total.steps(),
        total.calls(),
        total.unknown_calls()
    );
    Ok(())
}

/// An Anthropic response carrying these calls.
fn calls(calls: &[(&str, &str, serde_json::Value)]) -> Response {
    let mut response = Response::empty(Format::Anthropic);
    response.stop_reason = Some("tool_use".into());
    response.calls = calls
        .iter()
        .map(|(id, name, args)| ToolCall::new(Some(id), name, args.clone()))
        .collect();
    response
}

/// An Anthropic response answering in text.
fn text(text: &str) -> Response {
    let mut response = Response::empty(Format::Anthropic);
    response.stop_reason = Some("end_turn".into());
    response.text.push(text.to_owned());
    response
}
