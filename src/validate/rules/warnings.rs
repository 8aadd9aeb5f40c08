//! `allowWarnings`: each entry must be a code trainc emits, written whole,
//! or it acknowledges nothing and the warning it was meant for still fails
//! a `warnings = "error"` spec.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes, suggest};

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(allowed) = &r.spec.allow_warnings else {
        return;
    };
    for (i, code) in allowed.iter().enumerate() {
        if codes::ALL.contains(&code.as_str()) {
            continue;
        }
        let whole = format!("trainc::{code}");
        let help = if codes::ALL.contains(&whole.as_str()) {
            format!("write the whole code: `{whole}`")
        } else if let Some(near) = suggest(code, codes::ALL.iter().copied()) {
            format!("did you mean `{near}`?")
        } else {
            "write a warning's code as `check` prints it above the warning, e.g. `trainc::scheduling::kueue_tolerations`".to_owned()
        };
        let span = r.value(&format!("/allowWarnings/{i}"));
        r.push(
            Diagnostic::error(
                codes::WARNINGS_UNKNOWN_CODE,
                span,
                format!("`{code}` is not a code trainc emits, so it allows nothing"),
            )
            .with_help(help),
        );
    }
}
