// Package profile loads the tuning profile the agent applies. The profile's JSON Schema is shared with the
// Python library (components/wirespeed/data/profile.schema.json, embedded here byte for byte); validating
// against it before decoding means Go and Python accept and reject the same documents, with the same
// pointers and messages (tests/vectors/profiles.json), and nothing is applied from a profile that is only
// partly valid. This file is the model and its decoding; messages.go words every refusal, outbound.go holds the
// outbound section's rules.
package profile

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wirespeed-io/wirespeed/agent/internal/boundedfile"
)

//go:embed profile.schema.json
var schemaJSON []byte

const schemaURL = "https://wirespeed.io/schemas/profile-v1.json"

// Roles a link can have; see links.Classify.
const (
	RoleSRIOVVF = "sriov-vf"
	RolePrimary = "primary"
	RoleVirtual = "virtual"
)

// DefaultRoles and DefaultExclude are the selector's defaults, read from the embedded schema's "default"
// keywords, which the Python model generates: one source for both languages.
var DefaultRoles, DefaultExclude = selectorDefaults(schemaJSON)

// selectorDefaults panics only if the embedded schema (a build input, covered by tests) lacks them.
func selectorDefaults(schema []byte) (roles, exclude []string) {
	type withDefault struct {
		Default []string `json:"default"`
	}
	var doc struct {
		Defs struct {
			Selector struct {
				Properties struct {
					Roles   withDefault `json:"roles"`
					Exclude withDefault `json:"exclude"`
				} `json:"properties"`
			} `json:"InterfaceSelector"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	props := doc.Defs.Selector.Properties
	if len(props.Roles.Default) == 0 || props.Exclude.Default == nil {
		panic("embedded profile schema: InterfaceSelector roles/exclude carry no default")
	}
	return props.Roles.Default, props.Exclude.Default
}

// Profile is a validated tuning profile with defaults filled in.
type Profile struct {
	SchemaVersion int                 `json:"schema_version"`
	Name          string              `json:"name"`
	Description   string              `json:"description,omitempty"`
	Interfaces    Selector            `json:"interfaces"`
	Rings         map[string]RingSize `json:"rings,omitempty"`
	Sysctls       map[string]int64    `json:"sysctls,omitempty"`
	MTU           *MTU                `json:"mtu,omitempty"`
	Outbound      *Outbound           `json:"outbound,omitempty"`
	Probe         *Probe              `json:"probe,omitempty"`
}

// Selector picks the links the agent tunes (see links.Select).
type Selector struct {
	Roles   []string `json:"roles"`
	Drivers []string `json:"drivers"`
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// RingSize is the desired descriptor count per direction; nil leaves that direction alone.
type RingSize struct {
	RX *int `json:"rx,omitempty"`
	TX *int `json:"tx,omitempty"`
}

// MTU is the opt-in MTU; Drivers empty means every selected link.
type MTU struct {
	Value   int      `json:"value"`
	Drivers []string `json:"drivers,omitempty"`
}

// Outbound says how the node's pool egresses and what its SNAT was sized with (outbound.go).
type Outbound struct {
	Kind string `json:"kind"`
	// AllocatedPortsPerNode is set for azure-load-balancer only, PublicIPs for the NAT gateway kinds only.
	AllocatedPortsPerNode *int     `json:"allocated_ports_per_node,omitempty"`
	PublicIPs             *int     `json:"public_ips,omitempty"`
	PressurePercent       int      `json:"pressure_percent"`
	ExcludeCIDRs          []string `json:"exclude_cidrs"`
	HoldSeconds           int      `json:"hold_seconds"`
	// TCPHoldSeconds and UDPHoldSeconds, when set, replace HoldSeconds for their protocol (TCPHold, UDPHold).
	TCPHoldSeconds *int `json:"tcp_hold_seconds,omitempty"`
	UDPHoldSeconds *int `json:"udp_hold_seconds,omitempty"`
}

var (
	compiler, schema = mustCompile()
	compilerMu       sync.Mutex
)

// mustCompile panics only if the embedded schema (a build input, covered by tests) is broken.
func mustCompile() (*jsonschema.Compiler, *jsonschema.Schema) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	c := jsonschema.NewCompiler()
	c.RegisterFormat(&jsonschema.Format{Name: cidrFormat, Validate: validCIDR})
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	return c, s
}

// MaxFileBytes caps a profile file (wirespeed's choice, as on the Python side's io_limits.SMALL_LIMIT): real
// profiles are a few KiB, so this never bites one, but /dev/zero or a runaway file cannot fill memory.
const MaxFileBytes = 1 << 20

// Load reads and parses a profile file: a regular file of at most MaxFileBytes.
func Load(path string) (*Profile, error) {
	data, err := boundedfile.Read(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	return parse(data, path)
}

// Parse validates data against the profile schema and decodes it.
func Parse(data []byte) (*Profile, error) { return parse(data, "document") }

func parse(data []byte, source string) (*Profile, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, &Error{Source: source, Problems: []Problem{{Message: fmt.Sprintf("not valid JSON: %v", err)}}}
	}
	if err := schema.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, fmt.Errorf("validate profile %s: %w", source, err)
		}
		return nil, &Error{Source: source, Problems: problems(ve, doc)}
	}
	// Pulumi renders every number as a float (32768.0); the schema already proved each is integral.
	normalised, err := json.Marshal(integral(doc))
	if err != nil {
		return nil, fmt.Errorf("re-encode profile %s: %w", source, err)
	}
	p := &Profile{}
	dec := json.NewDecoder(bytes.NewReader(normalised))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw{p}); err != nil {
		return nil, &Error{Source: source, Problems: []Problem{{Message: err.Error()}}}
	}
	p.fillDefaults()
	return p, nil
}

// raw decodes sysctls whose value is null (allowed by the schema: "leave it alone") by dropping them.
type raw struct{ p *Profile }

func (r *raw) UnmarshalJSON(b []byte) error {
	var in struct {
		// A note for readers (the built-in profiles say which command generated them): the schema has
		// checked it is a string; it is dropped here, as the Python library drops it.
		Comment       *string `json:"$comment"`
		SchemaVersion *int    `json:"schema_version"`
		Name          string  `json:"name"`
		Description   string  `json:"description"`
		Interfaces    *struct {
			Roles   *[]string `json:"roles"`
			Drivers []string  `json:"drivers"`
			Include []string  `json:"include"`
			Exclude *[]string `json:"exclude"`
		} `json:"interfaces"`
		Rings    map[string]RingSize `json:"rings"`
		Sysctls  map[string]*int64   `json:"sysctls"`
		MTU      *MTU                `json:"mtu"`
		Outbound *rawOutbound        `json:"outbound"`
		Probe    *rawProbe           `json:"probe"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return err
	}
	p := r.p
	p.SchemaVersion = 1
	if in.SchemaVersion != nil {
		p.SchemaVersion = *in.SchemaVersion
	}
	p.Name, p.Description, p.MTU = in.Name, in.Description, in.MTU
	if p.MTU != nil && len(p.MTU.Drivers) == 0 {
		// "drivers": [] means every link, as an absent list does; one form, so a re-encode (omitempty) reads back the same.
		p.MTU.Drivers = nil
	}
	p.Outbound = in.Outbound.withDefaults()
	p.Probe = in.Probe.withDefaults()
	if in.Interfaces != nil {
		if in.Interfaces.Roles != nil {
			p.Interfaces.Roles = *in.Interfaces.Roles
		}
		p.Interfaces.Drivers = in.Interfaces.Drivers
		p.Interfaces.Include = in.Interfaces.Include
		if in.Interfaces.Exclude != nil {
			p.Interfaces.Exclude = append([]string{}, *in.Interfaces.Exclude...)
		}
	}
	for driver, rs := range in.Rings {
		if rs.RX == nil && rs.TX == nil {
			continue
		}
		if p.Rings == nil {
			p.Rings = map[string]RingSize{}
		}
		p.Rings[driver] = rs
	}
	for name, v := range in.Sysctls {
		if v == nil {
			continue
		}
		if p.Sysctls == nil {
			p.Sysctls = map[string]int64{}
		}
		p.Sysctls[name] = *v
	}
	return nil
}

func (p *Profile) fillDefaults() {
	if p.Interfaces.Roles == nil {
		p.Interfaces.Roles = append([]string{}, DefaultRoles...)
	}
	if p.Interfaces.Exclude == nil {
		p.Interfaces.Exclude = append([]string{}, DefaultExclude...)
	}
	if p.Interfaces.Drivers == nil {
		p.Interfaces.Drivers = []string{}
	}
	if p.Interfaces.Include == nil {
		p.Interfaces.Include = []string{}
	}
}

// SysctlNames returns the profile's sysctls in a stable order.
func (p *Profile) SysctlNames() []string {
	names := make([]string, 0, len(p.Sysctls))
	for n := range p.Sysctls {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// integral rewrites integral json.Numbers ("32768.0", "3.2768e4") as plain integers.
func integral(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = integral(e)
		}
	case []any:
		for i, e := range t {
			t[i] = integral(e)
		}
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(t)); ok && r.IsInt() && r.Num().IsInt64() {
			return json.Number(strconv.FormatInt(r.Num().Int64(), 10))
		}
	}
	return v
}
