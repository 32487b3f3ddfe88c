// Package fused is a fixture: its product is fused into the addition on
// arm64, so fmacheck must report it.
package fused

// MulAdd is x·y + z with one rounding on arm64.
func MulAdd(x, y, z float64) float64 { return x*y + z }

// Rounded is x·y + z with the product rounded first: never fused.
func Rounded(x, y, z float64) float64 { return float64(x*y) + z }
