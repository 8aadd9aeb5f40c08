#!/usr/bin/env python3
"""Writes the adversarial corpus: one input file per case, and CASES.jsonl,
one JSON object per line: a case (`name`, `args`, `exit`, `words`; optionally
`stdin`, `cwd`, `invoked_as`, `stdout: "full"`, `output_dir`, `absent`: words
that must not appear, `max_stdout`: the most bytes stdout may hold, `env`:
variables to set, `@WORLD@` the scratch copy's path, `unchanged`: paths the
case must leave as they were) or a setup step
(`setup`: `fifo`, `link`, `sparse`, `copy`, `dir`, `repeat`: `head`, then
`text` `times` times (with `numbered`, `{i}` in it counting from 0), then
`tail`, for inputs too large to keep) that tests/adversarial.rs
applies in a scratch copy before running the cases (FIFOs, links out of the
tree and names with control characters do not belong in a repository).
Each word must appear in stdout or stderr. Run it from this directory after
changing a case. Files not written here (fuzz-*) are inputs the fuzzers
found; their rows are at the end of this script."""

import json
import os

GOOD = 'name = "demo"\nimage = "ghcr.io/acme/train:1.4"\nscript = "/app/train.py"\n'
GOOD_YAML = 'name: demo\nimage: ghcr.io/acme/train:1.4\nscript: /app/train.py\n'
FC = ("functionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  metadata:\n"
      "    name: demo\n    annotations: {config.kubernetes.io/local-config: 'true'}\n"
      "  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}\n")
RL = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

entries = []
RUN = ["run", "--python", "runenv/python3", "--timeout", "20s"]

def write(name, content):
    data = content.encode() if isinstance(content, str) else content
    if os.path.dirname(name):
        os.makedirs(os.path.dirname(name), exist_ok=True)
    with open(name, "wb") as f:
        f.write(data)

def case(name, content, command, exit, *words, args=None, cwd=None, stdout=None,
         output_dir=None, invoked_as=None, absent=None, max_stdout=None, env=None,
         unchanged=None):
    """A case whose input is the file `name` (written unless `content` is None).
    `command` is `fn` (the file on stdin), or a trainc command run on the file;
    `args` replaces the command line, `FILE` standing for the file's path
    relative to `cwd`."""
    if content is not None:
        write(name, content)
    path = os.path.relpath(name, cwd) if cwd else name
    entry = {"name": name}
    if command == "fn":
        entry["args"] = ["fn"]
        entry["stdin"] = name
    elif args is not None:
        entry["args"] = [path if a == "FILE" else a for a in args]
    else:
        entry["args"] = [command, path]
    for key, value in (("cwd", cwd), ("stdout", stdout), ("output_dir", output_dir),
                       ("invoked_as", invoked_as), ("absent", absent), ("max_stdout", max_stdout),
                       ("env", env), ("unchanged", unchanged)):
        if value is not None:
            entry[key] = value
    entry["exit"] = exit
    entry["words"] = [w for w in words if w]
    entries.append(entry)

def setup(step, path, **fields):
    entries.append({"setup": step, "path": path, **fields})

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
case("yaml-bom.yaml", b"\xef\xbb\xbf" + GOOD_YAML.encode(), "check", 0)
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

# 10. `[code]` reads only its own tree: no `..` out, no link out, no FIFO,
# no kernel file; the same through `fn` and the kustomize plugin.
CODE_SPEC = 'name = "demo"\nimage = "ghcr.io/acme/train:1.4"\n[code]\nfiles = [%s]\n'
def code_spec(files):
    return CODE_SPEC % ", ".join('"%s"' % f for f in files)
write("code/train.py", "print('train')\n")
write("code/lib/utils.py", "SEED = 1\n")
ESCAPE = "../../../../../../../../../../etc/passwd"
for command in ("check", "build", "describe"):
    case("code/escape-%s.toml" % command, code_spec(["train.py", ESCAPE]), command, 1,
         "cannot ship `%s`: it is outside the code root" % ESCAPE, "the spec's directory", cwd="code")
case("code/escape-from-outside.toml", code_spec(["train.py", ESCAPE]), "build", 1,
     "outside the code root")
case("code/environ.toml", code_spec(["train.py", "../../../../../../../../../../proc/self/environ"]),
     "build", 1, "outside the code root", cwd="code")
case("code/environ-root.toml", code_spec(["../../../../../../../../../../proc/self/environ"]),
     None, 1, "a file of the kernel", args=["build", "--code-root", "/", "FILE"], cwd="code")
case("code/device-root.toml", code_spec(["../../../../../../../../../../dev/zero"]),
     None, 1, "a file of the kernel", args=["check", "--code-root", "/", "FILE"], cwd="code")
setup("link", "code/passwd.py", target="/etc/passwd")
case("code/link-out.toml", code_spec(["train.py", "passwd.py"]), "build", 1,
     "cannot ship `passwd.py`: it is a link to a file outside the code root", cwd="code")
setup("link", "code/etc", target="/etc")
case("code/dir-link-out.toml", code_spec(["etc/passwd"]), "check", 1, "outside the code root", cwd="code")
setup("link", "code/alias.py", target="train.py")
case("code/link-in.toml", code_spec(["alias.py", "lib/utils.py"]), "build", 0,
     "alias.py: |", "print('train')", cwd="code")
setup("fifo", "code/fifo.py")
for command in ("check", "build", "describe"):
    case("code/fifo-%s.toml" % command, code_spec(["fifo.py"]), command, 1,
         "cannot ship `fifo.py`: it is a FIFO (named pipe), not a regular file", cwd="code")
case("code/directory.toml", code_spec(["lib"]), "check", 1, "a directory", cwd="code")
write("code/nul.py", "print(1)\0\n")
case("code/nul.toml", code_spec(["nul.py"]), "check", 1, "it holds a NUL byte", cwd="code")
case("code/many.toml", code_spec(["f%d.py" % i for i in range(1001)]), "check", 1,
     "lists 1001 files; at most 1000", cwd="code")
case("code/sub/up.toml", code_spec(["../train.py"]), "check", 1,
     "the spec's directory `sub`", "--code-root", cwd="code")
case("code/root-is-a-file.toml", code_spec(["train.py"]), None, 1, "cannot read the code root `train.py`: it is not a directory",
     args=["check", "--code-root", "train.py", "FILE"], cwd="code")
case("code/sub/up-root.toml", code_spec(["../train.py"]), None, 0,
     args=["build", "--code-root", ".", "FILE"], cwd="code")
case("code/sub/up-overlay-base.toml", 'name = "demo"\nimage = "ghcr.io/acme/train:1.4"\nscript = "/app/t.py"\n',
     None, 1, "outside the code root",
     args=["build", "FILE", "-O", "sub/escape-overlay.toml"], cwd="code")
write("code/sub/escape-overlay.toml", "unset = [\"script\"]\n[code]\nfiles = [\"../../../../../../../../../etc/passwd\"]\n")
CODE_FC = ("functionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  metadata: {name: demo}\n"
           "  spec:\n    image: 'ghcr.io/acme/train:1.4'\n    code: {files: [train.py, '%s']}\n")
case("code/escape.rl", RL + "items: []\n" + CODE_FC % ESCAPE, None, 1,
     "kind: ResourceList", "outside the code root", "working directory",
     args=["fn"], cwd="code")
entries[-1]["stdin"] = "code/escape.rl"
case("code/link-out.rl", RL + "items: []\n" + CODE_FC % "passwd.py", None, 1,
     "a link to a file outside the code root", args=["fn"], cwd="code")
