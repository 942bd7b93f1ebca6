//! The check's findings, as steps an administrator reads top to bottom
//! (or as JSON for a monitoring system).

use serde::Serialize;

/// How a step went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As it should be.
    Ok,
    /// Works, but not as intended.
    Warn,
    /// Post-quantum TLS is not in effect because of this.
    Fail,
    /// A fact, neither good nor bad.
    Info,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Info => "info",
        }
    }
}

/// One step of the check.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// What was checked.
    pub name: String,
    /// How it went.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// Why it matters, for a failure or warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What to change, for a failure or warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Step {
    /// A step without a reason or fix.
    pub fn new(name: &str, status: Status, detail: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            status,
            detail: detail.into(),
            why: None,
            fix: None,
        }
    }

    /// A failure (or warning) with its reason and fix.
    pub fn problem(
        name: &str,
        status: Status,
        detail: impl Into<String>,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            why: Some(why.into()),
            fix: Some(fix.into()),
            ..Self::new(name, status, detail)
        }
    }
}

/// The steps as text, one line each, with reason and fix indented below.
pub fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        out.push_str(&format!(
            "  {:<5} {}: {}\n",
            step.status.label(),
            step.name,
            step.detail
        ));
        if let Some(why) = &step.why {
            out.push_str(&format!("        why: {why}\n"));
        }
        if let Some(fix) = &step.fix {
            out.push_str(&format!("        fix: {fix}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_failures_with_reason_and_fix() {
        let steps = [
            Step::new("OpenSSL", Status::Ok, "3.0"),
            Step::problem("module", Status::Fail, "missing", "no ML-KEM", "install it"),
        ];
        let text = render(&steps);
        assert_eq!(
            text,
            "  ok    OpenSSL: 3.0\n  FAIL  module: missing\n        why: no ML-KEM\n        fix: install it\n"
        );
        let json = serde_json::to_value(&steps[1]).unwrap();
        assert_eq!(json["status"], "fail");
        assert!(serde_json::to_value(&steps[0])
            .unwrap()
            .get("why")
            .is_none());
    }
}
