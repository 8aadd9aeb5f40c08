//! YAML as written: a tree that keeps each scalar's text, style and tag.
//!
//! Specs and ResourceLists are both read through [`load`]. A spec then goes
//! through [`scalar`]'s YAML 1.2 resolution into a [`crate::tree::Node`]; the
//! items of a ResourceList are written back by [`emit`] exactly as they came in
//! (`0644` stays `0644`, `!!binary` stays tagged), because the KRM function
//! contract makes the generated objects the only change to a package.
//!
//! The reader enforces its own limits (nesting, documents, and the number of
//! values once aliases are expanded), so hostile input ends in an error, not
//! in an exhausted machine.

use std::borrow::Cow;
use std::collections::HashMap;

use granit_parser::{Event, Options, Parser, ScalarStyle, Tag};

use crate::source::{SourceId, Span};

pub mod emit;
pub mod kubernetes;
mod parts;
pub mod scalar;
pub mod values;
pub use parts::{Part, parts};

/// A node as written. Aliases are expanded; anchors and comments are not kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw<'a> {
    pub span: Span,
    /// Boxed: few nodes have one, and every node carries the field.
    pub tag: Option<Box<Tag>>,
    pub body: Body<'a>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body<'a> {
    /// The value after escapes and folding, and how it was written.
    Scalar(Cow<'a, str>, ScalarStyle),
    Seq(Vec<Raw<'a>>),
    Map(Vec<(Raw<'a>, Raw<'a>)>),
}

impl<'a> Raw<'a> {
    /// The value under `key` of a mapping whose keys are plain text.
    pub fn get(&self, key: &str) -> Option<&Raw<'a>> {
        match &self.body {
            Body::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.scalar() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a scalar, whatever its style.
    pub fn scalar(&self) -> Option<&str> {
        match &self.body {
            Body::Scalar(text, _) => Some(text),
            _ => None,
        }
    }

    /// An empty plain scalar without a tag: YAML's null written as nothing.
    pub fn is_empty_null(&self) -> bool {
        self.tag.is_none()
            && matches!(&self.body, Body::Scalar(text, ScalarStyle::Plain) if text.is_empty())
    }
}

/// Values one Kubernetes object may hold in a manifest or a package:
/// real objects hold hundreds to a few thousand, and etcd stores at most
/// 1.5 MiB of one (its default request limit); a flow list of millions of
/// numbers is refused after 500,000 instead of filling memory.
pub const MAX_OBJECT_VALUES: usize = 500_000;

/// How much a document may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Containers inside containers; the root's values are one level deep.
    pub depth: usize,
    pub documents: usize,
    /// Values (scalars and containers) once every alias is expanded.
    pub nodes: usize,
    /// Values of one object: a document, or each element of the `items` of
    /// a document whose root holds a list there (`kind: List`), the rest of
    /// that document counted as one object.
    pub object_nodes: usize,
    /// Of those, values that aliases repeat: an alias bomb is refused long
    /// before it fills memory, while a large package without aliases is not.
    pub aliased: usize,
    /// Bytes of text (scalars, keys included) that aliases repeat: one long
    /// scalar repeated by a few thousand aliases is few values but gigabytes.
    pub aliased_bytes: usize,
}

/// Why a text could not be read as YAML.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// Not YAML: the parser's own words, at a byte offset.
    Syntax {
        offset: usize,
        message: String,
    },
    TooDeep {
        span: Span,
    },
    /// More than [`Limits::documents`].
    TooManyDocuments {
        span: Span,
        limit: usize,
    },
    /// Aliases expand past [`Limits::nodes`].
    TooManyNodes {
        span: Span,
        limit: usize,
    },
    /// One object holds more than [`Limits::object_nodes`] values.
    TooLargeObject {
        span: Span,
        limit: usize,
    },
    /// Aliases repeat more than [`Limits::aliased_bytes`] bytes of text.
    TooManyBytes {
        span: Span,
        limit: usize,
    },
    /// An alias inside the node its anchor names.
    RecursiveAlias {
        span: Span,
    },
    DuplicateKey {
        key: String,
        first: Span,
        again: Span,
    },
}

/// Every document of `text`, in order. A document holding only comments, or
/// nothing, is an empty plain scalar.
pub fn load(id: SourceId, text: &str, limits: Limits) -> Result<Vec<Raw<'_>>, LoadError> {
    load_at(id, text, 0, limits)
}