entries[-1]["stdin"] = "code/link-out.rl"
case("code/fifo.rl", RL + "items: []\n" + CODE_FC % "fifo.py", None, 1, "FIFO", args=["fn"], cwd="code")
entries[-1]["stdin"] = "code/fifo.rl"
PLUGIN = ("apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata: {name: demo}\n"
          "spec:\n  image: 'ghcr.io/acme/train:1.4'\n  code: {files: [train.py, '%s']}\n")
case("code/escape-plugin.yaml", PLUGIN % ESCAPE, None, 1, "outside the code root",
     args=["FILE"], invoked_as="TrainSpec", cwd="code")
case("code/fifo-plugin.yaml", PLUGIN % "fifo.py", None, 1, "FIFO",
     args=["FILE"], invoked_as="TrainSpec", cwd="code")

# 11. Aliases are budgeted in bytes as well as values, in every reader; a
# 1 MiB input within the budgets stays within 256 MiB.
def alias_list(anchor_value, count, indent=""):
    return "&a " + anchor_value + "\n" + indent + "b: [" + ", ".join(["*a"] * count) + "]\n"
LONG = "x" * 50000
yaml_spec("alias-bytes.yaml", "vars:\n  a: " + alias_list(LONG, 8000, "  "), 1,
          "the YAML's aliases repeat more than 1 MiB of text")
fn_items("alias-bytes.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    a: "
         + alias_list(LONG, 8000, "    "), "the YAML's aliases repeat more than 4 MiB", exit=1)
MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: "
case("alias-bytes-verify.yaml", MANIFEST + alias_list(LONG, 8000, "  "), "verify", 1,
     "the YAML's aliases repeat more than 4 MiB")
case("alias-bytes-import.yaml", MANIFEST + alias_list(LONG, 8000, "  "), "import", 1,
     "the YAML's aliases repeat more than 4 MiB")
def padded(text, total):
    """`text` and a comment, `total` bytes in all."""
    pad = total - len(text) - 3
    return text + "#" + "p" * pad + "\n\n"
MIB = 1024 * 1024
# Just within each budget, in a 1 MiB input.
yaml_spec("alias-within-spec.yaml", padded("vars:\n  a: &a " + "y" * 100000 + "\nargs: [" + ", ".join(["*a"] * 10) + "]\n",
                                          MIB - len(GOOD_YAML)), 0)
case("alias-within.rl", padded(RL + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    a: "
     + alias_list("y" * 100000, 41, "    ") + FC, MIB), "fn", 0, "kind: ConfigMap")

case("alias-within-verify.yaml", padded(MANIFEST + alias_list("y" * 100000, 41, "  "), MIB), "verify", 1,
     "must be a string, found a list")
# 499 aliases of 1,000 values each, spread over five objects (each object
# may hold at most 500,000 values).
case("alias-nodes-within.rl", RL + "items:\n- apiVersion: v1\n  kind: List\n  items: &a [" + ",".join(["{}"] * 1000)
     + "]\n  more: [" + ",".join(["*a"] * 99) + "]\n"
     + "".join("- {apiVersion: v1, kind: List, items: [" + ",".join(["*a"] * 100) + "]}\n" for _ in range(4))
     + FC, "fn", 0, "kind: ResourceList")

BOMB = ("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
        "g: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n")
# An alias bomb inside the origin annotation that fn reads of every item.
fn_items("fn-origin-bomb.rl", "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n    annotations:\n"
         "      config.kubernetes.io/origin: " + json.dumps(BOMB) + "\n", "kind: ConfigMap")
# And in a manifest already in an output directory, which build reads to see whose it is.
write("out-bomb/x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" + BOMB)
case("out-bomb.toml", GOOD, None, 2, "`x.yaml`", args=["build", "--output-dir", "out-bomb", "FILE"],
     output_dir="out-bomb")

# 12. Every pod of a huge job is not listed; the count does not overflow.
case("replicas-max.toml", GOOD + "replicas = 2147483647\nnProcPerNode = 8\n", None, 0,
     "pods: 2147483647", "more pods", "demo-worker-2147483645", args=["describe", "--pods", "FILE"])
case("replicas-max-job.toml", GOOD + 'target = "job"\nreplicas = 100000\nnProcPerNode = 8\n', None, 0,
     "pods: 100000", "more pods", args=["describe", "--pods", "FILE"])
case("replicas-max-trainjob.toml", GOOD + 'target = "trainjob"\nreplicas = 2147483647\nnProcPerNode = 8\n', None, 0,
     "more pods", args=["describe", "--pods", "FILE"])
case("replicas-max-elastic.toml", GOOD + 'replicas = "1:2147483647"\n', None, 0,
     "more pods", args=["describe", "--pods", "FILE"])
case("replicas-max-build.toml", GOOD + "replicas = 2147483647\nnProcPerNode = 8\n", None, 0,
     "replicas: 2147483646", args=["build", "--verify", "FILE"])

# 13. Templates: debug() is not available; every string's work counts.
tmpl("tmpl-debug.toml", ", ".join(['"{{ debug() }}"'] * 1000), "`debug` is not available")
tmpl("tmpl-debug-one.toml", '"{{ debug() }}"', "`debug` is not available")
VARS_BIG = "]\n[vars]\n" + "".join('v%d = "%s"\n' % (i, "z" * 300) for i in range(1000)) + "#"
tmpl("tmpl-many-vars.toml", ", ".join(['"{{ vars }}"'] * 1000) + VARS_BIG, "together")
tmpl("tmpl-many-over-cap.toml", ", ".join(['"{% for i in range(3000) %}{{ vars.s }}{% endfor %}"'] * 300)
     + ']\n[vars]\ns = "' + "q" * 100 + '"\n#', "renders to more than 256 KiB")

# 14. Every stage is linear: large inputs of each shape, within 2 s.
case("code/dup-names.toml", code_spec(["a/x.py"] * 60000), "check", 1, "at most 1000", cwd="code")
many_vars = "".join('k%d = %d\n' % (i, i) for i in range(30000))
case("overlay-many-keys.toml", GOOD + "[vars]\n" + many_vars, None, 1, "the overlay's var `k1` is not used",
     args=["check", "FILE", "-O", "overlay-many-keys-over.toml"])
write("overlay-many-keys-over.toml", "unset = [" + ", ".join('"vars.k%d"' % i for i in range(0, 30000, 2)) + "]\n[vars]\n"
      + "".join('k%d = %d\n' % (i, -i) for i in range(1, 30000, 2)))
case("volumes-many.toml", GOOD + "".join('[volumes.v%d]\nmountPath = "/m/v%d"\nemptyDir = true\n' % (i, i) for i in range(20000)),
     "check", 0)
def volumes_manifest(n):
    mounts = "".join("        - {name: v%d, mountPath: /m/v%d}\n" % (i, i) for i in range(n))
    volumes = "".join("      - {name: v%d, emptyDir: {}}\n" % i for i in range(n))
    return ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: demo}\nspec:\n  pytorchReplicaSpecs:\n"
            "    Master:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
            "          - name: pytorch\n            image: ghcr.io/acme/train:1.4\n            command: [python, /app/train.py]\n"
            "            volumeMounts:\n" + mounts.replace("        - ", "            - ") +
            "          volumes:\n" + volumes.replace("      - ", "          - "))
