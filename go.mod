module github.com/pog-network/pog

go 1.26.8

require (
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	golang.org/x/sys v0.50.0 // indirect
	lukechampine.com/blake3 v1.4.1 // indirect
)
