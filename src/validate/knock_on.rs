//! Knock-on errors. A value with a key or type error is set aside before the
//! rules run, so to them it looks unset: `gpus = "8"` would make
//! `nProcPerNode = "gpu"` report that `resources.gpus` is not set, above the
//! type error that is the real one. Every message names the fields it is
//! about, in backticks, by their path (`resources.gpus`, `[resources]`,
//! `[trainjob] writeRuntime`); a rule's diagnostic that names a field the
//! schema stage found at fault, or meant by a misspelt or misplaced key, is
//! a knock-on and is dropped: the error at that field says what to fix.

use crate::diagnostic::Diagnostic;
use crate::tree::field_path;

/// The fields the user meant to write but the rules could not read, as the
/// spec's messages spell them.
#[derive(Debug, Default, Clone)]
pub struct Meant {
    /// Every form of every such field (see [`forms`]).
    forms: Vec<String>,
}

/// The ways a message begins to name the field at dotted `path`, e.g. for
/// `trainjob.runtime`: "`trainjob.runtime", "`[trainjob.runtime",
/// "`[trainjob] runtime".
fn forms(path: &str) -> Vec<String> {
    let mut forms = vec![format!("`{path}"), format!("`[{path}")];
    if let Some((table, key)) = path.rsplit_once('.') {
        forms.push(format!("`[{table}] {key}"));
    }
    forms
}

impl Meant {
    pub(crate) fn new(mut pointers: Vec<String>) -> Meant {
        pointers.sort();
        pointers.dedup();
        let forms = pointers
            .iter()
            .filter(|p| !p.is_empty())
            .flat_map(|pointer| forms(&field_path(pointer)))
            .collect();
        Meant { forms }
    }

    /// Whether `diagnostic` names a field the user wrote wrongly.
    pub fn is_knock_on(&self, diagnostic: &Diagnostic) -> bool {
        if self.forms.is_empty() {
            return false;
        }
        let texts = std::iter::once(diagnostic.message.as_str())
            .chain(diagnostic.help.as_deref())
            .chain(diagnostic.primary.text.as_deref());
        texts.into_iter().any(|text| names(text, &self.forms))
    }

    /// Drops the knock-ons from `diagnostics`.
    pub fn drop_knock_ons(&self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain(|d| !self.is_knock_on(d));
    }
}

/// A diagnostic that names a field an overlay's `unset` removed (`nProcPerNode
/// = "gpu"` needs `resources.gpus`, which the CPU overlay unsets) is true, but
/// the field is set in the spec it points at: its help says where it went.
/// `unset` holds each entry as written and its place (`cpu.toml:1:10`).
pub fn point_at_unset(diagnostics: &mut [Diagnostic], unset: &[(String, String)]) {
    for (path, place) in unset {
        let forms = forms(path);
        for d in diagnostics.iter_mut() {
            if !names(&d.message, &forms) {
                continue;
            }
            let said = format!("`{path}` is unset by the overlay at {place}");
            d.help = Some(match d.help.take() {
                Some(help) if !help.contains(&said) => format!("{said}; {help}"),
                Some(help) => help,
                None => said,
            });
        }
    }
}

/// Whether `text` names the field one of `forms` begins: the form followed
/// by the end of the name (`` ` ``, ` `, `=`, `]`) or by a deeper field (`.`, `[`).
fn names(text: &str, forms: &[String]) -> bool {
    forms.iter().any(|form| {
        text.match_indices(form.as_str()).any(|(at, _)| {
            matches!(
                text[at + form.len()..].chars().next(),
                Some('`' | ' ' | '=' | ']' | '.' | '[')
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn said(message: &str) -> Diagnostic {
        Diagnostic::error("trainc::test", Span::new(crate::SourceId(0), 0, 0), message)
    }

    #[test]
    fn a_message_naming_a_field_at_fault_or_inside_it_is_a_knock_on() {
        let meant = Meant::new(vec!["/resources/gpus".into(), "/trainjob".into()]);
        for message in [
            "`nProcPerNode = \"gpu\"` needs GPUs, but `resources.gpus` is not set",
            "set `resources.gpus = 1`",
            "`[trainjob] writeRuntime` is needed",
            "`trainjob.runtime` names no runtime",
            "add `[trainjob]`",
        ] {
            assert!(meant.is_knock_on(&said(message)), "{message}");
        }
        for message in [
            "`resources.gpusPerNode` is not a field",
            "`master.resources.gpus` is not set",
            "`resources.cpu` is not set",
            "resources.gpus without backticks",
        ] {
            assert!(!meant.is_knock_on(&said(message)), "{message}");
        }
    }
}
