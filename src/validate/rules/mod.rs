pub fn check(_: &crate::spec::Spec, _: &crate::tree::Node, _: &crate::source::Sources) -> Vec<crate::diagnostic::Diagnostic> { vec![] }