/// [`load`] of a part of a source (see [`parts`]) that begins `base` bytes
/// into it: every span is the source's.
pub fn load_at(
    id: SourceId,
    text: &str,
    base: usize,
    limits: Limits,
) -> Result<Vec<Raw<'_>>, LoadError> {
    let mut options = Options::default();
    // The scanner counts flow and block nesting itself; past these it stops
    // with "recursion limit exceeded", reported as too deep below.
    options.flow_nesting_limit = limits.depth + 1;
    options.block_nesting_limit = limits.depth + 1;
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut loader = Loader {
        limits,
        stack: Vec::new(),
        anchors: HashMap::new(),
        open_anchors: Vec::new(),
        nodes: 0,
        document_nodes: 0,
        item: None,
        aliased: 0,
        bytes: 0,
        aliased_bytes: 0,
        documents: Vec::new(),
    };
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|error| {
            let offset = base
                + error.marker().byte_offset().unwrap_or_else(|| {
                    text.char_indices()
                        .nth(error.marker().index())
                        .map_or(text.len(), |(i, _)| i)
                });
            let message = error.info();
            if message.contains("recursion limit") || message.contains("nesting") {
                LoadError::TooDeep {
                    span: Span::new(id, offset, offset),
                }
            } else {
                LoadError::Syntax { offset, message }
            }
        })?;
        let range = span.byte_range().unwrap_or(0..0);
        loader.event(event, Span::new(id, base + range.start, base + range.end))?;
    }
    Ok(loader.documents)
}

/// The bytes of a scalar's text (what an alias to it repeats).
fn scalar_bytes(node: &Raw<'_>) -> usize {
    node.scalar().map_or(0, str::len)
}

struct Loader<'a> {
    limits: Limits,
    /// Open containers: the node, its anchor, and a set of its keys so far.
    stack: Vec<Open<'a>>,
    /// Finished anchored nodes, with how many values and bytes of text each
    /// expands to.
    anchors: HashMap<usize, Anchored<'a>>,
    /// Anchors of containers still open: an alias to one is recursive.
    open_anchors: Vec<usize>,
    nodes: usize,
    /// Values of the document now read, outside the elements of its root's
    /// `items`.
    document_nodes: usize,
    /// Within an element of the root's `items`: the stack depth from which
    /// a value is the element's, and the element's values so far.
    item: Option<(usize, usize)>,
    aliased: usize,
    /// Bytes of scalar text so far, aliases expanded.
    bytes: usize,
    aliased_bytes: usize,
    documents: Vec<Raw<'a>>,
}

struct Anchored<'a> {
    node: Raw<'a>,
    nodes: usize,
    bytes: usize,
}

struct Open<'a> {
    node: Raw<'a>,
    anchor: usize,
    /// `nodes` and `bytes` when the container opened, to size its anchor.
    nodes_before: usize,
    bytes_before: usize,
    pending_key: Option<Raw<'a>>,
    keys: HashMap<String, Span>,
}

