//! An example MCP server over stdio, written with rmcp: refunds against a sandbox ledger.
//!
//! It exists so that `toolcall replay` has a real server to run against in `cargo test` on a
//! machine with nothing but Rust, and so the example flows under `flows/` can show each kind of
//! failure: a renamed tool (`refund_order` is now `issue_refund`), a newly required field
//! (`reason`), an `isError` result (refunding more than was paid) and an expectation on a key.
//!
//! Every result carries `structuredContent` (and the same JSON as a text block, as rmcp does).
//! The ledger lives in memory: each server process starts from the same three orders.

use std::sync::{Arc, Mutex};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Clone, Debug)]
struct Order {
    order_id: &'static str,
    customer_email: &'static str,
    total_cents: i64,
    refunded_cents: i64,
}

#[derive(Debug)]
struct Ledger {
    orders: Vec<Order>,
    entries: Vec<Value>,
    next_refund: u32,
}

impl Ledger {
    fn sandbox() -> Ledger {
        let order = |order_id, customer_email, total_cents| Order {
            order_id,
            customer_email,
            total_cents,
            refunded_cents: 0,
        };
        Ledger {
            orders: vec![
                order("ord_1042", "ada@example.com", 9164),
                order("ord_1043", "ada@example.com", 2500),
                order("ord_2001", "grace@example.com", 12000),
            ],
            entries: Vec::new(),
            next_refund: 1,
        }
    }
}

fn order_json(order: &Order) -> Value {
    json!({
        "order_id": order.order_id,
        "customer_email": order.customer_email,
        "total_cents": order.total_cents,
        "refunded_cents": order.refunded_cents,
        "refundable_cents": order.total_cents - order.refunded_cents,
    })
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SearchOrders {
    /// The customer's e-mail address.
    customer_email: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct IssueRefund {
    /// The order to refund, e.g. `ord_1042`.
    order_id: String,
    /// How much to refund, in cents; at most what is still refundable.
    amount_cents: i64,
    /// Why the refund is issued (required since the ledger audit).
    reason: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct GetLedger {}

#[derive(Clone)]
struct RefundServer {
    ledger: Arc<Mutex<Ledger>>,
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

#[tool_router]
impl RefundServer {
    fn new() -> RefundServer {
        RefundServer {
            ledger: Arc::new(Mutex::new(Ledger::sandbox())),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[tool(description = "Orders placed with this customer e-mail address.")]
    fn search_orders(
        &self,
        Parameters(SearchOrders { customer_email }): Parameters<SearchOrders>,
    ) -> Result<CallToolResult, ErrorData> {
        let ledger = self.ledger();
        let orders: Vec<Value> = ledger
            .orders
            .iter()
            .filter(|o| o.customer_email.eq_ignore_ascii_case(&customer_email))
            .map(order_json)
            .collect();
        Ok(CallToolResult::structured(
            json!({"count": orders.len(), "orders": orders}),
        ))
    }

    #[tool(description = "Refund part or all of an order to the original payment method.")]
    fn issue_refund(
        &self,
        Parameters(IssueRefund {
            order_id,
            amount_cents,
            reason,
        }): Parameters<IssueRefund>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut ledger = self.ledger();
        let refund_number = ledger.next_refund;
        let Some(order) = ledger.orders.iter_mut().find(|o| o.order_id == order_id) else {
            return Ok(error_result(format!("no order {order_id}")));
        };
        let refundable = order.total_cents - order.refunded_cents;
        if amount_cents <= 0 || amount_cents > refundable {
            return Ok(error_result(format!(
                "amount_cents {amount_cents} is not between 1 and the refundable {refundable} of {order_id}"
            )));
        }
        order.refunded_cents += amount_cents;
        let entry = json!({
            "refund_id": format!("rf_{refund_number:04}"),
            "order_id": order_id,
            "amount_cents": amount_cents,
            "reason": reason,
            "status": "pending",
            "refundable_cents": order.total_cents - order.refunded_cents,
        });
        ledger.next_refund += 1;
        ledger.entries.push(entry.clone());
        Ok(CallToolResult::structured(entry))
    }

    #[tool(description = "Every refund issued so far, and the total refunded, in cents.")]
    fn get_ledger(
        &self,
        Parameters(GetLedger {}): Parameters<GetLedger>,
    ) -> Result<CallToolResult, ErrorData> {
        let ledger = self.ledger();
        let total: i64 = ledger
            .entries
            .iter()
            .filter_map(|e| e["amount_cents"].as_i64())
            .sum();
        Ok(CallToolResult::structured(json!({
            "entries": ledger.entries,
            "refunded_total_cents": total,
        })))
    }
}

#[tool_handler]
impl ServerHandler for RefundServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("Refunds against a sandbox ledger.")
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("refund-server: ready on stdio (sandbox ledger)");
    let service = RefundServer::new().serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