case("alias-within-import.yaml", padded(volumes_manifest(1).replace("command: [python, /app/train.py]",
     "command: [python, /app/train.py]\n            args: [&a " + "y" * 100000 + ", " + ", ".join(["*a"] * 41) + "]"), MIB),
     "import", 0, "args = [")
write("import-one.yaml", volumes_manifest(1))
case("import-volumes-many.yaml", volumes_manifest(5000), "import", 0, 'v4999 = { mountPath = "/m/v4999"')
setup("sparse", "out-huge/foreign.yaml", size=2 * 1024 ** 3)
case("out-huge.toml", GOOD, None, 2, "manifests trainc did not write", "`foreign.yaml`",
     args=["build", "--output-dir", "out-huge", "FILE"], output_dir="out-huge")
case("out-huge-force.toml", GOOD, None, 0,
     args=["build", "--force", "--output-dir", "out-huge", "FILE"])
setup("fifo", "out-fifo/pipe.yaml")
case("out-fifo.toml", GOOD, None, 2, "`pipe.yaml`", args=["build", "--output-dir", "out-fifo", "FILE"],
     output_dir="out-fifo")

# 15. Output that must mean what the input means.
fn_items("fn-nel.rl", '- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {nel: "a\\Nb", ls: "c\\Ld"}\n',
         'nel: "a\\x85b"', 'ls: "c\\u2028d"')
write("code/uni.py", "def f\u0941():\n    print('uni')\n")
case("code/launcher-unicode.toml", code_spec(["uni.py"]) + 'function = "uni.py:f\u0941"\n', "build", 0,
     'runpy.run_path("/trainc/code/uni.py")["f\\u0941"]()', cwd="code")
yaml_spec("yaml-key-int-and-text.yaml", 'labels:\n  "1": a\n  1: b\n', 1, "duplicate key `1`")
yaml_spec("yaml-key-bool-and-text.yaml", 'labels:\n  "true": a\n  true: b\n', 1, "duplicate key `true`")
case("script-newline.toml", 'name = "demo"\nimage = "ghcr.io/acme/train:1.4"\nscript = "/app/train.py\\n"\n',
     None, 1, "the control character `\\n`, which no path holds", args=["build", "--verify", "FILE"])
case("workingdir-newline.toml", GOOD + 'workingDir = "/app\\n"\n', None, 1, "which no path holds",
     args=["build", "--verify", "FILE"])
case("init-newline", None, None, 2, "control character", args=["init", "a\ninjected = 1\n.toml"])
case("init-esc", None, None, 2, "\\u{1b}", args=["init", "\x1b[31mred.toml"])

# 16. Writes: an error writing stdout is an error; output directories are
# all or nothing.
for name, args in (("stdout-full-build", ["build", "FILE"]), ("stdout-full-schema", ["schema"]),
                   ("stdout-full-init", ["init", "-"]), ("stdout-full-import", ["import", "FILE"]),
                   ("stdout-full-describe", ["describe", "FILE"]), ("stdout-full-completions", ["completions", "bash"]),
                   ("stdout-full-check-json", ["check", "--format", "json", "FILE"])):
    file = {"stdout-full-import": "import-one.yaml", "stdout-full-check-json": "tmpl-join-bomb.toml"}.get(name, "tmpl-ok.toml")
    case(name, None, None, 2, "cannot write", args=[file if a == "FILE" else a for a in args], stdout="full")
case("stdout-full-fn", None, None, 2, "cannot write", args=["fn"], stdout="full")
entries[-1]["stdin"] = "fn-octal.rl"
setup("dir", "out-dir/02-pytorchjob-demo.yaml")
case("out-dir.toml", GOOD + "[volumes.data]\nmountPath = \"/data\"\nsize = \"1Gi\"\n", None, 2,
     "nothing was written", args=["build", "--output-dir", "out-dir", "FILE"], output_dir="out-dir")
setup("dir", "out-import/b.toml")
case("out-import.yaml", volumes_manifest(1) + "---\n" + volumes_manifest(1).replace("name: demo}", "name: b}"),
     None, 2, "nothing was written", args=["import", "--force", "--output-dir", "out-import", "FILE"],
     output_dir="out-import")

# 17. Nothing raw reaches a terminal or a CI log.
BAD = GOOD + "replicas = 0\n"
write("bad.toml", BAD)
for name, shown in (("esc", "\x1b[31mred"), ("rlo", "a\u202eb"), ("gh", "x\n::error file=x::forged")):
    setup("copy", "names/%s%s.toml" % (name, shown), **{"from": "bad.toml"})
    for fmt in ("human", "github", "json", "sarif"):
        case("names/%s-%s" % (name, fmt), None, None, 1, "replicas",
             args=["check", "--format", fmt, "names/%s%s.toml" % (name, shown)])
case("fn-name-esc.rl", RL + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: \"\\e[31mred\\u202e\"\n"
     "    namespace: \"\\e]0;title\\a\"\n    annotations: {config.kubernetes.io/path: \"\\e[2Jp.yaml\"}\n"
     "  data: {a: 1}\n" + FC.replace("name: demo", "name: \"\\e[31mdemo\""), "fn", 1, "kind: ResourceList")
case("plugin-name-esc.yaml", 'apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: "\\e[31mdemo\\u202e"\n'
     '  namespace: "\\e]0;t\\a"\nspec: {image: "ghcr.io/acme/train:1.4", script: /app/train.py}\n',
     None, 1, "TrainSpec", args=["FILE"], invoked_as="TrainSpec")
case("describe-raw.toml", GOOD + 'args = ["a\u202eb", "c\u200bd"]\nenv = { HF_TOKEN = "hf_abcdefghijklmnopqrstuvwxyz" }\n'
     '[labels]\n"example.com/x" = "v"\n', "describe", 0, "HF_TOKEN", "\\u{202e}",
     absent=["hf_abcdefghijklmnopqrstuvwxyz"])

# 18. Diagnostics at the right place.
case("toml-dotted-deep.toml", GOOD + "\n\n" + "a." * 200000 + "b = 1\n", "check", 1,
     "trainc::parse::too_deep", "toml-dotted-deep.toml:6:")
case("snippet-replaced.toml", GOOD + 'args = ["\u202e\u202e", 3]\n', "check", 1,
     "snippet-replaced.toml:4:15", "[snippet-replaced.toml:4:15]")
case("snippet-wide.toml", GOOD + 'args = ["\u00e9\u00e9\u65e5\u672c", 3]\n', "check", 1,
     "snippet-wide.toml:4:17", "[snippet-wide.toml:4:17]")

# 19. Many claims and many ports: each volume's claim and mount, and each
# port's duplicate check, cost the same however many there are.
case("claims-many.toml", GOOD + "replicas = 2\n" + "".join(
     f'[volumes.v{i}]\nmountPath = "/m/v{i}"\nsize = "1Gi"\nstorageClass = "nfs"\n' for i in range(1000)),
     None, 0, "name: demo-v999", args=["build", "--verify", "FILE"])
case("ports-many.toml", GOOD + "[ports]\n" + "".join(f"p{i} = {30000 + i}\n" for i in range(4000)),
     None, 0, "containerPort: 33999", args=["build", "--verify", "FILE"])
case("ports-many-duplicate.toml", GOOD + "[ports]\n" + "".join(f"p{i} = {30000 + i % 4000}\n" for i in range(8000)),
     "check", 1, "port 30000 is exposed twice, as `p0` and `p4000`", "3950 more problems")

