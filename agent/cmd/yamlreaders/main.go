// Command yamlreaders reads the YAML documents on stdin as two Go readers do and prints them as JSON, so a test can
// see what each makes of a rendered manifest (tests/cli/test_render_yaml_types.py):
//
//	{"kubectl": [...], "yaml12": [...]}
//
// "kubectl" is what `kubectl apply -f` sends to the API server: k8s.io/apimachinery's YAMLOrJSONDecoder decoding
// each document into a runtime.RawExtension, as kubectl's resource builder does (its StreamVisitor), through
// sigs.k8s.io/yaml, which resolves plain scalars as go-yaml v2 (YAML 1.1, plus Go's number syntax: 1e3, 0o7,
// 1_000). Empty documents are skipped, as kubectl skips them. "yaml12" is go.yaml.in/yaml/v3, a YAML 1.2 reader,
// each document decoded into an empty interface: a non-string key or a timestamp shows in its JSON.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	yaml3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// maxInput bounds what is read from stdin: far past any rendered manifest set, so a runaway pipe cannot fill memory.
const maxInput = 16 << 20

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "yamlreaders:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return err
	}
	if len(data) > maxInput {
		return fmt.Errorf("more than %d bytes on stdin", maxInput)
	}
	kubectl, err := asKubectl(data)
	if err != nil {
		return fmt.Errorf("kubectl: %w", err)
	}
	yaml12, err := asYAML12(data)
	if err != nil {
		return fmt.Errorf("yaml12: %w", err)
	}
	return json.NewEncoder(out).Encode(map[string][]json.RawMessage{"kubectl": kubectl, "yaml12": yaml12})
}

func asKubectl(data []byte) ([]json.RawMessage, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	docs := []json.RawMessage{}
	for {
		var ext runtime.RawExtension
		if err := decoder.Decode(&ext); errors.Is(err, io.EOF) {
			return docs, nil
		} else if err != nil {
			return nil, err
		}
		ext.Raw = bytes.TrimSpace(ext.Raw)
		if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
			continue
		}
		docs = append(docs, json.RawMessage(ext.Raw))
	}
}

func asYAML12(data []byte) ([]json.RawMessage, error) {
	decoder := yaml3.NewDecoder(bytes.NewReader(data))
	docs := []json.RawMessage{}
	for {
		var doc interface{}
		if err := decoder.Decode(&doc); errors.Is(err, io.EOF) {
			return docs, nil
		} else if err != nil {
			return nil, err
		}
		if doc == nil {
			continue
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		docs = append(docs, raw)
	}
}
