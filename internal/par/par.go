// Package par runs independent iterations of a loop on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For runs f(0..n-1) on up to GOMAXPROCS goroutines and returns when all
// are done; f must write only its own slot of any shared result.
func For(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(n, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