# A help that would write the input back says the rule when the input is long.
yaml_spec("yaml-leading-zero-long.yaml", "replicas: 0" + "0" * 5000 + "1\n", 1,
          "write it without the leading zeros")
case("toml-unquoted-long.toml", GOOD + "image2 = " + "x" * 5000 + "\n", "check", 1,
     "put text in double quotes")

# Inputs the fuzzers found (kept as they were found).
case("fuzz-fn-null-key.rl", None, "fn", 1, "kind: ResourceList", "~: '24'")
case("fuzz-fn-tagged-empty.rl", None, "fn", 1, "kind: ResourceList")
# A BOM inside a template tag: the text check sliced a string mid-character.
case("fuzz-spec-template-bom.toml", None, "check", 1, "template syntax error")
# 66 KB of unquoted text: the help quoted all of it back.
case("fuzz-spec-quote-long.toml", None, "check", 1, "close the string with")
# A configMap volume source whose one key is not `name`: import indexed a map by a missing key.
case("fuzz-import-volume-source.yaml", None, "import", 1, "(did you mean `mountPath`?)")

# A Job whose pod spec is a string: the run's pods were made from it by
# writing into it (a panic). What verify rejects is not run.
case("fuzz-run-template-string.yaml", None, None, 1, "must be at most 2147483647",
     args=RUN + ["--manifests", "fuzz-run-template-string.yaml"])
write("run-template-string.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: demo}\nspec:\n"
      "  completionMode: Indexed\n  completions: 1\n  template: {spec: pass}\n")
case("run-template-string.yaml", None, None, 1, "trainc::verify::schema",
     args=RUN + ["--manifests", "run-template-string.yaml"])

# A Job of an API group no cluster serves (`batcLh/v1`): verify does not check
# it (a kind it has no schema for), and run made pods from it. It is no Job.
write("run-job-unserved.yaml", "apiVersion: batcLh/v1\nkind: Job\nmetadata: {name: demo}\nspec:\n"
      "  completionMode: Indexed\n  completions: 1\n  template: {spec: pass}\n")
case("run-job-unserved.yaml", None, None, 1, "Job/demo is of `batcLh/v1`, which no cluster serves",
     args=RUN + ["--manifests", "run-job-unserved.yaml"])

# The cluster's runtimes file: read only inside the spec's directory, never a
# FIFO or a link out, within the size and alias budgets of any input.
TJ = GOOD + 'target = "trainjob"\n[trainjob]\nruntimesFile = "%s"\n'
write("runtimes/ok.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
      "metadata: {name: torch-distributed}\nspec:\n  mlPolicy: {torch: {}}\n  template:\n    spec:\n"
      "      replicatedJobs:\n      - name: node\n        template:\n"
      "          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
      "          spec:\n            template:\n"
      "              spec:\n                containers: [{name: node, image: 'ghcr.io/acme/base:1'}]\n")
case("runtimes/good.toml", TJ % "ok.yaml", "build", 0, "kind: TrainJob", cwd="runtimes")
case("runtimes/escape.toml", TJ % ESCAPE, "check", 1, "cannot read the runtimes file", "outside the code root",
     cwd="runtimes")
setup("link", "runtimes/passwd.yaml", target="/etc/passwd")
case("runtimes/link-out.toml", TJ % "passwd.yaml", "check", 1, "a link to a file outside the code root",
     cwd="runtimes")
setup("fifo", "runtimes/fifo.yaml")
case("runtimes/fifo.toml", TJ % "fifo.yaml", "check", 1, "it is a FIFO (named pipe), not a regular file",
     cwd="runtimes")
case("runtimes/directory.toml", TJ % ".", "check", 1, "cannot read the runtimes file", cwd="runtimes")
write("runtimes/aliases.yaml", "apiVersion: v1\nkind: List\nitems: " + alias_list(
      "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainingRuntime, metadata: {name: '" + "x" * 2000 + "'}}", 3000))
case("runtimes/aliases.toml", TJ % "aliases.yaml", "check", 1, "aliases", cwd="runtimes")
write("runtimes/deep.yaml", "a: " + "[" * 200 + "]" * 200 + "\n")
case("runtimes/deep.toml", TJ % "deep.yaml", "check", 1, "deeper than", cwd="runtimes")
case("runtimes/flag-missing.toml", GOOD + 'target = "trainjob"\n', None, 2, "cannot read `nope.yaml`",
     args=["check", "--runtimes", "nope.yaml", "FILE"], cwd="runtimes")
case("runtimes/fn-escape.rl", RL + "items: []\nfunctionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n"
     "  metadata: {name: demo}\n  spec:\n    image: 'ghcr.io/acme/train:1.4'\n    script: /app/train.py\n"
     "    target: trainjob\n    trainjob: {runtimesFile: '%s'}\n" % ESCAPE, None, 1, "outside the code root",
     args=["fn"], cwd="runtimes")
entries[-1]["stdin"] = "runtimes/fn-escape.rl"

# `trainc run` starts at most 32 pods, however many a job has.
case("run-huge-spec", None, None, 1, "has 2147483647 pods", "at most 32",
     args=["run", "--python", "/nonexistent/python3", "replicas-max-elastic.toml"])
# (An Indexed Job runs at most 100000 pods at once: the API server's limit.)
write("run-huge-job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: huge}\nspec:\n"
      "  completionMode: Indexed\n  completions: 100000\n  parallelism: 100000\n"
      "  template:\n    spec:\n      restartPolicy: Never\n"
      "      containers: [{name: c, image: x, command: [python3, -c, \"pass\"]}]\n")
case("run-huge-job.yaml", None, None, 1, "has 100000 pods", "at most 32",
     args=["run", "--manifests", "--python", "/nonexistent/python3", "run-huge-job.yaml"])

# 18. Inputs of a few kilobytes that grew to gigabytes, and names a node
# would turn into paths outside its directories.
env_levels = GOOD + "[env]\nL0 = \"xxxxxxxx\"\n" + "".join(
    "L%d = \"%s\"\n" % (i, "$(L%d)" % (i - 1) * 60) for i in range(1, 6))
case("env-nested-refs.toml", env_levels, "check", 1, "`L3` expands to 1 MiB", "trainc::env::too_long")
case("env-nested-refs-describe.toml", env_levels, None, 1, "`L3` expands to 1 MiB",
     args=["describe", "--pods", "FILE"])
chain = "".join(
    "      - name: %s\n%s        template:\n%s          spec:\n            template:\n              spec:\n"
    "                containers: [{name: %s, image: 'ghcr.io/acme/base:1'}]\n"
    % ("node" if i == 799 else "j%d" % i,
       "" if i == 0 else "        dependsOn: [{name: j%d, status: Complete}]\n" % (i - 1),
       "          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n" if i == 799 else "",
       "node" if i == 799 else "c")
    for i in range(800))
write("runtimes/chain.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
      "metadata: {name: torch-distributed}\nspec:\n  mlPolicy: {torch: {}}\n  template:\n    spec:\n"
      "      replicatedJobs:\n" + chain)
case("runtimes/chain.toml", TJ % "chain.yaml", None, 0, "pods: 800", "step 800 of 800",
     args=["describe", "--pods", "FILE"], cwd="runtimes")
deep = "{a: " * 190 + "x" + "}" * 190
setup("repeat", "fn-deep-block.rl", head=RL + "items:\n",
      text="- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: %s}\n" % deep, times=500, tail=FC)
