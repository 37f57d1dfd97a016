package sparkmodel

import "testing"

// TestCostOnly: Only keeps the terms whose spark.cost keys were written,
// each a copy, and is nil when none was (the provider's defaults).
func TestCostOnly(t *testing.T) {
	row, scan := 7.0, 60.0
	c := &Cost{RowNs: &row, ScanKeyNs: &scan}
	got := c.Only(map[string]bool{"rowNs": true, "newKeyNs": true})
	if got == nil || got.RowNs == nil || *got.RowNs != 7 || got.RowNs == c.RowNs {
		t.Fatalf("Only kept %+v, want a copy of rowNs 7", got)
	}
	if got.ScanKeyNs != nil || got.NewKeyNs != nil || got.BatchOverheadMs != nil {
		t.Errorf("Only kept terms not written or not set: %+v", got)
	}
	if c.Only(map[string]bool{"removeKeyNs": true}) != nil || c.Only(nil) != nil {
		t.Error("Only of no written term must be nil")
	}
	for term := range NumTerms {
		var c Costs
		c.Set(term, float64(term)+1)
		if c.Get(term) != float64(term)+1 {
			t.Errorf("%s: Set then Get = %v", term, c.Get(term))
		}
	}
}
