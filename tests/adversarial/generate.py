#!/usr/bin/env python3
"""Writes the adversarial corpus: one input file per case, and EXPECTED, a
table of `file <TAB> command <TAB> exit <TAB> words` (words separated by
` ;; `, each of which must appear in stdout or stderr). Run it from this
directory after changing a case; tests/adversarial.rs runs every case with a
time and memory limit. Files not written here (fuzz-*) are inputs the fuzzers
found; their rows are at the end of this script."""

GOOD = 'name = "demo"\nimage = "ghcr.io/acme/train:1.4"\nscript = "/app/train.py"\n'
GOOD_YAML = 'name: demo\nimage: ghcr.io/acme/train:1.4\nscript: /app/train.py\n'
FC = ("functionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  metadata:\n"
      "    name: demo\n    annotations: {config.kubernetes.io/local-config: 'true'}\n"
      "  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}\n")
RL = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

cases = []

def case(name, content, command, exit, *words):
    data = content.encode() if isinstance(content, str) else content
    with open(name, "wb") as f:
        f.write(data)
    cases.append((name, command, exit, words))

def fn_items(name, items, *words, exit=0):
    case(name, RL + "items:\n" + items + FC, "fn", exit, *words)

# 1. fn passes items through as they came in.
fn_items("fn-octal.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    mode: 0644\n    hex: 0x1F\n    o: 0o17\n", "mode: 0644", "hex: 0x1F", "o: 0o17")
fn_items("fn-binary.rl", "- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  data:\n    k: !!binary aGVsbG8=\n", "k: !!binary aGVsbG8=")
fn_items("fn-bigint.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    n: 123456789012345678901234567890\n", "n: 123456789012345678901234567890")
fn_items("fn-yaml11-words.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    a: yes\n    b: off\n    c: ~\n    d: 1_000\n    e: 1:30\n", "a: yes", "b: off", "c: ~", "d: 1_000", "e: 1:30")
fn_items("fn-custom-tags.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    a: !local x\n    b: !!timestamp 2001-12-14\n", "a: !local x", "b: !!timestamp 2001-12-14")
fn_items("fn-literal.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    script: |\n      #!/bin/sh\n        echo 'a: b' # not a comment\n", "script: |", "echo 'a: b' # not a comment")
fn_items("fn-quoted.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {a: '010', b: \"tab\\there\", c: 'it''s'}\n", "a: '010'", 'b: "tab\\there"', "c: 'it''s'")
fn_items("fn-anchors.rl", "- &cm\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {a: '1'}\n", "name: c", "a: '1'")
fn_items("fn-float-text.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {a: 1.0, b: 1e3, c: .5}\n", "a: 1.0", "b: 1e3", "c: .5")
fn_items("fn-control-chars.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {a: \"\\x1b[31m\", b: \"\\u202e\"}\n", 'a: "\\x1b[31m"')

# 2. Malformed ResourceLists: always one ResourceList back, with an error.
case("rl-empty.rl", "", "fn", 1, "kind: ResourceList", "the input is empty")
case("rl-not-mapping.rl", "- a\n- b\n", "fn", 1, "kind: ResourceList", "not a ResourceList")
case("rl-wrong-kind.rl", "apiVersion: v1\nkind: List\nitems: []\n", "fn", 1, "kind: ResourceList", "expected apiVersion")
case("rl-items-not-list.rl", RL + "items: {a: 1}\n" + FC, "fn", 1, "`items` of the ResourceList is not a list")
case("rl-item-scalar.rl", RL + "items:\n- 3\n" + FC, "fn", 1, "items[0] is not a resource")
case("rl-no-config.rl", RL + "items: []\n", "fn", 1, "has no functionConfig")
case("rl-syntax.rl", RL + "items: [\n", "fn", 1, "kind: ResourceList", "invalid YAML")
case("rl-two-docs.rl", RL + "items: []\n---\n" + RL, "fn", 1, "kind: ResourceList")
case("rl-invalid-utf8.rl", (RL + "items: []\n").encode() + b"x: \xff\xfe\n", "fn", 1, "kind: ResourceList", "not valid UTF-8")
case("rl-alias-bomb.rl", RL + "items: []\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n" + FC, "fn", 1, "kind: ResourceList", "once its aliases are expanded")
case("rl-deep.rl", RL + "items:\n- " + "[" * 300 + "]" * 300 + "\n" + FC, "fn", 1, "kind: ResourceList", "nests deeper")
case("rl-recursive-alias.rl", RL + "items: &x [*x]\n" + FC, "fn", 1, "kind: ResourceList", "alias refers to the anchor that contains it")
case("rl-duplicate-key.rl", RL + "items: []\nitems: []\n" + FC, "fn", 1, "kind: ResourceList", "duplicate key `items`")
case("rl-bad-config.rl", RL + "items: []\nfunctionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  metadata: {name: x}\n  spec: {image: 'a:1', script: t.py, replicas: 010}\n", "fn", 1, "kind: ResourceList", "leading zero")
case("rl-config-tag.rl", RL + "items: []\nfunctionConfig: !!binary aGk=\n", "fn", 1, "kind: ResourceList", "has no meaning in a spec")
case("rl-template-bomb.rl", RL + "items: []\nfunctionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  metadata: {name: x}\n  spec:\n    image: 'a:1'\n    script: t.py\n    args: [\"{{ range(100000) | join('x' * 100000) | length }}\"]\n", "fn", 1, "kind: ResourceList", "multiplies numbers only")

