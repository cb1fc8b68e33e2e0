package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestReadersDisagreeWherePlainScalarsAreTyped pins what makes the two readers worth running: the plain scalars
// each reads as something other than a string (so wirespeed's emitter must quote them), and that a quoted one is
// a string to both.
func TestReadersDisagreeWherePlainScalarsAreTyped(t *testing.T) {
	cases := []struct {
		name, yaml, kubectl, yaml12 string
	}{
		{"float to both", "v: 1e3", `{"v":1000}`, `{"v":1000}`},
		{"Go octal to both", "v: 0o7", `{"v":7}`, `{"v":7}`},
		{"YAML 1.1 boolean to kubectl only", "v: y", `{"v":true}`, `{"v":"y"}`},
		{"underscore int to both", "v: 1_000", `{"v":1000}`, `{"v":1000}`},
		{"quoted is a string to both", "v: '1e3'", `{"v":"1e3"}`, `{"v":"1e3"}`},
		{"empty documents skipped", "---\n---\nv: a\n", `{"v":"a"}`, `{"v":"a"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(strings.NewReader(c.yaml), &out); err != nil {
				t.Fatal(err)
			}
			var got map[string][]json.RawMessage
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			for reader, want := range map[string]string{"kubectl": c.kubectl, "yaml12": c.yaml12} {
				if len(got[reader]) != 1 || string(got[reader][0]) != want {
					t.Errorf("%s read %s, want [%s]", reader, got[reader], want)
				}
			}
		})
	}
}

func TestInputPastTheCapIsRefused(t *testing.T) {
	err := run(strings.NewReader(strings.Repeat("a", maxInput+1)), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("got %v, want the size refusal", err)
	}
}
