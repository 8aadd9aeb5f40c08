// Command admit asks the API server of a running control plane whether it
// admits each object of each file, as `kubectl apply --dry-run=server
// --validate=strict` would: a create with dryRun=All and
// fieldValidation=Strict, through every admission webhook the cluster has.
//
//	admit --kubeconfig DIR/kubeconfig FILE...
//
// Each file is one case. The objects other objects are checked against at
// admission (runtimes, which the TrainJob webhook reads, and namespaces)
// are created for real first and deleted when the case ends, so a TrainJob
// meets the runtime its file holds; every other object is a dry run. It
// prints one JSON line per document, in the file's order: the file, the
// document's index (from 1, as trainc numbers them), its kind and name, the
// verdict ("admitted", "refused", or "unchecked" for a kind the server does
// not serve), the refusal's message and causes (field, type, message), and
// the server's warnings. A file that cannot be read or parsed is one line
// with the verdict "unreadable". It exits 0 unless it cannot reach the
// server.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Cause is one field the server names in a refusal.
type Cause struct {
	Field   string `json:"field"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Verdict is the server's answer for one document.
type Verdict struct {
	File      string   `json:"file"`
	Document  int      `json:"document"`
	Kind      string   `json:"kind,omitempty"`
	Name      string   `json:"name,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Verdict   string   `json:"verdict"`
	Reason    string   `json:"reason,omitempty"`
	Message   string   `json:"message,omitempty"`
	Causes    []Cause  `json:"causes,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// warnings collects what the server says in Warning headers, request by request.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

// real are the kinds created for real: what admission reads of other objects.
var real = map[string]bool{
	"ClusterTrainingRuntime": true,
	"TrainingRuntime":        true,
	"Namespace":              true,
}

type admitter struct {
	ctx        context.Context
	client     dynamic.Interface
	mapper     meta.RESTMapper
	warned     *warnings
	namespaces map[string]bool
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the control plane's kubeconfig (tests/cluster/up writes DIR/kubeconfig)")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: admit --kubeconfig FILE MANIFEST...")
		os.Exit(2)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("the kubeconfig %s: %v", *kubeconfig, err)
	}
	config.QPS, config.Burst = 1000, 1000
	warned := &warnings{}
	config.WarningHandlerWithContext = nil
	config.WarningHandler = warned
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		fail("a client: %v", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		fail("a discovery client: %v", err)
	}
	a := &admitter{
		ctx:        context.Background(),
		client:     client,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		warned:     warned,
		namespaces: map[string]bool{},
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for _, file := range flag.Args() {
		for _, verdict := range a.admitFile(file) {
			if err := encoder.Encode(verdict); err != nil {
				fail("writing: %v", err)
			}
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "admit: "+format+"\n", args...)
	os.Exit(1)
}

// documents reads a file's YAML (or JSON) documents, nil for an empty one.
func documents(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var documents []*unstructured.Unstructured
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return documents, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(chunk))) == 0 {
			continue
		}
		object := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(chunk, &object.Object); err != nil {
			return nil, err
		}
		if object.Object == nil {
			continue
		}
		documents = append(documents, object)
	}
}

// item is one object to admit and the document it is in: a `v1 List`'s
// items are each admitted, as kubectl apply does, under the List's number.
type item struct {
	document int
	object   *unstructured.Unstructured
}

// items are the objects of documents, a List's items in its place.
func items(documents []*unstructured.Unstructured) []item {
	var out []item
	for i, document := range documents {
		if document.IsList() {
			list, err := document.ToList()
			if err == nil {
				for j := range list.Items {
					out = append(out, item{document: i + 1, object: &list.Items[j]})
				}
				continue
			}
		}
		out = append(out, item{document: i + 1, object: document})
	}
	return out
}

// stripComments drops whole-line comments, to tell an empty document.
func stripComments(chunk []byte) []byte {
	var kept [][]byte
	for _, line := range bytes.Split(chunk, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			kept = append(kept, line)
		}
	}
	return bytes.Join(kept, []byte("\n"))
}

func (a *admitter) admitFile(file string) []Verdict {
	read, err := documents(file)
	if err != nil {
		return []Verdict{{File: file, Verdict: "unreadable", Message: err.Error()}}
	}
	objects := items(read)
	verdicts := make([]Verdict, len(objects))
	var created, replaced []*unstructured.Unstructured
	// What admission reads of other objects first, for real. One of the
	// cluster's own (a runtime Trainer ships) gives way to the case's, and
	// comes back after it.
	for i, it := range objects {
		object := it.object
		if real[object.GetKind()] {
			verdicts[i] = a.admit(file, it.document, object, false)
			if verdicts[i].Reason == string(metav1.StatusReasonAlreadyExists) && object.GetKind() != "Namespace" {
				if existing := a.get(object); existing != nil {
					a.remove(existing)
					replaced = append(replaced, existing)
					verdicts[i] = a.admit(file, it.document, object, false)
				}
			}
			if verdicts[i].Verdict == "admitted" {
				created = append(created, object)
			}
		}
	}
	for i, it := range objects {
		if real[it.object.GetKind()] {
			continue
		}
		verdicts[i] = a.admit(file, it.document, it.object, true)
		// A webhook reads runtimes from its informers' cache, which sees
		// a runtime made a moment ago a moment later.
		for try := 0; try < 5 && len(created) > 0 && verdicts[i].Verdict == "refused" &&
			strings.Contains(strings.ToLower(verdicts[i].Message), "not found"); try++ {
			time.Sleep(200 * time.Millisecond)
			verdicts[i] = a.admit(file, it.document, it.object, true)
		}
	}
	for j := len(created) - 1; j >= 0; j-- {
		a.remove(created[j])
	}
	for _, existing := range replaced {
		existing.SetResourceVersion("")
		existing.SetUID("")
		existing.SetManagedFields(nil)
		existing.SetFinalizers(nil)
		if verdict := a.admit(file, 0, existing, false); verdict.Verdict != "admitted" {
			fail("the cluster's %s %s did not come back after %s: %s", existing.GetKind(), existing.GetName(), file, verdict.Message)
		}
	}
	return verdicts
}

// target is where object's kind lives: its resource, in its namespace.
func (a *admitter) target(object *unstructured.Unstructured) dynamic.ResourceInterface {
	gvk := object.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		fail("%s: %v", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return a.client.Resource(mapping.Resource)
	}
	namespace := object.GetNamespace()
	if namespace == "" {
		namespace = "default"
	}
	return a.client.Resource(mapping.Resource).Namespace(namespace)
}

// get is the cluster's object of object's kind and name, nil if none.
func (a *admitter) get(object *unstructured.Unstructured) *unstructured.Unstructured {
	current, err := a.target(object).Get(a.ctx, object.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return current
}

func (a *admitter) admit(file string, document int, object *unstructured.Unstructured, dryRun bool) Verdict {
	verdict := Verdict{File: file, Document: document, Kind: object.GetKind(), Name: object.GetName(), Namespace: object.GetNamespace()}
	gvk := object.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		verdict.Verdict = "refused"
		verdict.Message = "Object 'Kind' or 'apiVersion' is missing"
		return verdict
	}
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		verdict.Verdict = "unchecked"
		verdict.Message = fmt.Sprintf("the server does not serve %s: %v", gvk, err)
		return verdict
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if verdict.Namespace == "" {
			verdict.Namespace = "default"
		}
		if err := a.ensureNamespace(verdict.Namespace); err != nil {
			// The namespace cannot exist: the server refuses the object
			// as it would refuse it there.
			verdict.Verdict = "refused"
			verdict.Message = err.Error()
			verdict.Causes = []Cause{{Field: "metadata.namespace", Type: "FieldValueInvalid", Message: err.Error()}}
			return verdict
		}
	}
	target := a.target(object)
	options := metav1.CreateOptions{FieldValidation: "Strict"}
	if dryRun {
		options.DryRun = []string{metav1.DryRunAll}
	}
	a.warned.take()
	_, err = target.Create(a.ctx, object.DeepCopy(), options)
	verdict.Warnings = a.warned.take()
	if err == nil {
		verdict.Verdict = "admitted"
		return verdict
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		fail("%s document %d: %v", file, document, err)
	}
	s := status.Status()
	verdict.Verdict = "refused"
	verdict.Reason = string(s.Reason)
	verdict.Message = s.Message
	if s.Details != nil {
		for _, cause := range s.Details.Causes {
			verdict.Causes = append(verdict.Causes, Cause{Field: cause.Field, Type: string(cause.Type), Message: cause.Message})
		}
	}
	return verdict
}

func (a *admitter) ensureNamespace(name string) error {
	if a.namespaces[name] {
		return nil
	}
	namespaces := a.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	object := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	_, err := namespaces.Create(a.ctx, object, metav1.CreateOptions{})
	if apierrors.IsInvalid(err) {
		return err
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		fail("the namespace %s: %v", name, err)
	}
	a.namespaces[name] = true
	return nil
}

// remove deletes what a case made for real and waits until it is gone, so
// the next case may make one of the same name. Namespaces stay.
func (a *admitter) remove(object *unstructured.Unstructured) {
	if object.GetKind() == "Namespace" {
		return
	}
	kind := object.GetKind()
	target := a.target(object)
	name := object.GetName()
	if err := target.Delete(a.ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		fail("deleting %s %s: %v", kind, name, err)
	}
	for try := 0; ; try++ {
		current, err := target.Get(a.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if try == 100 {
			fail("%s %s is not gone 10 s after its deletion", kind, name)
		}
		// A finalizer nothing will remove (no TrainJob was made): drop it.
		if err == nil && len(current.GetFinalizers()) > 0 {
			current.SetFinalizers(nil)
			_, _ = target.Update(a.ctx, current, metav1.UpdateOptions{})
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var _ rest.WarningHandler = (*warnings)(nil)