case("fn-deep-block.rl", None, "fn", 0, "kind: ResourceList", max_stdout=2 * MIB)
setup("repeat", "flow-list.yaml", head=MANIFEST + "[0", text=",0", times=1999999, tail="]\n")
for command in ("verify", "import"):
    case("flow-list-%s" % command, None, None, 1, "one object holds more than 500,000 values",
         args=[command, "flow-list.yaml"])
yaml_spec("yaml-0o-octal.yaml", "replicas: 0o10\n", 1, "the number 8 to YAML 1.2 (trainc) but the text", "write `8`")
yaml_spec("yaml-sexagesimal.yaml", "replicas: 1:30\n", 1, "the number 90 (base 60) to YAML 1.1", "quote it (`\"1:30\"`)")
yaml_spec("yaml-sexagesimal-quoted.yaml", "replicas: \"1:30\"\nargs: [10:61, 0o9]\n", 0)
escape_job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: demo}\nspec:\n  template:\n    spec:\n"
              "      restartPolicy: Never\n      hostname: \"a\\nb\"\n"
              "      containers:\n      - name: ../../c\n        image: busybox:1.36\n"
              "        volumeMounts: [{name: ../../../tmp/x, mountPath: /x, subPath: /etc}]\n"
              "      volumes: [{name: ../../../tmp/x, emptyDir: {}}]\n")
case("names-escape-verify.yaml", escape_job, "verify", 1, "volume name `../../../tmp/x` is not a DNS-1123 label",
     "container name `../../c`", "`subPath` `/etc` must be a relative path", "`hostname` `a\\nb`",
     "trainc::verify::apiserver")
PODT = GOOD + "[[podTemplate.spec.volumes]]\nname = \"../../.ssh\"\nemptyDir = {}\n"
case("names-escape-podtemplate.toml", PODT, None, 1, "volume name `../../.ssh` is not a DNS-1123 label",
     "trainc::pod_template::invalid", args=["build", "--verify", "FILE"])

# 19. `trainc run` on a shared machine (tests/watch.rs holds each case to
# more than its output): names and paths that would lead out of the run's
# directory, secrets on command lines or in files others can read,
# processes left behind, exhaustion. A stand-in torchrun does what its
# container's CASE_DO says; 977.x marks every process the job starts.
setup("exec", "runenv/torchrun", text="""#!/bin/sh
# The stand-in torchrun of the run cases: what CASE_DO says.
case "$CASE_DO" in
  daemon) setsid sleep 977.1 </dev/null >/dev/null 2>&1 & ;;
  hang) setsid sleep 977.2 </dev/null >/dev/null 2>&1 &
        # As torchrun does, it ends on SIGTERM (as a namespace's first
        # process, it would ignore a signal it has no handler for).
        sleep 977.3 & trap 'kill $!; exit 143' TERM INT; wait $! ;;
  flood) head -c 150000000 /dev/zero | tr '\\0' x; echo ;;
  wait) sleep 0.3 ;;
  fail) echo failing; exit 1 ;;
  show) ls /mnt/h; cat /etc/cfg/train.yaml; echo ;;
esac
echo "done $CASE_DO"
""")
write("runenv/python3", "")
write("runenv/notexec", "#!/bin/sh\n")
write("run-hostdir/keep.txt", "the machine's own file\n")
setup("link", "run-hostdir/out", target="/tmp")
write("run-cm/train.yaml", "lr: 0.1\n")
write("run-outside.txt", "not for the job\n")
setup("link", "run-cm/leak.txt", target="../run-outside.txt")

def run_container(do="wait", name="main", **fields):
    c = {"name": name, "image": "x:1", "command": ["torchrun"], "env": [{"name": "CASE_DO", "value": do}]}
    c.update(fields)
    return c

def run_job(containers, volumes=None, name="demo", pod="", meta="", completions=1, before=""):
    out = (before + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s%s}\nspec:\n"
           "  completionMode: Indexed\n  completions: %d\n  parallelism: %d\n  backoffLimit: 0\n"
           "  template:\n    spec:\n      restartPolicy: Never\n%s      containers: %s\n"
           % (json.dumps(name), meta, completions, completions, pod, json.dumps(containers)))
    if volumes is not None:
        out += "      volumes: %s\n" % json.dumps(volumes)
    return out

def run_case(name, content, exit, *words, modes=("ns", "plain"), spec=False, flags=(), **fields):
    """One case per mode: in namespaces (where available) and as plain processes."""
    if content is not None:
        write(name, content)
    for mode in modes:
        args = RUN + list(flags) + ([] if spec else ["--manifests"]) + (["--no-namespaces"] if mode == "plain" else []) + ["FILE"]
        case(name, None, None, exit, *words, args=args)
        entries[-1]["name"] = "%s (%s)" % (name, mode)
        if mode == "ns":
            entries[-1]["namespaces"] = True
        entries[-1].update(fields)

# Names and paths: refused at their field before anything is written.
run_case("run-volume-escape.yaml", run_job([run_container(volumeMounts=[{"name": "../../../x", "mountPath": "/x"}])],
         [{"name": "../../../x", "emptyDir": {}}]), 1, "volume name `../../../x` is not a DNS-1123 label")
run_case("run-volume-escape-spec.toml", 'name = "demo"\nimage = "x:1"\ntarget = "job"\ncommand = ["torchrun"]\n'
         '[[podTemplate.spec.volumes]]\nname = "../../x"\nemptyDir = {}\n', 1,
         "volume name `../../x` is not a DNS-1123 label", spec=True, modes=("plain",))
run_case("run-container-escape.yaml", run_job([run_container(name="../../c")]), 1, "container name `../../c`")
run_case("run-job-name-escape.yaml", run_job([run_container()], name="a/../../b"), 1, "the name `a/../../b` is not a DNS-1123 subdomain")
run_case("run-name-newline.yaml", run_job([run_container(name="c\n::error file=x::forged")]), 1, "container name `c\\n::error", modes=("plain",))
run_case("run-hostname-newline.yaml", run_job([run_container()], pod="      hostname: \"h\\n10.6.6.6 pypi.org\"\n"),
         1, "`hostname` `h\\n10.6.6.6 pypi.org` is not a DNS-1123 label", modes=("plain",))
run_case("run-namespace-newline.yaml", run_job([run_container()], meta=", namespace: \"ns\\n10.6.6.6 pypi.org\""),
         1, "the namespace `ns\\n10.6.6.6 pypi.org` is not a DNS-1123 label", modes=("plain",))
run_case("run-subpath-absolute.yaml", run_job([run_container(volumeMounts=[{"name": "v", "mountPath": "/x", "subPath": "/etc"}])],
         [{"name": "v", "emptyDir": {}}]), 1, "`subPath` `/etc` must be a relative path inside the volume")
run_case("run-configmap-item-escape.yaml", run_job([run_container(volumeMounts=[{"name": "v", "mountPath": "/x"}])],
         [{"name": "v", "configMap": {"name": "c", "items": [{"key": "k", "path": "../../k"}]}}],
         before="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n---\n"), 1,
         "the item path `../../k` must be a relative path inside the volume")
run_case("run-configmap-key-escape.yaml", run_job([run_container(volumeMounts=[{"name": "v", "mountPath": "/x"}])],
         [{"name": "v", "configMap": {"name": "c"}}],
         before="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {\"../../k\": v}\n---\n"), 1,
         "`../../k`")
