package topology

import "testing"

func TestVersionAtLeast(t *testing.T) {
	for _, c := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"4.3.6", 4, 3, true}, {"4.2.9", 4, 3, false}, {"4.10.0", 4, 3, true}, {"5.0.0", 4, 3, true},
		{"3.13.7", 4, 0, false}, {"4", 4, 0, true}, {"4.3-rc.1", 4, 3, true}, {"", 4, 0, false}, {"x.y", 3, 0, false},
	} {
		if got := VersionAtLeast(c.v, c.major, c.minor); got != c.want {
			t.Errorf("VersionAtLeast(%q, %d, %d) = %v", c.v, c.major, c.minor, got)
		}
	}
}

func TestCarriesDeaths(t *testing.T) {
	if !CarriesDeaths("4.0.5") || !CarriesDeaths("4.3.6") || CarriesDeaths("3.13.7") || CarriesDeaths("3.10.8") || CarriesDeaths("") {
		t.Error("CarriesDeaths by version")
	}
}
