package links_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
)

// TestGlobVectors holds the agent to tests/vectors/interface_globs.json, the answers the boot script's sh `case`
// patterns give too (tests/userdata/test_userdata_globs.py): one profile glob, one meaning on every tuning path.
func TestGlobVectors(t *testing.T) {
	data, err := os.ReadFile("../../../tests/vectors/interface_globs.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct {
		Cases []struct {
			Glob  string `json:"glob"`
			Name  string `json:"name"`
			Match bool   `json:"match"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range vectors.Cases {
		excluded := links.NameExcluded(profile.Selector{Include: []string{c.Glob}}, c.Name)
		if excluded == c.Match {
			t.Errorf("include %q, link %q: matched %v, want %v", c.Glob, c.Name, !excluded, c.Match)
		}
	}
}
