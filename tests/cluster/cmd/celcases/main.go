// Command celcases records Kubernetes' own test cases of CRD validation
// rules as data: it runs the tests of k8s.io/apiextensions-apiserver's
// pkg/apiserver/schema/cel (the module this directory's go.mod pins) with
// one function of the package wrapped (in a copy of the module, put in
// place of the cached one by a go.mod of its own) so that every call records its input and the
// real validator's answer, and writes them sorted, one case per line.
//
//	go run ./cmd/celcases -out ../cel/kubernetes
package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	//go:embed common.go.in
	common string
	//go:embed hook-cel.go.in
	hookCEL string
	//go:embed hook-listtype.go.in
	hookListType string
	//go:embed hook-objectmeta.go.in
	hookObjectMeta string
	//go:embed hook-validation.go.in
	hookValidation string
	//go:embed hook-library.go.in
	hookLibrary string
	//go:embed hook-library-cost.go.in
	hookLibraryCost string
)

// A package whose tests are recorded, and the function wrapped.
type target struct {
	module, pkg, name string
	// Functions renamed, file by file: the hook defines them anew.
	renames []rename
	hooks   []hook
}

type rename struct{ file, from, to string }

// A file added to the package: the functions renamed, defined anew. A
// test file (`_test.go`) wraps a test's own helper.
type hook struct{ file, text string }

// The package's own code wrapped.
func hooked(text string) []hook { return []hook{{"zz_record.go", text}} }

// How many times the tests run.
const runs = 3

var targets = []target{{
	module: "k8s.io/apiextensions-apiserver",
	pkg:    "pkg/apiserver/schema/cel",
	name:   "schema-cel",
	renames: []rename{
		{"validation.go", "func (s *Validator) Validate(", "func (s *Validator) validateUnrecorded("},
		{"validation.go", "func NewValidator(", "func newValidatorUnrecorded("},
		{"compilation.go", "func Compile(", "func compileUnrecorded("},
	},
	hooks: hooked(hookCEL),
}, {
	module:  "k8s.io/apiextensions-apiserver",
	pkg:     "pkg/apiserver/schema/listtype",
	name:    "schema-listtype",
	renames: []rename{{"validation.go", "func ValidateListSetsAndMaps(", "func validateListSetsAndMapsUnrecorded("}},
	hooks:   hooked(hookListType),
}, {
	module:  "k8s.io/apiextensions-apiserver",
	pkg:     "pkg/apiserver/schema/objectmeta",
	name:    "schema-objectmeta",
	renames: []rename{{"validation.go", "func Validate(", "func validateUnrecorded("}},
	hooks:   hooked(hookObjectMeta),
}, {
	module: "k8s.io/apiextensions-apiserver",
	pkg:    "pkg/apiserver/validation",
	name:   "validation",
	renames: []rename{
		{"validation.go", "func NewSchemaValidatorFromOpenAPI(", "func newSchemaValidatorFromOpenAPIUnrecorded("},
		{"validation.go", "func ValidateCustomResource(", "func validateCustomResourceUnrecorded("},
	},
	hooks: hooked(hookValidation),
}, {
	// The tests of the Kubernetes CEL libraries check expressions through
	// helpers of their own, which are wrapped.
	module: "k8s.io/apiserver",
	pkg:    "pkg/cel/library",
	name:   "library",
	renames: []rename{
		{"cidr_test.go", "func testCIDR(", "func testCIDRUnrecorded("},
		{"ip_test.go", "func testIP(", "func testIPUnrecorded("},
		{"quantity_test.go", "func testQuantity(", "func testQuantityUnrecorded("},
		{"semver_test.go", "func testSemver(", "func testSemverUnrecorded("},
		{"cost_test.go", "func testCost(", "func testCostUnrecorded("},
	},
	hooks: []hook{{"zz_record_test.go", hookLibrary}, {"zz_record_cost_test.go", hookLibraryCost}},
}}