# 3. Templates: bounded work and memory, no stack overflow.
def tmpl(name, template, *words, code=1):
    case(name, GOOD + "args = [" + template + "]\n", "check", code, *words)
tmpl("tmpl-join-bomb.toml", "\"{{ range(100000) | join('x' * 100000) | length }}\"", "multiplies numbers only")
tmpl("tmpl-join-range.toml", "\"{{ range(100000) | join('-') }}\"", "`range` would make more than")
tmpl("tmpl-join-long.toml", "\"{{ range(10000) | join(vars.sep) }}\"]\n[vars]\nsep = \"" + "x" * 2000 + "\"\n#", "`join` would be longer than 256 KiB")
tmpl("tmpl-format-width.toml", "\"{{ '%200000000s' | format(1) }}\"", "`format` would be longer")
tmpl("tmpl-format-star.toml", "\"{{ '%*s' | format(100000000, 1) }}\"", "`format` would be longer")
tmpl("tmpl-replace.toml", "\"{{ vars.s | replace('a', vars.s) | replace('a', vars.s) }}\"]\n[vars]\ns = \"" + "a" * 1000 + "\"\n#", "`replace` would be longer")
tmpl("tmpl-replace-empty.toml", "\"{{ vars.s | replace('', vars.s) }}\"]\n[vars]\ns = \"" + "a" * 1000 + "\"\n#", "`replace` would be longer")
tmpl("tmpl-indent.toml", "\"{{ 'a\\nb' | indent(100000000) }}\"", "`indent` would be longer")
tmpl("tmpl-slice.toml", "\"{{ range(100) | slice(100000000) }}\"", "`slice` would make more than 10000 items")
tmpl("tmpl-batch.toml", "\"{{ range(100) | batch(100000000, 'x') | list }}\"", "`batch` would make more than 10000 items")
tmpl("tmpl-repeat-text.toml", "\"{{ 'x' * 100000000 }}\"", "multiplies numbers only")
tmpl("tmpl-repeat-list.toml", "\"{{ [1] * 100000000 }}\"", "multiplies numbers only")
tmpl("tmpl-set.toml", "\"{% set a = name %}{{ a }}\"", "`{% set %}` is not available")
tmpl("tmpl-filter-block.toml", "\"{% filter upper %}{% for i in range(10000) %}{{ name }}{% endfor %}{% endfilter %}\"", "`{% filter %}` is not available")
tmpl("tmpl-recursive.toml", "\"{% for x in [1] recursive %}{{ loop([x]) }}{% endfor %}\"", "recursive loops are not available")
tmpl("tmpl-output-loop.toml", "\"{% for i in range(5000) %}{{ vars.s }}{% endfor %}\"]\n[vars]\ns = \"" + "y" * 100 + "\"\n#", "renders to more than 256 KiB")
tmpl("tmpl-fuel.toml", "\"{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}\"", "ran too long")
tmpl("tmpl-unary-minus.toml", "\"{{ " + "-" * 19400 + "1 }}\"", "parts")
tmpl("tmpl-not-chain.toml", "\"{{ " + "not " * 9000 + "true }}\"", "parts")
tmpl("tmpl-string-chain.toml", "\"{{ name" + "|string" * 5000 + " }}\"", "parts")
tmpl("tmpl-attr-chain.toml", "\"{{ vars" + ".a" * 20000 + " }}\"", "parts")
tmpl("tmpl-plus-chain.toml", "\"{{ 1" + " + 1" * 10000 + " }}\"", "parts")
tmpl("tmpl-concat-chain.toml", "\"{{ name" + " ~ name" * 100 + " }}\"", "joins values with `~` or `+` 100 times")
tmpl("tmpl-parens.toml", "\"{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}\"", "parts")
tmpl("tmpl-too-long.toml", "\"{{ name }}" + "x" * 70000 + "\"", "KiB long")
strings = ", ".join("\"{% for i in range(9000) %}{% endfor %}\"" for _ in range(2000))
tmpl("tmpl-many-strings.toml", strings, "together do more work than")
case("tmpl-ok.toml", GOOD + "replicas = 2\nargs = [\"{{ name }}-{{ replicas * 2 }}\", \"{{ (replicas + 1) * 3 }}\"]\n", "build", 0, "demo-4", '- "9"')

