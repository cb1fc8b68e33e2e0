package profile

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// sysctlMaxima are the embedded schema's upper bounds per sysctl (the Python model generates them; where AKS
// accepts the sysctl, the bound is AKS's, wirespeed.sizing.aks_sysctls), so advice that quotes a limit quotes the
// one the profile is validated against instead of a copy typed into the advice.
var sysctlMaxima = readSysctlMaxima(schemaJSON)

// readSysctlMaxima panics only if the embedded schema (a build input, covered by tests) is malformed.
func readSysctlMaxima(schema []byte) map[string]int {
	var doc struct {
		Defs struct {
			Sysctls struct {
				Properties map[string]struct {
					AnyOf []struct {
						Maximum *int `json:"maximum"`
					} `json:"anyOf"`
				} `json:"properties"`
			} `json:"Sysctls"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	out := map[string]int{}
	for name, prop := range doc.Defs.Sysctls.Properties {
		for _, alt := range prop.AnyOf {
			if alt.Maximum != nil {
				out[name] = *alt.Maximum
			}
		}
	}
	return out
}

// SysctlMaximum is the largest value a profile may set for the sysctl, and whether the schema bounds it.
func SysctlMaximum(name string) (int, bool) {
	n, ok := sysctlMaxima[name]
	return n, ok
}

// Thousands writes n with comma thousands separators (3,240,000), as the Python side's {:,} does.
func Thousands(n int) string { return groupThousands(strconv.Itoa(n)) }
