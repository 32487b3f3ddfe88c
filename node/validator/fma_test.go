package validator

import (
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// TestNoFusedMultiplyAdd: round records and epoch records (validator.go)
// are compared bit for bit across CPUs by audits; scheduling elsewhere in
// the package may fuse.
func TestNoFusedMultiplyAdd(t *testing.T) {
	fmacheck.Check(t, ".", func(f string) bool { return f == "validator.go" }, "validator.(*Validator).closeEpoch")
}