# 4. YAML: tags, numbers, duplicates, aliases, nesting, directives.
def yaml_spec(name, extra, code, *words):
    case(name, GOOD_YAML + extra, "check", code, *words)
yaml_spec("yaml-leading-zero.yaml", "replicas: 010\n", 1, "leading zero", "write `10` for 10, or `8`")
yaml_spec("yaml-leading-zero-9.yaml", "replicas: 09\n", 1, "leading zero", "write `9`")
yaml_spec("yaml-hex.yaml", "replicas: 0x2\n", 0, "")
yaml_spec("yaml-binary-tag.yaml", "args: [!!binary aGk=]\n", 1, "the tag `!!binary` has no meaning")
yaml_spec("yaml-custom-tag.yaml", "args: [!shell ls]\n", 1, "the tag `!shell` has no meaning")
yaml_spec("yaml-int-tag-text.yaml", "replicas: !!int abc\n", 1, "tagged `!!int`")
yaml_spec("yaml-str-tag.yaml", "args: [!!str 010]\n", 0, "")
yaml_spec("yaml-inf.yaml", "resources: {cpu: .inf}\n", 1, "is not a number a spec can use")
yaml_spec("yaml-huge-float.yaml", "resources: {cpu: 1e999}\n", 1, "is not a number a spec can use")
yaml_spec("yaml-int64-overflow.yaml", "replicas: 99999999999999999999\n", 1, "must be at most 2147483647")
yaml_spec("yaml-int-min.yaml", "replicas: -9223372036854775808\n", 1, "replicas")
yaml_spec("yaml-duplicate.yaml", "name: again\n", 1, "duplicate key `name`")
yaml_spec("yaml-duplicate-quoted.yaml", "\"name\": again\n", 1, "duplicate key `name`")
yaml_spec("yaml-complex-key.yaml", "? [a, b]\n: c\n", 1, "a mapping key is itself a list or mapping")
yaml_spec("yaml-alias-bomb.yaml", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n", 1, "expands to far more than any spec")
yaml_spec("yaml-recursive-alias.yaml", "vars: &v {a: *v}\n", 1, "alias refers to the anchor that contains it")
yaml_spec("yaml-deep-flow.yaml", "vars: " + "[" * 1000 + "]" * 1000 + "\n", 1, "nests deeper than 12 levels")
yaml_spec("yaml-two-docs.yaml", "---\nname: x\n", 1, "more than one YAML document")
case("yaml-directive.train", "%YAML 1.2\n---\n" + GOOD_YAML, "check", 0, "")
case("yaml-json.train", '{"name": "demo", "image": "ghcr.io/acme/train:1.4", "script": "/app/train.py"}\n', "check", 0, "")
case("yaml-json-bad.train", '{"name": "demo", "image": "ghcr.io/acme/train:1.4", "script": "/app/train.py", "replicas": "x"}\n', "check", 1, "replicas")
yaml_spec("yaml-bom.yaml", "", 0, "")
cases[-1] = ("yaml-bom.yaml", "check", 0, ("",))
with open("yaml-bom.yaml", "wb") as f:
    f.write(b"\xef\xbb\xbf" + GOOD_YAML.encode())
case("yaml-crlf.yaml", GOOD_YAML.replace("\n", "\r\n"), "check", 0, "")
case("yaml-invalid-utf8.yaml", GOOD_YAML.encode() + b"args: [\"\xc3\x28\"]\n", "check", 1, "is not valid UTF-8")

# 5. TOML: duplicates, nesting, integers, datetimes.
case("toml-duplicate.toml", GOOD + 'name = "again"\n', "check", 1, "`name` is set twice")
case("toml-duplicate-table.toml", GOOD + "[resources]\ncpu = 1\n[resources]\ncpu = 2\n", "check", 1, "trainc::parse::toml")
case("toml-deep.toml", GOOD + "vars = " + "[" * 1000 + "]" * 1000 + "\n", "check", 1, "trainc::parse::too_deep")
case("toml-int-past-i64.toml", GOOD + "replicas = 9223372036854775808\n", "check", 1, "does not fit in 64 bits")
case("toml-int32-past.toml", GOOD + "replicas = 2147483648\n", "check", 1, "must be at most 2147483647")
case("toml-bom.toml", b"\xef\xbb\xbf" + GOOD.encode(), "check", 0, "")
case("toml-crlf.toml", GOOD.replace("\n", "\r\n"), "check", 0, "")
case("toml-invalid-utf8.toml", GOOD.encode() + b'args = ["\xff"]\n', "check", 1, "is not valid UTF-8")
case("toml-datetime.toml", GOOD + "vars = { when = 1979-05-27 }\n", "check", 1, "trainc::parse::unsupported_value")

# 6. Values that would fail at run time.
case("run-nul-arg.toml", GOOD + 'args = ["a\\u0000b"]\n', "build", 1, "a NUL character")
case("run-esc-env.toml", GOOD + 'env = { MODE = "\\u001b[2J" }\n', "build", 1, "control character U+001B")
case("run-newline-path.toml", GOOD + '[volumes.data]\nmountPath = "/data\\n/etc"\nemptyDir = true\n', "build", 1, "the control character `\\n`")
case("run-toleration-value.toml", GOOD + '[[scheduling.tolerations]]\nkey = "gpu"\noperator = "Equal"\nvalue = "not a label value!"\neffect = "NoSchedule"\n', "build", 1, "toleration value")
big = "x" * (256 * 1024 - 40)
case("run-annotations-near-limit.toml", GOOD + '[annotations]\n"example.com/a" = "' + big + '"\n', "build", 1, "with the", "bytes trainc adds")
case("run-quantity-huge.toml", GOOD + '[resources]\ncpu = "1e99999999999999999999"\n', "build", 1, "far larger than any resource")
case("run-quantity-ok.toml", GOOD + '[resources]\ncpu = "1e3"\nmemory = "8Ei"\n', "check", 0, "")

# 7. Terminal safety: what a person reads is escaped.
case("term-newline-key.yaml", GOOD_YAML + '"bogus\\n  × forged.toml:1:1: error: forged": 1\n', "check", 1, "bogus\\n")
case("term-cr-c1-bidi.toml", GOOD + 'image2 = "a\rb\u009b\u202e"\n', "check", 1, "invalid TOML")
case("term-bidi-value.yaml", GOOD_YAML + 'args: ["abc\u202edef"]\nbogus: 1\n', "check", 1, "unknown key `bogus`")
case("term-esc-value.toml", GOOD + 'replicas = "\\u001b[31mred"\n', "check", 1, "\\u{1b}")
case("term-whole-file-span.yaml", "- a\n" * 2000, "check", 1, "trainc::parse::not_a_table")

# 8. Size limits at the edges.
def sized(name, total, code, *words):
    filler = "# " + "x" * 98 + "\n"
    body = GOOD
    lines = (total - len(body)) // len(filler)
    body += filler * lines
    body += "#" + "x" * (total - len(body) - 2) + "\n" if total - len(body) >= 2 else ""
    body = body + " " * (total - len(body))
    assert len(body) == total, (name, len(body), total)
    case(name, body, "check", code, *words)
sized("size-at-limit.toml", 4 * 1024 * 1024, 0, "")
sized("size-over-limit.toml", 4 * 1024 * 1024 + 1, 1, "is larger than 4 MiB")

# 9. Look-alike names and many problems.
case("lookalike-name.toml", 'name = "dеmo"\nimage = "ghcr.io/acme/train:1.4"\nscript = "/app/train.py"\n', "check", 1, "trainc::name::invalid")
case("lookalike-key.toml", GOOD + 'replіcas = 2\n', "check", 1, "invalid unquoted key")
case("lookalike-key.yaml", GOOD_YAML + 'replіcas: 2\n', "check", 1, "unknown key `replіcas`")
many = GOOD + "".join(f"unknownkey{i} = {i}\n" for i in range(1000))
case("many-unknown-keys.toml", many, "check", 1, "950 more problems in many-unknown-keys.toml are not shown")

# Inputs the fuzzers found (kept as they were found).
cases.append(("fuzz-fn-null-key.rl", "fn", 1, ("kind: ResourceList", "~: '24'")))
cases.append(("fuzz-fn-tagged-empty.rl", "fn", 1, ("kind: ResourceList",)))
# A BOM inside a template tag: the text check sliced a string mid-character.
cases.append(("fuzz-spec-template-bom.toml", "check", 1, ("template syntax error",)))

with open("EXPECTED", "w") as f:
    f.write("# file\tcommand\texit\twords (` ;; `-separated; each must appear in stdout or stderr)\n")
    for name, command, exit, words in cases:
        f.write(f"{name}\t{command}\t{exit}\t{' ;; '.join(w for w in words if w)}\n")
print(len(cases), "cases")
