package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

const repoRoot = "../../.."

// The Go copy of the schema must be the Python package's file, byte for byte: one contract, two readers.
func TestEmbeddedSchemaMatchesPythonPackage(t *testing.T) {
	want, err := os.ReadFile(repoRoot + "/components/wirespeed/data/profile.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(schemaJSON, want) {
		t.Fatal("agent/internal/profile/profile.schema.json differs from components/wirespeed/data/profile.schema.json: " +
			"copy the regenerated schema here")
	}
}

type vectors struct {
	Valid []struct {
		Name    string          `json:"name"`
		Profile json.RawMessage `json:"profile"`
		SameAs  json.RawMessage `json:"same_as"` // optional: a document that must parse to the same profile
	} `json:"valid"`
	Invalid []struct {
		Name    string          `json:"name"`
		Profile json.RawMessage `json:"profile"`
		Errors  []struct {
			At      string `json:"at"`
			Message string `json:"message"`
		} `json:"errors"`
	} `json:"invalid"`
}

func loadVectors(t testing.TB) vectors {
	data, err := os.ReadFile(repoRoot + "/tests/vectors/profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSharedVectors(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.Valid {
		t.Run("valid/"+c.Name, func(t *testing.T) {
			p, err := Parse(c.Profile)
			if err != nil {
				t.Fatalf("rejected a valid profile: %v", err)
			}
			if c.SameAs == nil {
				return
			}
			q, err := Parse(c.SameAs)
			if err != nil {
				t.Fatalf("rejected same_as: %v", err)
			}
			if !reflect.DeepEqual(p, q) {
				t.Fatalf("parsed to\n%+v\nnot the same as same_as's\n%+v", p, q)
			}
		})
	}
	for _, c := range v.Invalid {
		t.Run("invalid/"+c.Name, func(t *testing.T) {
			_, err := Parse(c.Profile)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("accepted an invalid profile (err=%v)", err)
			}
			// Exactly these problems, pointer and message, as Python reports them (order aside).
			var got, want []string
			for _, p := range pe.Problems {
				got = append(got, p.Pointer+": "+p.Message)
			}
			for _, e := range c.Errors {
				want = append(want, e.At+": "+e.Message)
			}
			slices.Sort(got)
			slices.Sort(want)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("problems\n got %q\nwant %q", got, want)
			}
		})
	}
}

