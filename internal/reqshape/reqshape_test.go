package reqshape

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestShape_RedactedParamHeader: an Mcp-Param-* header the recorder
// stored as a placeholder (its name looks like a credential) matches any
// live value; other Mcp-Param-* values still count.
func TestShape_RedactedParamHeader(t *testing.T) {
	rec := Of("POST", "/mcp", http.Header{"Mcp-Param-Api-Key": {"REDACTED-0123456789ab"}, "Mcp-Param-Region": {"eu"}})
	tests := []struct {
		region string
		want   bool
	}{{"eu", true}, {"us", false}}
	for _, tt := range tests {
		live := Of("POST", "/mcp", http.Header{"Mcp-Param-Api-Key": {"real-key"}, "Mcp-Param-Region": {tt.region}})
		if got := rec.Same(live); got != tt.want {
			t.Errorf("recorded %v same as live %v = %v; want %v", rec, live, got, tt.want)
		}
	}
}

// TestInfo_StoredForm: a shape's info row keeps the form cassettes
// already hold in their replay index (the index is not rebuilt for it),
// and decodes back.
func TestInfo_StoredForm(t *testing.T) {
	sh := Of("POST", "/mcp", http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
		"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}, "Origin": {"http://localhost:3000"}, "Host": {"127.0.0.1:8080"}, "Authorization": {"Bearer x"}})
	const want = `{"Method":"POST","Path":"/mcp","Version":"","McpMethod":"tools/call","McpName":"echo","Params":"","AcceptJSON":true,"AcceptEv":true,"ContentType":"application/json","Origin":"local","Host":"local","Credentials":true,"Refused":true}`
	if got := Info(sh, true); got != want {
		t.Errorf("Info = %s\nwant  %s", got, want)
	}
	back, refused, err := DecodeInfo(want)
	if err != nil || back != sh || !refused {
		t.Errorf("DecodeInfo = %v, %v, %v; want %v, true", back, refused, err, sh)
	}
}

// TestDoor_Encode: a door's row key decodes back to what it compares,
// and one recorded without Host stands for both live Hosts.
func TestDoor_Encode(t *testing.T) {
	h := http.Header{}
	h.Set("Mcp-Session-Id", "s")
	h.Set("Last-Event-ID", "7")
	d := DoorOf("GET", h, Of("GET", "/mcp", http.Header{"Origin": {"https://evil.example"}}))
	if d.Encode() != "GET true true true false false true" {
		t.Errorf("Encode = %q", d.Encode())
	}
	back, err := DecodeDoor(d.Encode())
	if err != nil || back != d {
		t.Errorf("DecodeDoor = %+v, %v; want %+v", back, err, d)
	}
	if ks := d.Keys(); len(ks) != 2 || ks[0].ForeignHost == ks[1].ForeignHost {
		t.Errorf("Keys of a door without Host = %v; want both Hosts", ks)
	}
	if _, err := DecodeDoor("GET true"); err == nil {
		t.Error("DecodeDoor took a short key")
	}
	live := LiveDoor(httptest.NewRequest("POST", "http://127.0.0.1/mcp", nil))
	if got := d.Differences(live); len(got) != 4 {
		t.Errorf("Differences = %q; want method, Mcp-Session-Id, Last-Event-ID and foreign Origin", got)
	}
}
