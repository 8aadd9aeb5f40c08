//! The reader: values as written, aliases counted, limits per object.
use super::*;

const LIMITS: Limits = Limits {
    depth: 50,
    documents: 4,
    nodes: 1000,
    object_nodes: 1000,
    aliased: 1000,
    aliased_bytes: 1000,
};

fn one(text: &str) -> Raw<'_> {
    let mut documents = load(SourceId(0), text, LIMITS).unwrap();
    assert_eq!(documents.len(), 1);
    documents.remove(0)
}

#[test]
fn scalars_keep_their_text_style_and_tag() {
    let root = one("a: 0644\nb: !!binary aGk=\nc: 'x'\n");
    assert_eq!(root.get("a").unwrap().scalar(), Some("0644"));
    let b = root.get("b").unwrap();
    assert_eq!(b.tag.as_ref().unwrap().original(), "!!binary");
    assert!(matches!(
        root.get("c").unwrap().body,
        Body::Scalar(_, ScalarStyle::SingleQuoted)
    ));
}

/// The values of one object are counted: a document, or each element of
/// a root `items` list (the rest of that document one object more).
#[test]
fn each_object_is_held_to_its_own_limit() {
    let limits = Limits {
        object_nodes: 20,
        nodes: 100_000,
        ..LIMITS
    };
    let object = |n: usize| format!("{{k: [{}]}}", vec!["0"; n].join(", "));
    let list = format!(
        "apiVersion: v1\nitems:\n{}kind: List\n",
        format!("- {}\n", object(15)).repeat(50)
    );
    assert!(load(SourceId(0), &list, limits).is_ok());
    let big_item = format!("items:\n- {}\n", object(30));
    assert!(matches!(
        load(SourceId(0), &big_item, limits),
        Err(LoadError::TooLargeObject { limit: 20, .. })
    ));
    let big_document = format!("a: {}\n", object(30));
    assert!(matches!(
        load(SourceId(0), &big_document, limits),
        Err(LoadError::TooLargeObject { .. })
    ));
    // Each document starts again.
    let documents = format!("{}\n---\n{}\n", object(15), object(15));
    assert!(load(SourceId(0), &documents, limits).is_ok());
    // A list under another key is part of its object.
    let nested = format!(
        "spec:\n  items:\n{}",
        format!("  - {}\n", object(5)).repeat(5)
    );
    assert!(matches!(
        load(SourceId(0), &nested, limits),
        Err(LoadError::TooLargeObject { .. })
    ));
}

#[test]
fn aliases_expand_and_count() {
    let root = one("a: &x [1, 2]\nb: *x\n");
    assert_eq!(root.get("a").unwrap().body, root.get("b").unwrap().body);
    let bomb = "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n";
    assert!(matches!(
        load(SourceId(0), bomb, LIMITS),
        Err(LoadError::TooManyNodes { .. })
    ));
    // Few values, many bytes: one long scalar repeated.
    let long = format!("a: &a {}\nb: [*a, *a, *a]\n", "x".repeat(400));
    assert!(matches!(
        load(SourceId(0), &long, LIMITS),
        Err(LoadError::TooManyBytes { limit: 1000, .. })
    ));
    // Keys count too, and a container's bytes are its scalars'.
    let keys = format!(
        "a: &a {{{k}: 1, {k}x: 2}}\nb: [*a, *a]\n",
        k = "k".repeat(300)
    );
    assert!(matches!(
        load(SourceId(0), &keys, LIMITS),
        Err(LoadError::TooManyBytes { .. })
    ));
    let within = format!("a: &a {}\nb: [*a, *a]\n", "x".repeat(400));
    assert!(load(SourceId(0), &within, LIMITS).is_ok());
}

#[test]
fn recursion_duplicates_and_depth_are_errors() {
    assert!(matches!(
        load(SourceId(0), "a: &a [*a]\n", LIMITS),
        Err(LoadError::RecursiveAlias { .. })
    ));
    assert!(matches!(
        load(SourceId(0), "a: 1\nb: 2\na: 3\n", LIMITS),
        Err(LoadError::DuplicateKey { .. })
    ));
    let deep = format!("{}{}", "[".repeat(60), "]".repeat(60));
    assert!(matches!(
        load(SourceId(0), &deep, LIMITS),
        Err(LoadError::TooDeep { .. })
    ));
}