// Raw documents (a ConfigMap's profile.json as text): JSON that is not an object is refused in the shared words,
// text that is not JSON (NaN, a bare name, a cut-off document) with the shared prefix and the parser's own words.
func TestSharedTextVectors(t *testing.T) {
	data, err := os.ReadFile(repoRoot + "/tests/vectors/profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		InvalidText []struct {
			Name   string `json:"name"`
			Text   string `json:"text"`
			Errors []struct {
				At            string `json:"at"`
				Message       string `json:"message"`
				MessagePrefix string `json:"message_prefix"`
			} `json:"errors"`
		} `json:"invalid_text"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.InvalidText) == 0 {
		t.Fatal("no invalid_text vectors")
	}
	for _, c := range v.InvalidText {
		t.Run("invalid_text/"+c.Name, func(t *testing.T) {
			_, err := Parse([]byte(c.Text))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("accepted %q (err=%v)", c.Text, err)
			}
			if len(pe.Problems) != len(c.Errors) {
				t.Fatalf("problems %+v, want %+v", pe.Problems, c.Errors)
			}
			for i, want := range c.Errors {
				got := pe.Problems[i]
				at := got.Pointer
				if at == "" {
					at = "/"
				}
				ok := at == want.At && (want.Message == "" || got.Message == want.Message) &&
					strings.HasPrefix(got.Message, want.MessagePrefix)
				if !ok {
					t.Fatalf("problem %q: %q, want %q: %q%q", at, got.Message, want.At, want.MessagePrefix, want.Message)
				}
			}
		})
	}
}

// The vectors hold the shared messages; these are the Go-only paths around them (the document is not
// JSON, the Error's one-line form the agent logs).
func TestErrorText(t *testing.T) {
	cases := []struct {
		name    string
		profile string
		want    string
	}{
		{"every problem on one line", `{"rings":{"mlx5_core":{"rx":65537}},"mtu":{"value":9217}}`,
			"invalid profile document: /mtu/value: 9217 is not allowed: must be between 1,280 and 9,216; " +
				"/name: is required; /rings/mlx5_core/rx: 65537 is not allowed: must be between 64 and 65,536"},
		{"not json", `{"name":`, "invalid profile document: /: not valid JSON: unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.profile))
			if err == nil || err.Error() != c.want {
				t.Fatalf("error\n %v\nwant\n %s", err, c.want)
			}
		})
	}
}

func TestDecodeFillsDefaultsAndIntegralFloats(t *testing.T) {
	p, err := Parse([]byte(`{"name":"floats","rings":{"ena":{"rx":8192.0,"tx":null}},
		"sysctls":{"net.core.netdev_max_backlog":32768.0,"net.core.netdev_budget":null},"mtu":{"value":9000.0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := *p.Rings["ena"].RX; got != 8192 {
		t.Errorf("rx = %d, want 8192", got)
	}
	if p.Rings["ena"].TX != nil {
		t.Errorf("tx = %d, want unset", *p.Rings["ena"].TX)
	}
	if want := map[string]int64{"net.core.netdev_max_backlog": 32768}; !reflect.DeepEqual(p.Sysctls, want) {
		t.Errorf("sysctls = %v, want %v", p.Sysctls, want)
	}
	if p.MTU == nil || p.MTU.Value != 9000 {
		t.Errorf("mtu = %+v, want 9000", p.MTU)
	}
	if !reflect.DeepEqual(p.Interfaces.Roles, DefaultRoles) || !reflect.DeepEqual(p.Interfaces.Exclude, DefaultExclude) {
		t.Errorf("selector defaults not filled: %+v", p.Interfaces)
	}
	if p.SchemaVersion != 1 {
		t.Errorf("schema_version = %d, want 1", p.SchemaVersion)
	}
}

// The selector defaults are generated into the Python package's schema file from wirespeed.profile (whose
// test proves that file is current); the Go defaults must say the same. Read from that file, not from the
// embedded copy, so this holds even if the byte-identity test were skipped.
func TestDefaultsMatchPython(t *testing.T) {
	schema, err := os.ReadFile(repoRoot + "/components/wirespeed/data/profile.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	roles, exclude := selectorDefaults(schema)
	py := Selector{Roles: roles, Exclude: exclude}
	p, err := Parse([]byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Interfaces.Roles, py.Roles) || !reflect.DeepEqual(p.Interfaces.Exclude, py.Exclude) ||
		len(p.Interfaces.Drivers) != 0 || len(p.Interfaces.Include) != 0 {
		t.Fatalf("Go selector defaults %+v differ from Python's %+v", p.Interfaces, py)
	}
	if !slices.Contains(p.Interfaces.Exclude, "veth*") {
		t.Fatalf("default exclude %v does not skip pod veths", p.Interfaces.Exclude)
	}
}

func TestLoad(t *testing.T) {
	path := t.TempDir() + "/p.json"
	if err := os.WriteFile(path, []byte(`{"name":"x","rings":{"ena":{"rx":0}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "/rings/ena/rx") {
		t.Fatalf("error %v should name the file and the field", err)
	}
	if _, err := Load(path + ".missing"); err == nil {
		t.Fatal("missing file accepted")
	}
}

// FuzzParse: the parser never panics, and whatever it accepts survives a re-encode and re-parse unchanged.
func FuzzParse(f *testing.F) {
	v := loadVectors(f)
	for _, c := range v.Valid {
		f.Add([]byte(c.Profile))
	}
	for _, c := range v.Invalid {
		f.Add([]byte(c.Profile))
	}
	f.Add([]byte(`{"name":"x","sysctls":{"net.core.netdev_max_backlog":3.2768e4}}`))
	// CI's fuzzing found this one: an empty MTU driver list came back absent after a re-encode.
	f.Add([]byte(`{"name":"000","mtu":{"value":9000,"drivers":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		q, err := Parse(again)
		if err != nil {
			t.Fatalf("re-encoded profile %s rejected: %v", again, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v", p, q)
		}
	})
}

// jsonschema v6.0.3 hands propertyNames errors a location slice it keeps mutating; with several sibling
// fields the reported pointer used to land on whichever field was visited last.
func TestPropertyNamesLocationIsStable(t *testing.T) {
	doc := []byte(`{"name":"x","description":"d","rings":{},"sysctls":{"kernel.pid_max":4194304}}`)
	for i := 0; i < 200; i++ {
		_, err := Parse(doc)
		var pe *Error
		if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].Pointer != "/sysctls/kernel.pid_max" {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}

// snat_limits.json is generated into the Python package; the agent's copy must be that file, byte for byte.
func TestEmbeddedSNATLimitsMatchPythonPackage(t *testing.T) {
	want, err := os.ReadFile(repoRoot + "/components/wirespeed/data/snat_limits.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snatLimitsJSON, want) {
		t.Fatal("agent/internal/profile/snat_limits.json differs from components/wirespeed/data/snat_limits.json: run `make regen`")
	}
}

func TestOutboundDecodesWithDefaultsAndCapacity(t *testing.T) {
	cases := []struct {
		doc        string
		capacity   int
		udpOnePool bool
	}{
		{`{"kind":"azure-load-balancer","allocated_ports_per_node":4096.0}`, 4096, true},
		{`{"kind":"azure-nat-gateway","public_ips":2}`, 100_000, false},
		{`{"kind":"aws-nat-gateway","public_ips":3,"pressure_percent":90,"hold_seconds":0,"exclude_cidrs":["10.244.0.0/16"]}`, 165_000, false},
	}
	for _, c := range cases {
		p, err := Parse([]byte(`{"name":"o","outbound":` + c.doc + `}`))
		if err != nil {
			t.Fatal(err)
		}
		o := p.Outbound
		if o.Capacity() != c.capacity || o.UDPOnePool() != c.udpOnePool {
			t.Errorf("%s: capacity %d, udp one pool %v; want %d, %v", c.doc, o.Capacity(), o.UDPOnePool(), c.capacity, c.udpOnePool)
		}
	}
	p, err := Parse([]byte(`{"name":"o","outbound":{"kind":"azure-nat-gateway","public_ips":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	// The defaults come from the schema the Python model generates (wirespeed.sizing.snat_limits).
	want := &Outbound{Kind: KindAzureNATGateway, PublicIPs: p.Outbound.PublicIPs, PressurePercent: 80, HoldSeconds: 240, ExcludeCIDRs: []string{}}
	if !reflect.DeepEqual(p.Outbound, want) || *p.Outbound.PublicIPs != 1 {
		t.Fatalf("outbound = %+v, want %+v", p.Outbound, want)
	}
	if p, err := Parse([]byte(`{"name":"o","outbound":null}`)); err != nil || p.Outbound != nil {
		t.Fatalf("null outbound: %+v, %v", p, err)
	}
}

func TestEditDistanceAgreesWithPython(t *testing.T) {
	// The same cases as tests/profiles/test_profile.py: both languages must suggest the same sysctl for the same typo.
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"backlog", "backlgo", 2}, {"é", "e", 1}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for typed, want := range map[string]string{
		"net.core.netdev_max_backlgo": "net.core.netdev_max_backlog",
		"net.core.xmem_max":           "net.core.rmem_max",
		"net.ipv4.ip_forward":         "",
		"kernel.pid_max":              "",
	} {
		if got := nearestSysctl(typed); got != want {
			t.Errorf("nearestSysctl(%q) = %q, want %q", typed, got, want)
		}
	}
	if len(KnownSysctls) != 32 || !sort.StringsAreSorted(KnownSysctls) {
		t.Errorf("KnownSysctls = %v, want the schema's 32 names, sorted", KnownSysctls)
	}
}
