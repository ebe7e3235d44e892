package args

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/chaos"
)

func TestParseFaultKinds(t *testing.T) {
	got, err := ParseFaultKinds("cut, 503,cut,expire")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]chaos.FaultKind{chaos.FaultCut, chaos.Fault503, chaos.FaultExpire}, got); diff != "" {
		t.Errorf("ParseFaultKinds mismatch (-want +got):\n%s", diff)
	}
	if _, err := ParseFaultKinds("cut,bogus"); !errors.Is(err, ErrBadOption) {
		t.Errorf("ParseFaultKinds(cut,bogus) = %v; want ErrBadOption", err)
	}
	for _, k := range chaos.FaultKinds() {
		if ks, err := ParseFaultKinds(k.String()); err != nil || len(ks) != 1 || ks[0] != k {
			t.Errorf("ParseFaultKinds(%q) = %v, %v", k, ks, err)
		}
	}
	if ks, err := ParseFaultKinds("all"); err != nil || ks != nil {
		t.Errorf("ParseFaultKinds(all) = %v, %v; want nil, nil", ks, err)
	}
}