impl<'a> Loader<'a> {
    fn event(&mut self, event: Event<'a>, span: Span) -> Result<(), LoadError> {
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.count(1, span)?;
                self.bytes = self.bytes.saturating_add(text.len());
                let node = Raw {
                    span,
                    tag: tag.map(|t| Box::new(t.into_owned())),
                    body: Body::Scalar(text, style),
                };
                if anchor != 0 {
                    let bytes = scalar_bytes(&node);
                    self.anchors.insert(
                        anchor,
                        Anchored {
                            node: node.clone(),
                            nodes: 1,
                            bytes,
                        },
                    );
                }
                self.finish(node)
            }
            Event::SequenceStart(_, anchor, tag) => {
                self.open(span, anchor, tag, Body::Seq(Vec::new()))
            }
            Event::MappingStart(_, anchor, tag) => {
                self.open(span, anchor, tag, Body::Map(Vec::new()))
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let open = self.stack.pop().expect("the parser balances containers");
                let mut node = open.node;
                // A 64 MiB package holds millions of nodes: no spare capacity.
                match &mut node.body {
                    Body::Seq(items) => items.shrink_to_fit(),
                    Body::Map(entries) => entries.shrink_to_fit(),
                    Body::Scalar(..) => {}
                }
                node.span.end = span.end.max(node.span.start);
                if open.anchor != 0 {
                    self.open_anchors.retain(|a| *a != open.anchor);
                    let anchored = Anchored {
                        node: node.clone(),
                        nodes: self.nodes - open.nodes_before,
                        bytes: self.bytes - open.bytes_before,
                    };
                    self.anchors.insert(open.anchor, anchored);
                }
                self.finish(node)
            }
            Event::Alias(anchor) => {
                if self.open_anchors.contains(&anchor) {
                    return Err(LoadError::RecursiveAlias { span });
                }
                let Some(anchored) = self.anchors.get(&anchor) else {
                    return Err(LoadError::Syntax {
                        offset: span.start,
                        message: "an alias names an anchor that is not defined before it"
                            .to_owned(),
                    });
                };
                let (size, bytes) = (anchored.nodes, anchored.bytes);
                self.aliased = self.aliased.saturating_add(size);
                if self.aliased > self.limits.aliased {
                    return Err(LoadError::TooManyNodes {
                        span,
                        limit: self.limits.aliased,
                    });
                }
                self.aliased_bytes = self.aliased_bytes.saturating_add(bytes);
                if self.aliased_bytes > self.limits.aliased_bytes {
                    return Err(LoadError::TooManyBytes {
                        span,
                        limit: self.limits.aliased_bytes,
                    });
                }
                self.bytes = self.bytes.saturating_add(bytes);
                let mut node = anchored.node.clone();
                self.count(size, span)?;
                node.span = span;
                self.finish(node)
            }
            Event::DocumentStart(..) => {
                if self.documents.len() == self.limits.documents {
                    return Err(LoadError::TooManyDocuments {
                        span,
                        limit: self.limits.documents,
                    });
                }
                self.document_nodes = 0;
                self.item = None;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn count(&mut self, nodes: usize, span: Span) -> Result<(), LoadError> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > self.limits.nodes {
            return Err(LoadError::TooManyNodes {
                span,
                limit: self.limits.nodes,
            });
        }
        let object = match &mut self.item {
            Some((depth, values)) if self.stack.len() >= *depth => values,
            _ => &mut self.document_nodes,
        };
        *object = object.saturating_add(nodes);
        if *object > self.limits.object_nodes {
            return Err(LoadError::TooLargeObject {
                span,
                limit: self.limits.object_nodes,
            });
        }
        Ok(())
    }

    /// Whether the next value is an element of the root's `items` list.
    fn at_item(&self) -> bool {
        let [root, list] = self.stack.as_slice() else {
            return false;
        };
        matches!(list.node.body, Body::Seq(_))
            && root.pending_key.as_ref().and_then(Raw::scalar) == Some("items")
    }

    fn open(
        &mut self,
        span: Span,
        anchor: usize,
        tag: Option<Cow<'a, Tag>>,
        body: Body<'a>,
    ) -> Result<(), LoadError> {
        if self.at_item() {
            self.item = Some((self.stack.len(), 0));
        }
        self.count(1, span)?;
        if self.stack.len() >= self.limits.depth {
            return Err(LoadError::TooDeep { span });
        }
        if anchor != 0 {
            self.open_anchors.push(anchor);
        }
        self.stack.push(Open {
            node: Raw {
                span,
                tag: tag.map(|t| Box::new(t.into_owned())),
                body,
            },
            anchor,
            nodes_before: self.nodes - 1,
            bytes_before: self.bytes,
            pending_key: None,
            keys: HashMap::new(),
        });
        Ok(())
    }

    /// Places a finished node in its parent, or ends a document with it.
    fn finish(&mut self, node: Raw<'a>) -> Result<(), LoadError> {
        let Some(parent) = self.stack.last_mut() else {
            self.documents.push(node);
            return Ok(());
        };
        match &mut parent.node.body {
            Body::Seq(items) => items.push(node),
            Body::Map(entries) => match parent.pending_key.take() {
                None => {
                    if let Some(identity) = scalar::key_identity(&node) {
                        if let Some(first) = parent.keys.get(&identity) {
                            return Err(LoadError::DuplicateKey {
                                key: node.scalar().unwrap_or_default().to_owned(),
                                first: *first,
                                again: node.span,
                            });
                        }
                        parent.keys.insert(identity, node.span);
                    }
                    parent.pending_key = Some(node);
                }
                Some(key) => entries.push((key, node)),
            },
            Body::Scalar(..) => unreachable!("only containers are opened"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
