//! The `metric_samples` kind: a name map and a script of events, and the
//! samples an exporter records for them (docs/observability.md, "Exporters").

use crate::common::{eq, Case};
use retrycore::{json, json::Value};

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    (kind == "metric_samples").then(|| samples(case))
}

fn samples(case: &Case) -> Result<(), String> {
    let doc = json!({"names": case.get("names").cloned().unwrap_or(Value::Null), "events": case.get("events").cloned().unwrap_or(Value::Null)});
    let doc = match doc["names"] {
        Value::Null => json!({"events": doc["events"]}),
        _ => doc,
    };
    match (case.expected_error(), retrycore::metrics::samples_document(&doc.to_string())) {
        (Some(code), Err(e)) => {
            eq("error", e.code(), code)?;
            eq("error_field", e.field(), case.str("error_field").unwrap_or(""))
        }
        (Some(code), Ok(v)) => Err(format!("expected error {code}, got {v}")),
        (None, Err(e)) => Err(format!("unexpected error {} ({e})", e.code())),
        (None, Ok(got)) => eq("samples", &got, case.get("samples").ok_or("no samples")?),
    }
}
