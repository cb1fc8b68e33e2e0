package profile

import (
	"encoding/json"
	"fmt"
)

// Probe is the continuous probe's section: present, the agent runs the probe (as with --probe); each field is
// the default of its --probe-* flag (wirespeed.profile.Probe).
type Probe struct {
	Port    int `json:"port"`
	Peers   int `json:"peers"`
	Streams int `json:"streams"`
}

// rawProbe decodes the section before its defaults are filled.
type rawProbe struct {
	Port    *int `json:"port"`
	Peers   *int `json:"peers"`
	Streams *int `json:"streams"`
}

func (r *rawProbe) withDefaults() *Probe {
	if r == nil {
		return nil
	}
	p := ProbeDefaults
	for _, f := range []struct {
		from *int
		to   *int
	}{{r.Port, &p.Port}, {r.Peers, &p.Peers}, {r.Streams, &p.Streams}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return &p
}

// ProbeDefaults and ProbeMaxima are the section's defaults and maxima, read from the embedded schema's
// "default" and "maximum" keywords, which the Python model generates.
var ProbeDefaults, ProbeMaxima = readProbeBounds(schemaJSON)

// readProbeBounds panics only if the embedded schema (a build input, covered by tests) lacks them.
func readProbeBounds(schema []byte) (defaults, maxima Probe) {
	type bound struct {
		Default *int `json:"default"`
		Maximum *int `json:"maximum"`
	}
	var doc struct {
		Defs struct {
			Probe struct {
				Properties struct {
					Port    bound `json:"port"`
					Peers   bound `json:"peers"`
					Streams bound `json:"streams"`
				} `json:"properties"`
			} `json:"Probe"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	p := doc.Defs.Probe.Properties
	for _, b := range []bound{p.Port, p.Peers, p.Streams} {
		if b.Default == nil || b.Maximum == nil {
			panic("embedded profile schema: Probe port/peers/streams carry no default or maximum")
		}
	}
	return Probe{Port: *p.Port.Default, Peers: *p.Peers.Default, Streams: *p.Streams.Default},
		Probe{Port: *p.Port.Maximum, Peers: *p.Peers.Maximum, Streams: *p.Streams.Maximum}
}