run_case("run-containers-empty.yaml", run_job([]), 1, "a pod needs at least one container")
# A file mounted into a directory of this machine's (a hostPath) is made in
# a tmpfs, not on the machine; a relative mountPath is made absolute, as the
# kubelet makes it.
run_case("run-file-into-host-dir.yaml", run_job(
    [run_container("show", volumeMounts=[{"name": "host", "mountPath": "/mnt/h"},
                                         {"name": "cfg", "mountPath": "/mnt/h/new.yaml", "subPath": "train.yaml"},
                                         {"name": "cfg", "mountPath": "etc/cfg"}])],
    [{"name": "host", "hostPath": {"path": "@WORLD@/run-hostdir"}}, {"name": "cfg", "configMap": {"name": "c"}}],
    before="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {train.yaml: 'lr: 0.2'}\n---\n"),
    0, "keep.txt", "new.yaml", "lr: 0.2", "done show", modes=("ns",))
# A mount path through a link of this machine is followed inside the
# container's root, as runc follows it (/mnt/h/out is a link to /tmp,
# /var/run one to /run on Debian); what
# it needs is made there in a tmpfs, not on the machine.
run_case("run-mount-through-link.yaml", run_job(
    [run_container("wait", volumeMounts=[{"name": "host", "mountPath": "/mnt/h"},
                                         {"name": "e", "mountPath": "/mnt/h/out/trainc-corpus-x"},
                                         # A service account's place, through /var/run -> /run on Debian.
                                         {"name": "e", "mountPath": "/var/run/secrets/trainc-corpus"}])],
    [{"name": "host", "hostPath": {"path": "@WORLD@/run-hostdir"}}, {"name": "e", "emptyDir": {}}]),
    0, "done wait", modes=("ns",))
# A directory mounted over a file of this machine cannot be made: the pod
# cannot start (1), not a job that failed (3); the container already
# started is stopped, and so is what it left running.
run_case("run-dir-over-file.yaml", run_job(
    [run_container("daemon", name="first"),
     run_container("wait", name="second", volumeMounts=[{"name": "host", "mountPath": "/mnt/h"},
                                                      {"name": "e", "mountPath": "/mnt/h/keep.txt"}])],
    [{"name": "host", "hostPath": {"path": "@WORLD@/run-hostdir"}}, {"name": "e", "emptyDir": {}}]),
    1, "could not start", "is a file or link on this machine, not a directory", "trainc::run::cannot_start",
    modes=("ns",), marker="977.")
run_case("run-start-fails.yaml", run_job(
    [run_container("hang", name="first"), run_container(name="second", command=["@WORLD@/runenv/notexec"])]),
    1, "cannot start", "trainc::run::cannot_start", modes=("plain",), marker="977.")
# Secrets: never on a command line, in files no other user can read.
SECRET_JOB = run_job([run_container("wait", env=[{"name": "CASE_DO", "value": "wait"},
                                                 {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "token"}}}],
                                    volumeMounts=[{"name": "s", "mountPath": "/secrets/s"}])],
                     [{"name": "s", "secret": {"secretName": "s"}}],
                     before="apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {token: RUN-SECRET-7f3a}\n---\n")
run_case("run-secret.yaml", SECRET_JOB, 0, "done wait", absent=["RUN-SECRET-7f3a"], secret="RUN-SECRET-7f3a")
run_case("run-configmap-link-out.yaml", run_job([run_container(volumeMounts=[{"name": "v", "mountPath": "/x"}])],
         [{"name": "v", "configMap": {"name": "c"}}]), 1, "a link to a file outside", "trainc::run::invalid",
         flags=["--configmap", "c=run-cm"], absent=["not for the job"])
# No process outlives the run: at its end, on SIGINT and SIGTERM.
run_case("run-daemon.yaml", run_job([run_container("daemon")], completions=2), 0, "succeeded", marker="977.")
for signal in ("INT", "TERM"):
    run_case("run-hang-%s.yaml" % signal.lower(), run_job([run_container("hang")], completions=2), 130,
             "interrupted; every process", marker="977.", signal=signal, signal_after_ms=700)
# Exhaustion: one endless line, a process count past any machine's.
run_case("run-flood.yaml", run_job([run_container("flood")]), 0, "cut at 64 KiB", modes=("plain",))
run_case("run-nproc-huge.toml", 'name = "demo"\nimage = "x:1"\ntarget = "job"\nscript = "/app/train.py"\nnProcPerNode = 100000\nreplicas = 2\n',
         1, "would start 200002 processes", "at most 256", spec=True, modes=("plain",))
run_case("run-env-nested.yaml", run_job([run_container(env=[{"name": "L0", "value": "x" * 8}] + [
    {"name": "L%d" % i, "value": "$(L%d)" % (i - 1) * 60} for i in range(1, 6)])]),
    1, "`L3` of container `main` expands to more than 128 KiB", modes=("plain",))

# 20. Hardening, fifth round: `migrate`, `verify` and `run` stay bounded,
# write only their outputs, lose no object.
H = "harden/"
# One writer: a directory inside the output directory that is a link is
# refused (nothing written there, nor anywhere); a link at a file's name is
# replaced, not written through.
write(H + "mig-in/team/job.yaml", volumes_manifest(1))
setup("dir", H + "mig-elsewhere")
setup("link", H + "mig-out/team", target="../mig-elsewhere")
case(H + "migrate-link-out", None, None, 2, "`mig-out/team` is a symbolic link", "nothing was written",
     args=["migrate", "mig-in", "--output-dir", "mig-out"], cwd="harden", output_dir="mig-out",
     unchanged=[H + "mig-elsewhere"])
case(H + "migrate-made-dirs", None, None, 0, "wrote mig-new/team/job.yaml",
     args=["migrate", "mig-in", "--output-dir", "mig-new"], cwd="harden", unchanged=[H + "mig-elsewhere"])
write(H + "imp.yaml", volumes_manifest(1))
write(H + "imp-target.txt", "keep\n")
setup("link", H + "imp-out/demo.toml", target="../imp-target.txt")
case(H + "import-link-file", None, None, 0, "wrote imp-out/demo.toml",
     args=["import", "--force", "--output-dir", "imp-out", "imp.yaml"], cwd="harden",
     unchanged=[H + "imp-target.txt"])
write(H + "good.toml", GOOD)
write(H + "build-target.yaml", "keep: true\n")
setup("link", H + "build-out/01-pytorchjob-demo.yaml", target="../build-target.yaml")
case(H + "build-link-file", None, None, 0, args=["build", "--force", "--output-dir", "build-out", "good.toml"],
     cwd="harden", unchanged=[H + "build-target.yaml"])
# The plugin's place: a relative XDG_CONFIG_HOME is ignored (the XDG spec),
# and nothing is made under the working directory.
case(H + "plugin-xdg-relative", None, None, 0, "installed", "plugin-home/.config/kustomize/plugin",
     args=["plugin", "install", "--dev"], cwd="harden",
     env={"XDG_CONFIG_HOME": "rel-cfg", "HOME": "@WORLD@/harden/plugin-home"},
     unchanged=[H + "rel-cfg"])
case(H + "plugin-all-relative", None, None, 2, "absolute path", args=["plugin", "install", "--dev"],
     cwd="harden", env={"XDG_CONFIG_HOME": "rel-cfg", "HOME": "rel-home"},
     unchanged=[H + "rel-cfg", H + "rel-home"])
