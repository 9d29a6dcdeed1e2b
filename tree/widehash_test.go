package tree

import "testing"

// csum's 256-bit digests (sha256, blake3) do not fit a node: LookupHash
// refuses them rather than keep half of each.
func TestLookupHashRefusesWideDigests(t *testing.T) {
	for _, name := range []string{"sha256", "blake3"} {
		if h, err := LookupHash(name); err == nil {
			t.Errorf("LookupHash(%s) = %s with %d-byte nodes, want an error", name, h.Name(), h.Size())
		}
	}
	if _, err := LookupHash("crc64"); err != nil {
		t.Errorf("crc64: %v", err)
	}
}
