package rings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shared vectors (tests/vectors/sizing_rings.json, generated from wirespeed.sizing by `make regen`) are the
// Python's answers; the agent's reading of "enough" must give the same ones.
func TestEnoughMatchesVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "vectors", "sizing_rings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name     string `json:"name"`
			Expected *struct {
				Driver  string `json:"driver"`
				RX      int    `json:"rx"`
				TX      int    `json:"tx"`
				Packets int    `json:"packets_in_stall"`
			} `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range doc.Cases {
		if c.Expected == nil {
			continue
		}
		e := c.Expected
		d, ok := Drivers[strings.TrimSpace(strings.ToLower(e.Driver))]
		def, okDef := DriverDefaults[e.Driver]
		if !ok || !okDef || d.RX == nil {
			t.Fatalf("%s: driver %q has no ring facts in the embedded catalog", c.Name, e.Driver)
		}
		for _, dir := range []struct {
			name      string
			lim       *Limits
			def, want int
		}{{"rx", d.RX, def.RX, e.RX}, {"tx", d.TX, def.TX, e.TX}} {
			if got := Recommended(e.Packets, dir.def, dir.lim, d.Rounding); got != dir.want {
				t.Errorf("%s %s: Recommended(%d packets) = %d, the vectors say %d", c.Name, dir.name, e.Packets, got, dir.want)
			}
			if !Holds(dir.want, e.Packets, dir.lim, d.Rounding) {
				t.Errorf("%s %s: the recommended %d does not hold %d packets", c.Name, dir.name, dir.want, e.Packets)
			}
			if dir.want < dir.def {
				t.Errorf("%s %s: %d is below the driver's default %d", c.Name, dir.name, dir.want, dir.def)
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d vectors checked", checked)
	}
}

// A ring the driver rounds up to one that holds the stall holds it; ENA rounds 1,500 down to 1,024.
func TestHoldsJudgesWhatTheDriverRuns(t *testing.T) {
	mlx5, ena := Drivers["mlx5_core"], Drivers["ena"]
	if !Holds(4097, 8128, mlx5.RX, mlx5.Rounding) || Holds(4096, 8128, mlx5.RX, mlx5.Rounding) {
		t.Fatal("mlx5_core runs 4,097 as 8,192 (holds 8,128) and 4,096 as 4,096 (does not)")
	}
	if Holds(1500, 1100, ena.RX, ena.Rounding) {
		t.Fatal("ena runs 1,500 as 1,024, which does not hold 1,100")
	}
	if got := Recommended(407, DriverDefaults["mlx5_core"].RX, mlx5.RX, mlx5.Rounding); got != 1024 {
		t.Fatalf("mlx5_core at 407 packets: %d, want its default 1,024 (issue 25: never RX 512)", got)
	}
}