# Nothing lost: what verify reads, migrate passes through byte for byte.
OWN = "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: own-line}, data: {x: \"1\"}}\n"
DOTS = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: dotted}\n...\n"
case(H + "migrate-keeps.yaml", OWN + DOTS + volumes_manifest(1) + "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: after}}  # kept\n",
     "migrate", 0, "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: own-line}, data: {x: \"1\"}}",
     "metadata: {name: dotted}\n...", "kind: TrainJob", "metadata: {name: after}}  # kept")
case(H + "migrate-only-dots.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: only-dots}\n...\n",
     "migrate", 0, "metadata: {name: only-dots}\n...")
case(H + "migrate-only-own-line.yaml", OWN, "migrate", 0, OWN.strip())
# Past the document limit: the limit is named, by both readers' one reader.
setup("repeat", H + "over-limit.yaml", head="", text="{}\n---\n", times=200000, tail="{}\n")
for command in ("verify", "migrate"):
    case(H + "over-limit-" + command, None, None, 1, "more than 200,000 documents",
         args=[command, "over-limit.yaml"], cwd="harden", absent=["a spec is one document"])
# A Secret's value on a command line: said by check, build, describe, run.
SECRET_ARGS = GOOD + 'args = ["--token", "$(HF_TOKEN)"]\n[env]\nHF_TOKEN = { secret = "hf", key = "token" }\n'
write(H + "secret-args.toml", SECRET_ARGS)
for command in ("check", "build", "describe"):
    case(H + "secret-args-" + command, None, None, 0, "trainc::env::secret_on_command_line",
         "into the process's command line", "os.environ" if command != "describe" else "",
         args=[command, "secret-args.toml"], cwd="harden")
write("run-sec.env", "token=RUN-TOKEN-1\n")
run_case("run-secret-args.yaml", run_job([run_container("wait", command=["torchrun", "--token=$(TOKEN)"],
         env=[{"name": "CASE_DO", "value": "wait"},
              {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}])]),
         0, "expands `$(TOKEN)` into its command line", "done wait", modes=("plain",),
         flags=["--secret", "hf=run-sec.env"])
# A namespace of 2,000 jobs beside 2,000 Services: indexed, not searched.
NS_JOB = ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: job{i}, namespace: team}\nspec:\n"
          "  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n        spec:\n"
          "          containers: [{name: pytorch, image: 'ghcr.io/acme/gpt:3.0', command: [torchrun, /app/train.py]}]\n"
          "    Worker:\n      replicas: 1\n      template:\n        spec:\n"
          "          containers: [{name: pytorch, image: 'ghcr.io/acme/gpt:3.0', command: [torchrun, /app/train.py]}]\n"
          "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc{i}, namespace: team}\n"
          "spec: {clusterIP: None, selector: {training.kubeflow.org/job-name: job{i}}}\n---\n")
setup("repeat", H + "namespace.yaml", head="", text=NS_JOB, times=2000, tail="", numbered=True)
case(H + "namespace-verify", None, None, 0, "verified 4000 objects", args=["verify", "namespace.yaml"], cwd="harden")
setup("repeat", H + "namespace-small.yaml", head="", text=NS_JOB, times=300, tail="", numbered=True)
case(H + "namespace-migrate", None, None, 0, "name: job299", args=["migrate", "namespace-small.yaml"], cwd="harden")
# `--runtimes` of 2,000 runtimes beside 300 jobs: read once, not once a job.
setup("repeat", H + "runtimes-many.yaml", head="",
      text="apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: team-{i}}\n"
           "spec:\n  mlPolicy: {torch: {}}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n"
           "        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
           "          spec:\n            template:\n              spec:\n"
           "                containers: [{name: node, image: 'ghcr.io/acme/base:1'}]\n---\n",
      times=2000, tail="", numbered=True)
case(H + "migrate-runtimes-once", None, None, 0, "name: job299",
     args=["migrate", "--runtimes", "runtimes-many.yaml", "namespace-small.yaml"], cwd="harden")
# A `v1 List` of 10,000 objects and no PyTorchJob: migrate holds what
# verify holds, and passes it through.
setup("repeat", H + "list.yaml", head="apiVersion: v1\nkind: List\nitems:\n",
      text="- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: config-{i}, namespace: team, labels: {app: trainer}}\n"
           "  data: {key: value-{i}, other: some longer text value for the config map {i}}\n",
      times=10000, tail="", numbered=True)
case(H + "list-migrate", None, None, 0, "no PyTorchJob", "name: config-9999", args=["migrate", "list.yaml"], cwd="harden")
# A keyed list (`x-kubernetes-list-type: map`) of 40,000 items: one lookup
# an item.
write(H + "widget-crd.yaml", """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name, protocol]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    protocol: {type: string, default: TCP}
                    port: {type: integer}
""")
setup("repeat", H + "widget.yaml", head="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  ports:\n",
      text="  - {name: port-name-with-a-long-shared-prefix-{i}, protocol: TCP, port: 1}\n", times=40000,
      tail="  - {name: port-name-with-a-long-shared-prefix-7, protocol: TCP, port: 2}\n", numbered=True)
case(H + "list-map-keys", None, None, 1, "Duplicate value",
     "{\"name\":\"port-name-with-a-long-shared-prefix-7\",\"protocol\":\"TCP\"} (item 7 has it too)",
     args=["verify", "--crd", "widget-crd.yaml", "widget.yaml"], cwd="harden")
# Hundreds of thousands of problems: streamed in every format, at most
# 100 an object (and said so).
setup("repeat", H + "problems-one.yaml", head="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {",
      text="k{i}: 1, ", times=200000, tail="last: 1}\n", numbered=True)
for fmt in ("human", "json", "github", "sarif"):
    case(H + "problems-one-" + fmt, None, None, 1, "more problems of this object are not reported",
         args=["verify", "--format", fmt, "problems-one.yaml"], cwd="harden")
setup("repeat", H + "problems-many.yaml", head="",
      text="{apiVersion: v1, kind: ConfigMap, metadata: {name: c{i}}, data: {a: 1}}\n---\n", times=8000, tail="",
      numbered=True)
for fmt in ("json", "github", "sarif"):
    case(H + "problems-many-" + fmt, None, None, 1, "c7999", args=["verify", "--format", fmt, "problems-many.yaml"],
         cwd="harden")
# `--timeout` covers matching a failure against a JobSet's message
# patterns (4,000 that take a millisecond each to refuse), and names the
# timeout as given.
def jobset_run(patterns, do):
    return ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: demo}\nspec:\n"
            "  failurePolicy:\n    maxRestarts: 1\n    rules:\n    - name: r\n      action: RestartJobSet\n"
            "      onJobFailureMessagePatterns: %s\n"
            "  replicatedJobs:\n  - name: node\n    replicas: 1\n    template:\n      spec:\n"
            "        completionMode: Indexed\n        completions: 1\n        parallelism: 1\n        backoffLimit: 0\n"
            "        template:\n          spec:\n            restartPolicy: Never\n"
            "            containers: %s\n" % (json.dumps(patterns), json.dumps([run_container(do)])))
HEAVY = ["(\\w{100}){100}x%d" % i for i in range(4000)]
write("run-jobset-patterns.yaml", jobset_run(HEAVY, "fail"))
case("run-jobset-patterns.yaml", None, None, 3, "ran past --timeout 1s", "failing",
     args=["run", "--python", "runenv/python3", "--timeout", "1s", "--manifests", "--no-namespaces",
           "run-jobset-patterns.yaml"])