func main() {
	out := flag.String("out", "", "directory the cases are written to")
	only := flag.String("only", "", "record this file's cases alone (`library`)")
	flag.Parse()
	if *out == "" {
		fail("-out is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err.Error())
	}
	work, err := os.MkdirTemp("", "celcases")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(work)
	for _, t := range targets {
		if *only != "" && t.name != *only {
			continue
		}
		if err := record(t, work, *out); err != nil {
			fail(fmt.Sprintf("%s/%s: %v", t.module, t.pkg, err))
		}
	}
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "celcases:", message)
	os.Exit(1)
}

func record(t target, work, out string) error {
	dir, version, err := moduleDir(t.module)
	if err != nil {
		return err
	}
	// A writable copy of the module, used in place of the cached one
	// through a go.mod of our own beside this one's (-modfile).
	copyDir := filepath.Join(work, t.name+"-module")
	if err := exec.Command("cp", "-r", dir, copyDir).Run(); err != nil {
		return fmt.Errorf("copying %s: %v", dir, err)
	}
	if err := exec.Command("chmod", "-R", "u+w", copyDir).Run(); err != nil {
		return err
	}
	for _, r := range t.renames {
		original := filepath.Join(copyDir, t.pkg, r.file)
		text, err := os.ReadFile(original)
		if err != nil {
			return err
		}
		if n := strings.Count(string(text), r.from); n != 1 {
			return fmt.Errorf("%s: %q found %d times, not once: the recorder needs updating for %s", r.file, r.from, n, version)
		}
		if err := os.WriteFile(original, []byte(strings.Replace(string(text), r.from, r.to, 1)), 0o644); err != nil {
			return err
		}
	}
	for _, h := range t.hooks {
		if err := os.WriteFile(filepath.Join(copyDir, t.pkg, h.file), []byte(h.text), 0o644); err != nil {
			return err
		}
		// What the recorders share, in the hook's package (a test file
		// for a test's package).
		pkgName := strings.Fields(h.text)[1]
		shared := strings.Replace(common, "package PACKAGE", "package "+pkgName, 1)
		file := "zz_record_common.go"
		if strings.HasSuffix(h.file, "_test.go") {
			file = "zz_record_common_" + pkgName + "_test.go"
		}
		if err := os.WriteFile(filepath.Join(copyDir, t.pkg, file), []byte(shared), 0o644); err != nil {
			return err
		}
	}
	modfile := filepath.Join(work, t.name+".mod")
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return fmt.Errorf("run from tests/cluster: %v", err)
	}
	// The module may be replaced already (k8s.io/kubernetes's staging
	// modules are): that replacement gives way to the copy.
	var kept []string
	for _, line := range strings.Split(string(gomod), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), t.module+" =>") {
			kept = append(kept, line)
		}
	}
	gomod = []byte(strings.Join(kept, "\n") + fmt.Sprintf("\nreplace %s => %s\n", t.module, copyDir))
	if err := os.WriteFile(modfile, gomod, 0o644); err != nil {
		return err
	}
	gosum, err := os.ReadFile("go.sum")
	if err != nil {
		return err
	}
	if err := os.WriteFile(strings.TrimSuffix(modfile, ".mod")+".sum", gosum, 0o644); err != nil {
		return err
	}
	raw := filepath.Join(work, t.name+".raw.jsonl")
	// The tests run several times (separate runs: some tests register
	// flags and cannot run twice in one process): a validator that walks a
	// Go map meets its keys in a random order, and where a rule's cost or
	// errors depend on that order, the runs show it.
	for run := 0; run < runs; run++ {
		cmd := exec.Command("go", "test", "-count=1", "-modfile", modfile, t.module+"/"+t.pkg)
		cmd.Env = append(os.Environ(), "TRAINC_CEL_RECORD="+raw)
		cmd.Stderr = os.Stderr
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			os.Stderr.Write(stdout.Bytes())
			return fmt.Errorf("its tests failed with the recorder: %v", err)
		}
	}
	lines, err := readLines(raw)
	if err != nil {
		return err
	}
	// A case is its input; its outcomes over the runs are compared.
	outcomes := map[string]map[string]bool{}
	records := map[string]map[string]interface{}{}
	for _, line := range lines {
		// Numbers kept as written: a float stays `10.0`, an int64 exact.
		var c map[string]interface{}
		decoder := json.NewDecoder(strings.NewReader(line))
		decoder.UseNumber()
		if err := decoder.Decode(&c); err != nil {
			return err
		}
		// A test that cancels the evaluation's context after a time
		// records whatever cost it had reached: not a case.
		if c["test"] == "TestCELValidationContextCancellation" {
			continue
		}
		stable(c)
		c["source"] = fmt.Sprintf("%s@%s %s/%s (%s)", t.module, version, t.pkg, c["at"], c["test"])
		delete(c, "at")
		delete(c, "test")
		outcome := map[string]interface{}{"cost": c["cost"], "errors": c["errors"], "compiled": c["compiled"]}
		delete(c, "cost")
		delete(c, "errors")
		delete(c, "compiled")
		input, _ := json.Marshal(c)
		seen, _ := json.Marshal(outcome)
		if outcomes[string(input)] == nil {
			outcomes[string(input)] = map[string]bool{}
			for k, v := range outcome {
				c[k] = v
			}
			records[string(input)] = c
		}
		outcomes[string(input)][string(seen)] = true
	}
	cases := map[string]bool{}
	varied := 0
	for input, seen := range outcomes {
		c := records[input]
		// A comprehension over a map (a schema's additionalProperties)
		// meets its keys in Go's random order: where it stops early, its
		// cost depends on that order, which a few runs may not show.
		if overMap.MatchString(input) && strings.Contains(input, "additionalProperties") {
			c["cost"] = nil
		}
		if len(seen) > 1 {
			// Go's map order decides the outcome: the errors too, or only
			// the cost (which is then not recorded).
			varied++
			costs := map[string]bool{}
			for s := range seen {
				var o map[string]interface{}
				_ = json.Unmarshal([]byte(s), &o)
				delete(o, "cost")
				rest, _ := json.Marshal(o)
				costs[string(rest)] = true
			}
			if len(costs) > 1 {
				continue
			}
			c["cost"] = nil
		}
		canonical, _ := json.Marshal(c)
		cases[string(canonical)] = true
	}
	if varied > 0 {
		fmt.Fprintf(os.Stderr, "celcases: %d cases of %s vary with Go's map order over %d runs\n", varied, t.pkg, runs)
	}
	sorted := make([]string, 0, len(cases))
	for c := range cases {
		sorted = append(sorted, c)
	}
	sort.Strings(sorted)
	path := filepath.Join(out, t.name+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(sorted, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "celcases: %d cases from %s@%s %s -> %s\n", len(sorted), t.module, version, t.pkg, path)
	return nil
}

