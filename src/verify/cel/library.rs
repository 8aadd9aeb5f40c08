//! The functions of Kubernetes' own CEL libraries that trainc evaluates
//! (kubernetes/kubernetes v1.30.0, `staging/src/k8s.io/apiserver/pkg/cel/library/`):
//! `regex.go`'s `find` and `findAll`, `urls.go`'s `isURL`; and CEL's
//! standard `matches`, which cel-rust would compile its pattern for at every
//! call (a TrainJob's name rule: a regex compiled per object). A rule that calls
//! another function of those libraries (`quantity`, `url`, `ip`, `cidr`,
//! `format` …) is not checked: the report says so, never a silent pass.

use std::cell::RefCell;
use std::collections::HashMap;

use cel::common::types::{CelBool, CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

/// Registers the functions on `env` (the macros name the types as cel-rust
/// does, without lifetimes).
#[allow(elided_lifetimes_in_paths)]
pub(super) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>,
        name = "findAll")?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
        name = "findAll")?;
    cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL")?;
    cel::add_member_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>)?;
    cel::add_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>,
        id = "matches")?;
    Ok(())
}

/// Patterns compiled, per thread; a rule's pattern is written once in its
/// CRD, so these are few.
const CACHED: usize = 256;

fn regex(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    thread_local! {
        static COMPILED: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
    }
    COMPILED.with_borrow_mut(|compiled| {
        if let Some(re) = compiled.get(pattern) {
            return Ok(re.clone());
        }
        let re = regex::Regex::new(pattern).map_err(|e| {
            ExecutionError::function_error(function, format!("'{pattern}' not a valid regex: {e}"))
        })?;
        if compiled.len() >= CACHED {
            compiled.clear();
        }
        compiled.insert(pattern.to_owned(), re.clone());
        Ok(re)
    })
}

/// Whether the pattern (RE2 syntax, as the `regex` crate reads it) matches
/// anywhere in the text.
fn matches(this: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    Ok(CelBool::from(
        regex("matches", pattern.inner())?.is_match(this.inner()),
    ))
}

/// The first match of the pattern, or `""`.
fn find(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelString<'static>, ExecutionError> {
    let re = regex("find", pattern.inner())?;
    Ok(re
        .find(this.inner())
        .map_or_else(String::new, |m| m.as_str().to_owned())
        .into())
}

fn find_all(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(this, pattern, &CelInt::from(-1))
}

/// At most `n` matches (all of them when `n` is negative). cel-rust's
/// macro hands every argument by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn find_all_n(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let re = regex("findAll", pattern.inner())?;
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    let found: Vec<Box<dyn Val>> = re
        .find_iter(this.inner())
        .take(limit)
        .map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val>)
        .collect();
    Ok(found.into())
}

/// Whether Go's `url.ParseRequestURI` takes the text: an absolute URI
/// (`scheme:…`) or an absolute path, with no space or control character.
fn is_url(this: &CelString<'_>) -> CelBool {
    CelBool::from(request_uri(this.inner()))
}

pub(super) fn request_uri(text: &str) -> bool {
    if text.is_empty() || text.chars().any(|c| c.is_control() || c == ' ') {
        return false;
    }
    if text.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && (!rest.starts_with("//") || !rest[2..].starts_with('/') || rest.len() > 2)
}