write("run-jobset-hang.yaml", jobset_run(["x"], "hang"))
case("run-jobset-hang.yaml", None, None, 3, "ran past --timeout 1s and was stopped",
     args=["run", "--python", "runenv/python3", "--timeout", "1s", "--manifests", "--no-namespaces",
           "run-jobset-hang.yaml"])
entries[-1]["marker"] = "977."

# CEL rules a pull request can write into a CRD: each ends within the bounds
# with the API server's verdict, as its cost limits and depth limits give it.
# Large inputs are made by setup steps, not committed.
CEL_HEAD = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
            "metadata: {name: hostiles.example.com}\nspec:\n  group: example.com\n"
            "  names: {kind: Hostile, plural: hostiles}\n  scope: Namespaced\n  versions:\n"
            "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
            "        type: object\n        properties:\n          spec:\n            type: object\n"
            "            x-kubernetes-validations:\n")
OBJECT_HEAD = "apiVersion: example.com/v1\nkind: Hostile\nmetadata: {name: h}\nspec: "
def cel_crd(rules, props):
    return (CEL_HEAD + "".join("            - rule: %s\n" % json.dumps(r) for r in rules)
            + "            properties: %s\n" % json.dumps(props))
def cel_verify(name, exit, *words):
    case(H + name, None, None, exit, *words,
         args=["verify", "--crd", name + "-crd.yaml", name + ".yaml"], cwd="harden")
def cel_case(name, rules, props, spec, exit, *words):
    write(H + name + "-crd.yaml", cel_crd(rules, props))
    write(H + name + ".yaml", OBJECT_HEAD + json.dumps(spec) + "\n")
    cel_verify(name, exit, *words)
def cel_long_string(name, rules, props, field, times, exit, *words, char="a", after=""):
    """An object whose string `field` is `char` `times` times, then `after`."""
    write(H + name + "-crd.yaml", cel_crd(rules, props))
    setup("repeat", H + name + ".yaml", head=OBJECT_HEAD + '{"%s": "' % field, text=char, times=times,
          tail=after + '"}\n')
    cel_verify(name, exit, *words)
INTS = {"l": {"type": "array", "items": {"type": "integer"}}}
REFUSED = "estimated rule cost exceeds budget"
STRING = {"s": {"type": "string"}}
# The hostile rules below read lists and strings of no bound: the server
# refuses each CRD for its estimated cost at creation, as trainc says;
# the objects are checked all the same, each stopped by the runtime limits.
# Three comprehensions nested over 1,000 items: 10^9 steps, stopped at
# the call's cost limit.
cel_case("cel-nested", ["self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))"], INTS,
         {"l": list(range(1000))}, 1, "call cost exceeds limit", REFUSED)
# A list of 2^62 items asked for: stopped before it is made.
cel_case("cel-range", ["lists.range(self.n).size() >= 0"], {"n": {"type": "integer"}},
         {"n": 2 ** 62}, 1, "call cost exceeds limit", REFUSED)
# A string that would grow to 10^12 bytes by replace, and one split into
# 2 million strings: the server admits both rules (one pass over the
# string, estimated within the limit); each stopped before it is made.
cel_long_string("cel-replace", ["self.s.replace('a', self.s).size() > 0"], STRING, "s", 1000000, 1,
                "call cost exceeds limit")
cel_long_string("cel-split", ["self.s.split('').size() > 0"], STRING, "s", 2000000, 1,
                "call cost exceeds limit")
# Strings grown by join within the runtime limit; but `join` of a list
# the expression makes is of no size the server can bound at creation.
cel_case("cel-join", ["lists.range(10000).map(i, self.s).join('').size() > 0"], STRING,
         {"s": "a" * 100}, 1, REFUSED)
# Bounded as the message asks, a rule over every item is admitted.
cel_case("cel-bounded", ["self.l.all(x, x.matches('^[a-z]+$'))"],
         {"l": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 63}}},
         {"l": ["ab", "cd"]}, 0)
# A pattern from the object, built to explode a backtracking matcher: RE2's
# meaning has no backtracking; one too large to compile is the server's
# error.
cel_long_string("cel-pattern", ["self.s.matches(self.p)"], dict(STRING, p={"type": "string"}), "s", 100000, 1,
                "failed rule: self.s.matches(self.p)", REFUSED, after='!", "p": "(a+)+$')
cel_case("cel-pattern-huge", ["self.s.matches(self.p)"], dict(STRING, p={"type": "string"}),
         {"s": "a", "p": "(a{100}){100}"}, 1, "error parsing regexp", REFUSED)
# 10,000 terms, parentheses, negations, selections: cel-go's depth limits,
# not a stack overflow.
cel_case("cel-deep-sum", ["1" + "+1" * 10000 + " > 0"], {}, {}, 1, "max recursion depth exceeded")
cel_case("cel-deep-parens", ["(" * 10000 + "true" + ")" * 10000], {}, {}, 1,
         "expression recursion limit exceeded: 250")
cel_case("cel-deep-not", ["!" * 10001 + "false"], {}, {}, 0)
cel_case("cel-deep-select", ["self" + ".a" * 10000 + " == 1"], {}, {}, 1, "max recursion depth exceeded")
cel_case("cel-deep-list", ["[" * 10000 + "]" * 10000 + " == []"], {}, {}, 1,
         "expression recursion limit exceeded: 250")
# A literal of 16,000 lists whose item types are bound one by one (the
# checker's unification), and a type error the server refuses at creation.
cel_case("cel-literal-types", ["[" + ",".join("[]" if i % 2 else "[%d]" % i for i in range(16000)) + "] != []"],
         {}, {}, 0)
cel_case("cel-type-error", ["self.l.size() == 'none'"], INTS, {"l": []}, 1,
         "found no matching overload for '_==_' applied to '(int, string)'")
setup("repeat", H + "cel-long-crd.yaml", head=CEL_HEAD + '            - rule: "', text="true || ", times=20000,
      tail='true"\n            properties: {}\n')
write(H + "cel-long.yaml", OBJECT_HEAD + "{}\n")
cel_verify("cel-long", 1, "expression code point size exceeds limit")
# 100,000 rules on one field.
setup("repeat", H + "cel-many-rules-crd.yaml", head=CEL_HEAD, text="            - rule: self.n + {i} >= 0\n",
      times=100000, tail='            properties: {"n": {"type": "integer"}}\n', numbered=True)
write(H + "cel-many-rules.yaml", OBJECT_HEAD + '{"n": 10}\n')
cel_verify("cel-many-rules", 0)
# A 50 MB stream of CRDs.
setup("repeat", H + "cel-stream-crd.yaml", head="",
      text=cel_crd(["self.n >= 0"], {"n": {"type": "integer", "description": "x" * 5000}})
      .replace("hostiles.example.com", "h{i}s.example.com").replace("kind: Hostile", "kind: H{i}")
      .replace("plural: hostiles", "plural: h{i}s") + "---\n", times=9500, tail="", numbered=True)
write(H + "cel-stream.yaml", "apiVersion: example.com/v1\nkind: H7\nmetadata: {name: h}\nspec: {n: -1}\n")
case(H + "cel-stream", None, None, 1, "failed rule: self.n >= 0",
     args=["verify", "--crd", "cel-stream-crd.yaml", "cel-stream.yaml"], cwd="harden")

with open("CASES.jsonl", "w") as f:
    for entry in entries:
        f.write(json.dumps(entry, ensure_ascii=True) + "\n")
print(sum(1 for e in entries if "setup" not in e), "cases,",
      sum(1 for e in entries if "setup" in e), "setup steps")
