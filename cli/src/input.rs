//! Reading the CLI's input files: policy documents and service descriptions.

use crate::error::CliError;
use retrycore::lint::Service;
use retrycore::policy::PolicyConfig;
use std::path::Path;

/// Reads a whole file as UTF-8 text.
pub fn read_text(path: &Path, what: &str) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            std::io::ErrorKind::InvalidData => "not UTF-8 text".to_owned(),
            _ => e.to_string(),
        };
        CliError::input(format!("cannot read {what} {}: {why}", path.display()))
    })
}

/// Parses JSON text, naming the file in the error.
pub fn parse_json(text: &str, path: &Path, what: &str) -> Result<retrycore::json::Value, CliError> {
    serde_json::from_str(text).map_err(|e| CliError::input(format!("{what} {} is not valid JSON: {e}", path.display())))
}

/// Describes a core error: its code, and the field and reason.
pub fn core_error(e: &retrycore::Error) -> String {
    if e.field().is_empty() {
        format!("{} ({})", e.reason(), e.code())
    } else {
        format!("{}: {} ({})", e.field(), e.reason(), e.code())
    }
}

/// Reads and validates a policy document.
pub fn read_policy(path: &Path) -> Result<(PolicyConfig, retrycore::json::Value), CliError> {
    let text = read_text(path, "policy")?;
    let value = parse_json(&text, path, "policy")?;
    let config = PolicyConfig::from_json_value(&value)
        .map_err(|e| CliError::input(format!("invalid policy {}: {}", path.display(), core_error(&e))))?;
    Ok((config, value))
}

/// Reads and validates a service description.
pub fn read_service(path: &Path) -> Result<Service, CliError> {
    let text = read_text(path, "service description")?;
    let value = parse_json(&text, path, "service description")?;
    Service::from_json_value(&value)
        .map_err(|e| CliError::input(format!("invalid service description {}: {}", path.display(), core_error(&e))))
}

/// Returns a display name for a policy: its `name`, else the file's stem.
pub fn policy_name(config: &PolicyConfig, path: &Path) -> String {
    config.name.clone().unwrap_or_else(|| {
        path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned())
    })
}
