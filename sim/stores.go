package sim

import (
	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
)

func newMemStore() engines.Store { return memstore.New() }