// The names the validator makes up for a rule's type (`selfType` and a
// random number) and the order of errors found walking a Go map change
// from run to run; a case is recorded without either.
var madeUpName = regexp.MustCompile(`selfType[0-9]+`)

// A comprehension macro in a rule.
var overMap = regexp.MustCompile(`\.(all|exists|exists_one|existsOne|map|filter|transformList|transformMap|transformMapEntry)\(`)

func stable(c map[string]interface{}) {
	for _, key := range []string{"compiled", "errors"} {
		list, _ := c[key].([]interface{})
		for _, item := range list {
			entry, _ := item.(map[string]interface{})
			for field, value := range entry {
				if text, ok := value.(string); ok {
					entry[field] = madeUpName.ReplaceAllString(text, "selfType")
				}
			}
		}
		if key == "errors" {
			sort.SliceStable(list, func(i, j int) bool {
				a, _ := json.Marshal(list[i])
				b, _ := json.Marshal(list[j])
				return string(a) < string(b)
			})
		}
	}
}

func moduleDir(module string) (string, string, error) {
	// A fresh module cache holds only what a build needed; the module whose
	// tests are copied is fetched first (a no-op once it is there).
	if out, err := exec.Command("go", "mod", "download", module).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go mod download %s: %v: %s", module, err, out)
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", module).Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m %s: %v", module, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 || fields[0] == "" {
		return "", "", fmt.Errorf("go list -m %s: no module directory (run `go mod download %s`)", module, module)
	}
	return fields[0], fields[1], nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<28)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines, s.Err()
}
